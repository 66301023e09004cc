"""Synthetic production-shaped records for the speed benchmarks: a stress shape.

Every sentence holds a year, two numbers, a place and a report id, and every answer has a
grounded sentence, one with a number swapped and 0-2 unsupported ones: nearly every claim meets a
conflict somewhere, the costliest case for the offline judge. `real_records` is real text.
"""

from __future__ import annotations

import random
from typing import Any

TOPICS = ["Kubernetes", "PostgreSQL", "Kafka", "the Eiffel Tower", "Apollo 11", "ibuprofen", "mortgages"]
VERBS = ["was released", "is configured", "was measured", "is replicated", "was approved", "is scheduled"]
CITIES = ["Lyon", "Osaka", "Denver", "Nairobi", "Porto", "Calgary", "Pune", "Tallinn"]
FACTS = [
    "In {year}, {topic} {verb} with {n} units across {m} regions, according to report {ref}.",
    "Engineers in {city} said {topic} did not affect the {n} customers served by their {m} offices.",
    "The budget for {topic} reached ${n},000 after {m} weeks of testing, and {city} approved it.",
    "Critics argued that {topic} was never designed for {n} concurrent users; version {m} fixed that.",
    "A survey of {n} teams in {city} found that {topic} {verb} faster than its {year} predecessor.",
    "Since {year}, {topic} has been maintained by {m} volunteers and reviewed by the {city} board.",
]


def fact(rng: random.Random, i: int, topic: str | None = None) -> str:
    return rng.choice(FACTS).format(
        year=1900 + rng.randrange(125),
        topic=topic or rng.choice(TOPICS),
        verb=rng.choice(VERBS),
        n=rng.randrange(2, 900),
        m=rng.randrange(2, 40),
        city=rng.choice(CITIES),
        ref=f"{i}-{rng.randrange(10**6)}",
    )


def sentence(rng: random.Random, i: int) -> str:
    topic, verb = rng.choice(TOPICS), rng.choice(VERBS)
    return (
        f"In {1900 + rng.randrange(125)}, {topic} {verb} with {rng.randrange(2, 900)} units "
        f"across {rng.randrange(2, 40)} regions, according to report {i}-{rng.randrange(10**6)}."
    )


def make_case(rng: random.Random, i: int) -> dict[str, Any]:
    """The original shape: 5 nodes, a 3-sentence answer with one grounded sentence."""
    nodes = []
    for _ in range(5):
        node = ""
        while len(node) < 480:
            node += sentence(rng, i) + " "
        nodes.append(node.strip())
    grounded = rng.choice(nodes[0].split(". ")).rstrip(".") + "."
    return {
        "input": f"What happened with {rng.choice(TOPICS)} in case {i}?",
        "actual_output": " ".join([grounded, sentence(rng, i), sentence(rng, i)]),
        "retrieval_context": nodes,
    }


def make_record(rng: random.Random, i: int) -> dict[str, Any]:
    """A production-shaped record: 3-5 nodes of ~500 characters, a 2-4 sentence answer mixing a
    grounded sentence, a contradicted one (a number swapped) and unsupported ones."""
    topic = rng.choice(TOPICS)
    nodes = []
    for _ in range(rng.randint(3, 5)):
        node = ""
        while len(node) < 460:
            node += fact(rng, i, topic if rng.random() < 0.6 else None) + " "
        nodes.append(node.strip())
    facts = [s for node in nodes for s in node.split(". ")]
    answer = [rng.choice(facts).rstrip(".") + "."]
    swapped = rng.choice(facts).rstrip(".") + "."
    number = next((w.strip(".,;$") for w in swapped.split() if w.strip(".,;$").isdigit()), None)
    answer.append(swapped.replace(number, str(int(number) + 7), 1) if number else swapped)
    answer += [fact(rng, i, topic) for _ in range(rng.randint(0, 2))]
    return {
        "input": f"What happened with {topic} in {rng.choice(CITIES)} for request {i}?",
        "actual_output": " ".join(answer),
        "retrieval_context": nodes,
        "context": nodes,  # as the sidecar fills it without ground-truth contexts (judging/cases.py)
        "id": f"bench-{i}",
    }


def make_all(make: Any, first: int, n: int) -> list[dict[str, Any]]:
    """`n` records numbered from `first`, from one generator seeded by `first`: all distinct."""
    rng = random.Random(first)
    return [make(rng, first + i) for i in range(n)]
