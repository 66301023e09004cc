"""How answers decline, in the phrasings chat models use: read by the failure causes and the offline judge.

deepeval and Bedrock ask an LLM whether an answer refuses; these are the common English forms, so the
causes of a failed case (no judge call) and the offline judge's `refusal` verdict read refusals alike.
A phrase counts at the start of a sentence or clause only: 'Paris is the capital; sorry for the delay.'
does not decline. Hedges ('I'm not sure, but ...') are not refusals: they go on to answer.
"""

from __future__ import annotations

import re

# What may come before the declining words: 'Sorry, but I can't ...', 'As an AI model, I cannot ...'.
_LEAD = (
    r"^\W*(?:(?:sorry|unfortunately|regrettably|however|i apologi[sz]e|my apologies|i'm afraid|i am afraid"
    r"|as an ai(?: language model| assistant| model)?)\b[\s,.!:;-]*(?:but\s+)?)*"
)
_NOT = r"(?:do not|don't|cannot|can't|can not|could not|couldn't|will not|won't|would not|wouldn't)"
_DECLINE = re.compile(
    _LEAD
    + "(?:"
    + "|".join(
        (
            r"i(?:'m| am) (?:sorry|afraid|unable|not able|not allowed|not permitted|not in a position)",
            rf"i {_NOT} (?:know|find|answer|help|assist|say|tell|provide|give|share|determine|comply"
            r"|fulfil|fulfill|do|support|discuss|respond|engage|create|write|generate)",
            r"i (?:must|have to|need to) (?:decline|refuse)",
            r"(?:i have no|there is no|there's no) (?:information|data|mention)",
            r"(?:the )?(?:provided |given |retrieved )?(?:context|documents?|passages?|sources?) "
            r"(?:do(?:es)? not|don't|doesn't) (?:contain|mention|say|provide|include|specify|state)",
            r"(?:that|this)(?:'s| is) (?:not something i can|beyond (?:my|what i)|outside (?:my|the) scope)",
        )
    )
    + r")",
    re.IGNORECASE,
)
# An alternative offered instead of the answer: Bedrock counts "rejects the request by providing reasons
# and suggesting an alternative" as a refusal, so these clauses do not make a refusal an answer.
_OFFER = re.compile(
    r"^\W*(?:(?:but|however|instead)\W+)*(?:if you(?:'d| would)? like|if you want|would you like|feel free to"
    r"|i can (?:instead |however |also )?(?:help|tell|explain|offer|suggest|provide|answer)"
    r"|i(?:'d| would) be (?:happy|glad) to"
    r"|you (?:may|might|could|can|should) (?:want to |wish to )?(?:contact|ask|consult|try|check|reach|call"
    r"|visit|refer|look)"
    r"|please (?:contact|consult|ask|refer|check|reach|call|visit|see))",
    re.IGNORECASE,
)


def declines(sentence: str) -> bool:
    """The sentence (or clause) declines to answer or says it cannot: 'I'm sorry, I can't help with that.'"""
    return bool(_DECLINE.search(sentence.strip()))


def offers_instead(sentence: str) -> bool:
    """The sentence offers an alternative in place of the answer: 'You may want to contact support.'"""
    return bool(_OFFER.search(sentence.strip()))


def is_refusal(answer: str) -> bool:
    """The answer declines, or says it cannot find the answer (in its first sentence)."""
    return declines(answer.strip()[:300])
