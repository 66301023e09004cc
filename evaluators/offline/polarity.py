"""Whether a claim and a sentence say opposite things beyond their words: an antonym said of the claim's
subject in a sentence other than the best window, another value of a kind the claim gives one of, a
negation that denies something the other side does not speak of, and a negation the other side says in
other words or denies as well. Read by `features.GroundingFeaturizer.evidence`."""

from __future__ import annotations

import re
from collections.abc import Iterable

from evaluators.offline.claim_view import ClaimView, Terms
from evaluators.offline.lexicon import KINDS, antonym_key, complements
from evaluators.offline.negation import denied_stems
from evaluators.offline.passage_match import antonym_keys, antonyms, denied_names
from evaluators.offline.sentences import Window
from evaluators.offline.text import entities, stem, stems_of

_PRONOUN = re.compile(r"(?:It|They|He|She)\b")  # a sentence whose subject is a pronoun

# Words that are a negation in themselves: 'removed' is 'no longer available', 'free' is 'do not pay'.
_IMPLICIT_NEGATIONS = frozenset(
    stem(w)
    for w in """
    removed eliminated abolished discontinued cancelled canceled scrapped dropped withdrawn withdrew revoked
    rescinded suspended halted ceased stopped ended expired retired banned prohibited forbidden outlawed
    excluded exempt waived free closed shut disabled blocked unavailable absent missing lacking refused
    declined denied rejected failed prevented omitted skipped
    """.split()  # noqa: SIM905 (a word list reads better as text)
)
# 'There is no yoga class this week' denies that the thing is at all.
_NONE_OF_IT = re.compile(r"\bthere(?:'s|’s| is| are| was| were| will be) no\b", re.IGNORECASE)


def kind_opposites(
    terms: Terms, texts: tuple[str, ...], stems: frozenset[str], windows: Iterable[Window]
) -> tuple[Window | None, tuple[tuple[str, str], ...]]:
    """The first of `windows` (those matching the claim as well as the best) that gives another value of
    a kind the claim gives one of and the context (`texts`, their `stems`) nowhere states
    (`lexicon.KINDS`), and the pairs: 'Taken is a comedy' matches 'Taken is starring Holly Valance' as
    well as 'Taken has genre Suspense'; 'Its genre is fantasy romance' matches no window, so meets any
    giving a genre. Other antonyms are looked for in the best window only: in a window that merely
    shares a name with the claim, 'birth' beside a claim's 'death' is chance."""
    kinds = {w for w, s in zip(terms.surface, terms.stems, strict=True) if s not in stems}
    kinds = {w for w in kinds if antonym_key(w) in KINDS}
    if kinds:  # ('romantic' where the claim says 'romance' states its value)
        stated = frozenset().union(*map(antonym_keys, texts))
        kinds = {w for w in kinds if antonym_key(w) not in stated}
    if not kinds:
        return None, ()
    for window in windows:
        found = tuple(p for p in antonyms(terms, window) if p[0] in kinds)
        if found:
            return window, found
    return None, ()


def sentence_antonyms(
    terms: Terms, view: ClaimView, here: Window, window: Window | None, common: frozenset[str]
) -> tuple[tuple[tuple[str, str], ...], str]:
    """Antonyms in the sentence about the claim's named things, where its pair window also holds
    the claim's word: 'open on Sundays' against 'closed on Sundays. It opens at 9 am'; or a
    complement in the sentence after it, when a pronoun stands for its subject there and it states
    a word of the claim that the named one lacks: 'Our Lisbon store is open Monday to Saturday. It
    is closed on Sundays'. (Not for a claim with amounts: the sentence is chosen by words, and
    'closes at 19:00' may be the end of 'open from 9am to 7pm'.) With the sentence they are in."""
    found, said = antonyms(terms, here), here
    after = said_of(here, window) if not found else None
    if after is not None and not after.stems.isdisjoint(s for s in terms.stems if s not in here.stems):
        # (complements only: a state of the subject, not another person, 'a man' beside 'the girl')
        found, said = tuple(p for p in antonyms(terms, after) if complements(p[0], (p[1],))), after
    if not found:
        return (), ""
    named = entities(view.claim, common=common)
    # (names the pronoun's sentence states with the one it stands for: 'Sundays', 'Lisbon store')
    text = f"{here.text} {said.text}" if said is after else here.text
    return (found, said.text) if named and all(stated(name, text) for name in named) else ((), "")


def denies_other(view: ClaimView, sentence: str, common: frozenset[str]) -> bool:
    """Whether the negated side (the claim, or else the sentence) denies something of a name the
    other side does not state: then the two speak of different things. 'Jamie Kennedy did not star
    in GoldenEye' is no contradiction of 'Three Kings is starring Jamie Kennedy', nor 'open on
    Sundays' of 'not open on Mondays'."""
    denier, other = (view.claim, sentence) if view.negation_parity else (sentence, view.claim)
    return any(not stated(name, other) for name in denied_names(denier, common))


def denied_in_other_words(view: ClaimView, sentence: str) -> bool:
    """Whether the side without a negation says what the other side's negation denies with a word that
    is a negation in itself, and not with the words denied: 'The CSV export was removed in version 3'
    is 'The CSV export is no longer available in version 3', and 'Children under 12 do not pay' is
    'free for children under 12'. Then the two agree. Where every denied word is stated they need not
    ('Zelnorm was withdrawn because it raised the risk' against 'did not raise the risk'), unless the
    negation denies that the thing is at all ('There is no yoga class this week' against 'The yoga
    class is cancelled this week')."""
    negated, other = (view.claim, sentence) if view.negation_parity else (sentence, view.claim)
    denied, said = denied_stems(negated), stems_of(other)
    if not denied or (denied.issubset(said) and _NONE_OF_IT.search(negated) is None):
        return False
    own = stems_of(negated)
    return any(s in _IMPLICIT_NEGATIONS and s not in own for s in said)


def denies_as_well(view: ClaimView, sentence: str) -> bool:
    """Whether the sentence denies all that the negated claim denies, so a parity that differs comes from
    another negation of the sentence: 'Locals believe it cannot be done without rezoning open park
    areas due to rising land values' says 'it cannot be done due to rising land values'. (Only the
    claim's own sentence: 'The tunnel did not open' beside 'The bridge opened' denies another's.)"""
    denied = denied_stems(view.claim) if view.negation_parity else None
    return denied is not None and bool(denied) and denied <= (denied_stems(sentence) or frozenset())


def negation_agrees(view: ClaimView, sentence: str) -> bool:
    """Whether a claim and its sentence, one negated and not the other, still agree on what is denied
    (`denied_in_other_words`, `denies_as_well`): then the parity is no flip."""
    return denied_in_other_words(view, sentence) or denies_as_well(view, sentence)


def said_of(here: Window, window: Window | None) -> Window | None:
    """The sentence after `here` in the pair `window` when a pronoun is its subject ('It is closed on
    Sundays'): what it says, it says of `here`'s subject."""
    if window is None or window.single or window.sentences[0] != here.text:
        return None
    text = window.sentences[1]
    return (
        Window(here.node, text, frozenset(stems_of(text)), True, (text,), (text,))
        if _PRONOUN.match(text)
        else None
    )


def stated(name: str, text: str) -> bool:
    """Whether `text` states `name`, as written or as its stems in a row ('Intel's CEO' for 'Intel CEO')."""
    return name.lower() in text.lower() or in_a_row(name, text)


def in_a_row(name: str, text: str) -> bool:
    """Whether the stems of `name` occur consecutively among the content stems of `text`."""
    parts, found = stems_of(name), stems_of(text)
    n = len(parts)
    return bool(n) and any(found[i : i + n] == parts for i in range(len(found) - n + 1))
