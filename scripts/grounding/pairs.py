"""Training pairs (premise, hypothesis, label) from the labelled sets and the contrastive ones.

The premise is built by `evaluators.offline.premise` exactly as at run time. Two contrastive kinds
are made here, so that style gives nothing away and only reading the context decides:
- evidence removed: a supported claim against its own context without the sentences that state it
  (same claim, same topic, same document: `unsupported`);
- synthetic rewrites (`scripts.offline_synthetic`): passage sentences of HaluEval's Wikipedia
  paragraphs, knowledge triples and news articles, copied, paraphrased (supported) or changed by
  one number, date, unit, name, negation, antonym or added clause (contradicted / unsupported).
"""

from __future__ import annotations

import random
from collections.abc import Iterable
from dataclasses import dataclass

from evaluators.offline.idf import IdfTable, default_idf
from evaluators.offline.premise import context_sentences, hypothesis, premise, rank, share
from evaluators.offline.sentences import sentences
from scripts.grounding.sources import Example

EVIDENCE_TOP = 0.6  # the best sentence holds this share of the claim's weighted stems: it states it
EVIDENCE_REST = 0.45  # ... and no sentence left holds this much: removing the best ones removes it
MIN_SENTENCES = 4


@dataclass(frozen=True, slots=True)
class Pair:
    premise: str
    hypothesis: str
    label: str  # supported | unsupported | contradicted | not_supported
    group: str
    source: str
    item: str
    kind: str = "labelled"


def pairs_of(examples: Iterable[Example], *, evidence_removed: float = 0.0, seed: int = 0) -> list[Pair]:
    """Claim-level pairs. A whole answer of one or two sentences is one hypothesis; a longer one
    contributes its sentences when it is supported (where its error sits is unknown otherwise)."""
    rng = random.Random(seed)
    idf = default_idf()
    out: list[Pair] = []
    for ex in examples:
        claims = [ex.claim]
        if ex.answer_level:
            parts = sentences(ex.claim)
            if len(parts) > 2:
                if ex.label != "supported":
                    continue
                claims = list(parts)
        for claim in claims:
            built = premise(claim, ex.passages, idf=idf)
            if not built.text:
                continue
            h = hypothesis(claim, ex.question)
            out.append(Pair(built.text, h, ex.label, ex.group, ex.source, ex.item))
            if ex.label == "supported" and evidence_removed and rng.random() < evidence_removed:
                removed = _without_evidence(claim, ex.passages, idf)
                if removed:
                    out.append(
                        Pair(removed, h, "unsupported", ex.group, ex.source, ex.item, "evidence_removed")
                    )
    return out


def _without_evidence(claim: str, passages: tuple[str, ...], idf: IdfTable) -> str:
    """The claim's premise once the sentences that state it are gone ('' when they cannot be told)."""
    every = context_sentences(tuple(passages))
    if len(every) < MIN_SENTENCES:
        return ""
    ranked = rank(claim, every, idf)
    if share(claim, ranked[0], idf) < EVIDENCE_TOP:
        return ""
    drop = {s.position for s in ranked if share(claim, s, idf) >= EVIDENCE_REST}
    if len(drop) > len(every) // 2:
        return ""
    return premise(claim, passages, idf=idf, exclude=frozenset(drop)).text


def synthetic_examples(limit: int, seed: int = 7) -> list[Example]:
    """Contrastive rewrites of HaluEval passages, as examples of group `synthetic` (abstentions
    aside: the judge reads those apart)."""
    from scripts.offline_synthetic import synthetic_set

    out = []
    for a in synthetic_set(limit, seed):
        if a.kind.startswith("abstention"):
            continue
        label = "supported" if a.label else ("contradicted" if a.contradicted else "unsupported")
        out.append(Example(f"synthetic_{a.source}", "synthetic", (a.context,), a.answer, label, a.question,
                           item=a.document))  # fmt: skip
    return out
