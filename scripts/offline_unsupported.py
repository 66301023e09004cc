"""Unsupported answers that contradict nothing: additions and abstentions (training only).

An addition keeps the grounded answer and appends what the context does not say: a sentence of
another document, or an invented detail (another document's predicate given to this answer's
subject, an attribution to a new name, a year, a cost). The judge must learn that 'not stated' is
not 'stated otherwise', hence `contradicted` is False for these.

An abstention ('The documents do not mention X') is a claim about the context: true when the
context lacks X, false when it states X. True ones name something from another document, or ask
for a fact the context does not give (who directed a film the passage only lists actors of); false
ones name what the answer's own sentence states. The phrasing varies on purpose and every template
is one `lexicon.abstention_topic` reads, so the judge's abstention rule can be checked on them.
"""

from __future__ import annotations

import random
import re

from evaluators.offline.text import content_stems, numbers
from scripts.offline_quantities import YEAR, Change, format_number
from scripts.offline_scene import PERSON_KINDS, Scene, names_of
from scripts.offline_sources import Passage

Abstention = tuple[str, str, str] | None  # (answer, question, topic)


def novel(addition: str, scene: Scene) -> bool:
    """The added text says something the context does not: a new name, number or most of its words."""
    if any(n.lower() not in scene.lowered for n in names_of(addition)):
        return True
    if any(n not in scene.numbers for n in numbers(addition)):
        return True
    stems = content_stems(addition)
    return bool(stems) and sum(s not in scene.stems for s in stems) / len(stems) >= 0.5


def addition(text: str, scene: Scene, rng: random.Random) -> Change:
    """Append a sentence of another document of the same source: true there, unsupported here."""
    pool = rng.sample(scene.other_sentences, min(5, len(scene.other_sentences)))
    extra = next((s for s in pool if novel(s, scene)), None)
    return (f"{text} {extra}", f"+ '{extra}'") if extra else None


def invented_addition(text: str, scene: Scene, rng: random.Random) -> Change:
    """Append an invented detail: a predicate from elsewhere given to this answer's subject (a
    person), an attribution to a new name, a year, or a cost; none of which the context states."""
    people = [n for n in names_of(text, scene.context) if scene.kind(n, text) in PERSON_KINDS]
    others = [
        n
        for n in scene.others.get("name2", []) + scene.others.get("person", [])
        if n.lower() not in scene.lowered
    ]
    options: list[str] = []
    if people and scene.predicates:
        options.append(f"{text} {people[0]} also {rng.choice(scene.predicates)}")
    if others:
        options.append(f"{text[:-1]}, according to {rng.choice(others)}.")
        options.append(f"{text} This was later confirmed by {rng.choice(others)}.")
    if not YEAR.search(scene.context) and not scene.pairs and len(text) > 20:
        options.append(f"{text[:-1]} in {rng.randint(1950, 2023)}.")
    amount = format_number(rng.choice([3, 7, 12, 45, 150, 2.5, 18]))
    if not re.search(r"[$£€]|\bcost|\bmillion|\bpric", scene.context, re.I) and amount not in scene.numbers:
        options.append(f"{text} It cost about ${amount} million.")
    options = [o for o in options if novel(o[len(text) - 1 :], scene)]
    if not options:
        return None
    out = rng.choice(options)
    return out, f"+ '{out[len(text) - 1 :].strip(' ,.')}'"


ABOUT_NAME = (
    "The documents do not mention {x}.",
    "The provided context does not say anything about {x}.",
    "There is no information about {x} in the sources.",
    "{X} is not mentioned in the provided documents.",
    "I could not find any information on {x} in the documents.",
    "The sources make no mention of {x}.",
)
ABOUT_FACT = (
    "The documents do not say {x}.",
    "The context does not specify {x}.",
    "It is not mentioned in the sources {x}.",
    "The provided documents don't state {x}.",
)
RELATION_TOPICS = {  # dialogue relations: the fact asked for, and its question
    "written_by": ("who wrote {w}", "Who wrote {w}?"),
    "directed_by": ("who directed {w}", "Who directed {w}?"),
    "starring": ("who starred in {w}", "Who starred in {w}?"),
    "genre": ("what genre {w} belongs to", "What genre is {w}?"),
    "released": ("when {w} was released", "When was {w} released?"),
}
_BIRTH = r"\bborn\b|\bbirth|\((?:[^()]*\s)?(?:1[5-9]|20)\d\d\b"  # 'born', '(26 September 1898 - ...'
_DEATH = r"\bdied\b|\bdeath\b|\bkilled\b|\bdead\b|\blate\b|\d{4}\s*[–-]\s*[^()]*\d{4}\)"
PERSON_TOPICS = (  # people in QA and news: the fact asked for, its question, the words that state it
    ("when {e} was born", "When was {e} born?", re.compile(_BIRTH, re.I)),
    ("when {e} died", "When did {e} die?", re.compile(_DEATH, re.I)),
    (
        "who {e} is married to",
        "Who is {e} married to?",
        re.compile(r"marri|\bwife\b|\bhusband\b|spouse", re.I),
    ),
)
_QUOTABLE = re.compile(  # a name a sentence can end on ('Oliver!', 'So Long, and Thanks...' cannot)
    r"^(?!.*\w{3}\.\s)(?!.*,\s+(?:but|and|so|although|though|while|however|yet)\s)[^!?;]*[^!?;.]$"
)
_PRONOUNS = re.compile(r"\b(?:he|she|his|her|him)\b", re.I)


def _fact_topic(
    passage: Passage, base: str, scene: Scene, rng: random.Random, true: bool
) -> tuple[str, str] | None:
    """A fact the context lacks (true) or the answer states (false), as (topic, question)."""
    if passage.facts:
        in_answer = [f for f in passage.facts if f.text in base and f.relation in RELATION_TOPICS]
        if true:
            works = sorted({f.work for f in in_answer} or {f.work for f in passage.facts})
            work = rng.choice(works) if works else ""
            stated = {f.relation for f in passage.facts if f.work == work}
            relations = [r for r in RELATION_TOPICS if r not in stated]
        else:
            fact = rng.choice(in_answer) if in_answer else None
            work, relations = (fact.work, [fact.relation]) if fact else ("", [])
        if not relations:
            return None
        topic, question = RELATION_TOPICS[rng.choice(relations)]
        return (topic.format(w=work), question.format(w=work)) if _QUOTABLE.match(work) else None
    people = [n for n in names_of(base, scene.context) if scene.kind(n, base) in ("person", "name2")]
    if not people or not _PRONOUNS.search(scene.context):  # a person is referred to as he or she
        return None
    where = scene.context if true else base
    topics = [(t, q) for t, q, cue in PERSON_TOPICS if bool(cue.search(where)) != true]
    if not topics:
        return None
    topic, question = rng.choice(topics)
    return topic.format(e=people[0]), question.format(e=people[0])


def _absent(name: str, scene: Scene) -> bool:
    stems = content_stems(name)
    return name.lower() not in scene.lowered and bool(stems) and not any(s in scene.stems for s in stems)


def abstention(passage: Passage, base: str, scene: Scene, rng: random.Random, *, true: bool) -> Abstention:
    """An abstaining answer that is true (the context lacks the topic) or false (it states it).

    Half name a thing (another document's name when true, one of the answer's names when false),
    half a fact; a third of the true ones follow a grounded sentence ('X did Y. The documents do
    not mention Z.')."""
    fact = _fact_topic(passage, base, scene, rng, true) if rng.random() < 0.5 else None
    if fact:
        topic, question = fact
        sentence = rng.choice(ABOUT_FACT).format(x=topic)
    else:
        if true:
            pool = [
                n for kind in ("name2", "person", "org", "place", "work") for n in scene.others.get(kind, [])
            ]
            pool = [n for n in rng.sample(pool, min(10, len(pool))) if _absent(n, scene)]
        elif passage.facts:  # the names of the answer's own facts, whole ('Zodiac (Crime Fiction Film)')
            pool = [n for f in passage.facts if f.text in base for n in (f.work, f.value) if n[:1].isupper()]
        else:
            pool = [n for n in names_of(base, scene.context) if n.lower() not in scene.question.lower()]
            pool = [n for n in pool if scene.kind(n, base) != "adjective"]
        pool = [n for n in pool if _QUOTABLE.match(n)]
        if not pool:
            return None
        topic = rng.choice(pool)
        question = f"What do the documents say about {topic}?"
        sentence = rng.choice(ABOUT_NAME).format(x=topic, X=topic[:1].upper() + topic[1:])
    if true and rng.random() < 1 / 3:  # a grounded sentence, then what the documents lack
        return f"{base} {sentence}", passage.question or question, topic
    return sentence, question, topic
