"""Passages of the three HaluEval files, cleaned, grouped into documents and split (training only).

HaluEval is noisy in ways that would teach the judge the wrong thing if left as is: QA knowledge is
two Wikipedia paragraphs glued without a space ('...19th century.First for Women is...') and keeps
pronunciation debris ('( ; ; ] ; 27 January 1756'); dialogue knowledge is knowledge-graph triples
glued together ('...Robert Downey Jr.Robert Downey Jr. starred in...'); news has non-breaking and
soft hyphens. Each is repaired here, once, so contexts look like retrieved passages.

The split is by document: a passage is held out when any HaluEval row it comes from is in the
held-out fifth of `LabelledAnswer.split`, so the synthetic test set never shares a passage with the
synthetic training set nor a context with HaluEval's own held-out pairs. QA rows that share a
Wikipedia paragraph are one document (union-find over paragraphs).
"""

from __future__ import annotations

import random
import re
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass
from functools import lru_cache

from evaluators.offline.sentences import sentences
from scripts.offline_training import LabelledAnswer, halueval_dir, iter_jsonl

_GLUE = re.compile(r"(?<=[a-z0-9)\]\"'][.!?])(?=[A-Z])")  # '...century.First for Women'
_DEBRIS = (  # Wikipedia pronunciation debris: '( ; ; ] ; 27 January 1756', '( )', ' ,'
    (re.compile(r"\(\s*(?:[;,:\]]\s*)+"), "("),
    (re.compile(r"(?:\s+[;\]])+(?=\s)"), ""),
    (re.compile(r"\s*\(\s*\)"), ""),
    (re.compile(r"\s+([,.;:)])"), r"\1"),
    (re.compile(r"\s{2,}"), " "),
    (re.compile(r"(?<=\d)(?=[A-Z][a-z])"), " "),  # '(March 9, 1918July 17, 2006)'
)
_STILL_GLUED = re.compile(r"[a-z]{4}[A-Z]")  # 'LennonJohn Lennon composed...' (not 'McDonald', 'DiCaprio')
_BAD_ANSWER = re.compile(
    r"[\"“”;:?!\[\]|@]|(?:^|\s)'|'(?=\s|[,.]|$)"  # quotes, questions, lists, brackets
    r"|\b(?:Scroll|Click|pictured|Pictured|Photo|Video|Daily Mail|CNN)\b"  # captions and page furniture
    r"|\((?:left|right|centre|center|above|below|top|bottom|inset)\)"
)
# Knowledge-graph relations of HaluEval dialogue: (surface, relation, the subject is the object).
_RELATIONS = (
    (" is starring ", "starring", False), (" starred in ", "starring", True),
    (" is written by ", "written_by", False), (" wrote ", "written_by", True),
    (" is directed by ", "directed_by", False), (" directed ", "directed_by", True),
    (" is produced by ", "produced_by", False), (" produced ", "produced_by", True),
    (" has genre ", "genre", False), (" has examples: ", "genre", True),
    (" was released ", "released", False), (" was the year that released ", "released", True),
    (" is a/an ", "isa", False), (" is in language ", "language", False),
    (" is a celebrity friend to ", "friend", False), (" has a celebrity friend ", "friend", True),
)  # fmt: skip
ROLES = {  # what the value of each relation is, so that a swap puts a person for a person
    **dict.fromkeys(("starring", "written_by", "directed_by", "produced_by", "friend"), "person"),
    **{"genre": "genre", "released": "year", "isa": "class", "language": "language"},
}
_BACKTICK = re.compile(r" : `(?P<inv>~?)(?P<rel>[^`]+)`: ")
_RELATION = re.compile("|".join([_BACKTICK.pattern, *(re.escape(s) for s, _, _ in _RELATIONS)]))


@dataclass(frozen=True, slots=True)
class Fact:
    """One dialogue triple: `work` is the subject side ('Iron Man'), `value` the person, genre..."""

    work: str
    relation: str
    value: str
    text: str  # as a sentence of the context


@dataclass(frozen=True, slots=True)
class Raw:
    """A source document before parsing: its id, split, raw text and question."""

    document: str
    split: str
    text: str
    question: str


@dataclass(frozen=True, slots=True)
class Passage:
    source: str  # halueval_qa | halueval_dialogue | news
    document: str  # the unit of the split: 'qa:17', 'dialogue:5', 'news:301'
    split: str
    context: str
    question: str  # HaluEval's question (QA), the user's last turn (dialogue), '' (news)
    answers: tuple[str, ...]  # sentences of the context fit to be a grounded answer
    facts: tuple[Fact, ...] = ()


def clean(text: str, *, debris: bool = True) -> str:
    text = text.replace("\xa0", " ").replace("\xad", "").replace("’", "'").strip()
    text = re.sub(r"^.{0,40}\(CNN\)\s*(?:--\s*)?", "", text)
    for pattern, repl in _DEBRIS if debris else ():
        text = pattern.sub(repl, text)
    return text.strip()


def good_answer(sentence: str) -> bool:
    """A sentence a RAG answer could repeat: complete, 6-40 words, no quotes, captions or debris."""
    n = len(sentence.split())
    return (
        6 <= n <= 40
        and sentence[:1].isupper()
        and sentence.endswith(".")
        and sentence.count("(") == sentence.count(")")
        and not _BAD_ANSWER.search(sentence)
    )


def _split(task: str, rows: list[int]) -> str:
    return "test" if any(LabelledAnswer(task, r, "", "", "", 1).split == "test" for r in rows) else "train"


def _qa() -> list[Raw]:
    rows = list(iter_jsonl(halueval_dir() / "dataset_halueval_qa.jsonl"))
    parent = list(range(len(rows)))

    def find(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    first: dict[str, int] = {}
    for i, row in enumerate(rows):
        for paragraph in _GLUE.split(row["knowledge"]):
            j = first.setdefault(paragraph.strip(), i)
            parent[find(i)] = find(j)
    members: dict[int, list[int]] = defaultdict(list)
    for i in range(len(rows)):
        members[find(i)].append(i)
    out: dict[str, Raw] = {}
    for i, row in enumerate(rows):
        root = find(i)
        text = " ".join(p.strip() for p in _GLUE.split(row["knowledge"]))
        out.setdefault(text, Raw(f"qa:{root}", _split("qa", members[root]), text, row["question"].strip()))
    return list(out.values())


def _qa_passages(raw: Raw) -> list[Passage]:
    context = clean(raw.text)
    answers = tuple(s for s in sentences(context) if good_answer(s))
    return [Passage("halueval_qa", raw.document, raw.split, context, raw.question, answers)]


def _whole(name: str, knowledge: str) -> int:
    """How often `name` stands alone in the knowledge (not glued to a neighbour)."""
    count, at = 0, knowledge.find(name) if name else -1
    while at >= 0:
        before, after = knowledge[at - 1 : at] if at else " ", knowledge[at + len(name) : at + len(name) + 1]
        count += before in " ." and after in ("", " ", ".", ",", ":")
        at = knowledge.find(name, at + 1)
    return count


def _unglue(segment: str, knowledge: str) -> tuple[str, str]:
    """Split 'object of one triple + subject of the next' ('Michael FranceGoldenEye'): where the
    two halves repeat each other, else where both halves stand alone elsewhere, else at '. '."""
    best: tuple[tuple[bool, int, bool, int], int] | None = None
    for m in re.finditer(r"(?<=[a-z0-9.)\]'])(?=[A-Z0-9])|(?<=\.\s)(?=[A-Z0-9])", segment):
        left, right = segment[: m.start()].strip(" ."), segment[m.start() :].strip()
        if not left or not right:
            continue
        spaced = segment[m.start() - 1 : m.start()] == " "
        score = (left == right, _whole(left, knowledge) + _whole(right, knowledge), spaced, -m.start())
        if best is None or score > best[0]:
            best = (score, m.start())
    if best is None:
        return segment.strip(" ."), ""
    return segment[: best[1]].strip(" ."), segment[best[1] :].strip()


def parse_triples(knowledge: str) -> list[Fact | str]:
    """Dialogue knowledge as facts (or plain sentences for the relations not modelled).

    Triples are glued ('...Robert Downey Jr.Robert Downey Jr. starred in...', 'Michael
    FranceGoldenEye has genre...'): between two relations lies an object and the next subject,
    split by `_unglue`."""
    knowledge = re.sub(r"\b(\d{4})(?=\1\b)", r"\1. ", knowledge)  # 'released 19881988 was...'
    found = list(_RELATION.finditer(knowledge))
    if not found:
        return [f"{knowledge.strip(' .')}."]
    subject = knowledge[: found[0].start()].strip(" .")
    out: list[Fact | str] = []
    for i, m in enumerate(found):
        end = found[i + 1].start() if i + 1 < len(found) else len(knowledge)
        segment = knowledge[m.end() : end]
        obj, following = _unglue(segment, knowledge) if i + 1 < len(found) else (segment.strip(" ."), "")
        out.append(_fact(subject, m.group(0), obj))
        subject = following
    return out


def _fact(left: str, surface: str, right: str) -> Fact | str:
    if backtick := _BACKTICK.fullmatch(surface):
        s, o = (right, left) if backtick["inv"] else (left, right)
        return f"{s}, {backtick['rel'].lower()}: {o}."
    relation, inverse = next((r, inv) for s, r, inv in _RELATIONS if s == surface)
    work, value = (right, left) if inverse else (left, right)
    if relation == "released":
        return Fact(work, relation, value, f"{work} was released in {value}.")
    if relation == "isa":
        return Fact(
            work, relation, value, f"{left} is {'an' if right[:1].lower() in 'aeiou' else 'a'} {right}."
        )
    return Fact(work, relation, value, f"{left}{surface}{right}.")


def _dialogue() -> list[Raw]:
    grouped: dict[str, list[int]] = defaultdict(list)
    rows = list(iter_jsonl(halueval_dir() / "dataset_halueval_dialogue.jsonl"))
    for i, row in enumerate(rows):
        grouped[row["knowledge"]].append(i)
    out = []
    for knowledge, members in grouped.items():
        history = rows[members[0]]["dialogue_history"]
        question = history.rsplit("[Human]:", 1)[-1].split("[Assistant]:")[0].strip()
        out.append(Raw(f"dialogue:{members[0]}", _split("dialogue", members), knowledge, question))
    return out


def _dialogue_passages(raw: Raw) -> list[Passage]:
    parsed = parse_triples(clean(raw.text, debris=False))
    facts = tuple(dict.fromkeys(p for p in parsed if isinstance(p, Fact) and p.work and p.value))
    facts = tuple(f for f in facts if not _STILL_GLUED.search(f"{f.work} {f.value}"))
    context = " ".join(dict.fromkeys(p.text if isinstance(p, Fact) else p for p in parsed))
    answers = tuple(f.text for f in facts if f.relation != "isa" and " has examples: " not in f.text
                    and len(f.text.split()) >= 4 and not _BAD_ANSWER.search(f.text))  # fmt: skip
    return [Passage("halueval_dialogue", raw.document, raw.split, context, raw.question, answers, facts)]


def _news() -> list[Raw]:
    grouped: dict[str, list[int]] = defaultdict(list)
    for i, row in enumerate(iter_jsonl(halueval_dir() / "dataset_halueval_summarization.jsonl")):
        grouped[row["document"]].append(i)
    return [Raw(f"news:{m[0]}", _split("summarization", m), text, "") for text, m in grouped.items()]


def _news_passages(raw: Raw, chunk: int = 5, per_article: int = 3) -> list[Passage]:
    """Up to three 5-sentence windows of an article, spread over it: retrieval returns passages,
    not whole articles, and a long context would make every claim find some support."""
    sents = sentences(clean(raw.text))
    starts = list(range(0, max(1, len(sents) - chunk + 1), chunk))
    out = []
    for start in dict.fromkeys(starts[int(k * len(starts) / per_article)] for k in range(per_article)):
        window = sents[start : start + chunk]
        answers = tuple(s for s in window if good_answer(s))
        out.append(Passage("news", raw.document, raw.split, " ".join(window), "", answers))
    return out


_LOADERS = {
    "halueval_qa": (_qa, _qa_passages),
    "halueval_dialogue": (_dialogue, _dialogue_passages),
    "news": (_news, _news_passages),
}
SOURCES = tuple(_LOADERS)


@lru_cache(maxsize=8)
def documents(source: str, seed: int) -> tuple[Raw, ...]:
    """The source's documents in a seeded order (cheap: no sentence splitting yet)."""
    raws = _LOADERS[source][0]()
    random.Random(f"{seed}:{source}").shuffle(raws)
    return tuple(raws)


def passages(source: str, seed: int) -> Iterator[Passage]:
    """Usable passages of one source, document after document, parsed only when reached."""
    parse = _LOADERS[source][1]
    for raw in documents(source, seed):
        yield from (p for p in parse(raw) if p.answers)
