"""The shared knowledge base, the two questions and the scripted answers of every conformance app,
the citing app's question and the conversational apps' three turns, with their scripted answers; and
`Corpus`, any such set of passages and questions, read from a JSON file (`--corpus`, e.g. the HaluEval
QA traffic corpus of tests/instrumentation/traffic.py) instead of the handbook.

Pure data, standard library only: the apps (instrumentation venv) and the scripted LLM server and the
tests (ragpulse's venv) import it. Passages carry distinct names and numbers so an invented answer is
recognisably unfaithful; the questions share many words with their passage so that BM25 and the
hashed bag-of-words embeddings of the LLM server both retrieve it first.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from pathlib import Path

MODEL = "gpt-4o-mini"
EMBEDDING_MODEL = "text-embedding-3-small"
TOP_K = 2
ROUTE = "/ask"


@dataclass(frozen=True)
class Passage:
    id: str
    text: str


@dataclass(frozen=True)
class Question:
    text: str
    answer: str
    grounded: bool
    passage_id: str = ""  # the passage the question was written from, where a corpus knows it


PASSAGES: tuple[Passage, ...] = (
    Passage(
        "handbook-office-hours",
        "The Brightleaf Lisbon office is open Monday to Friday from 08:30 to 17:30. "
        "On Saturdays the front desk is staffed from 10:00 to 13:00 by Marta Sousa.",
    ),
    Passage(
        "handbook-refunds",
        "Customers can request a full refund within 45 days of purchase. "
        "Refunds are paid to the original payment method within 7 business days and are approved "
        "by Daniel Okafor.",
    ),
    Passage(
        "handbook-travel",
        "Employees receive a travel stipend of 320 euros per quarter. "
        "Receipts must be uploaded to the Ledgerly portal before the 5th of the following month.",
    ),
    Passage(
        "handbook-laptops",
        "Laptops must be locked with a passphrase of at least 14 characters. "
        "A lost laptop is reported to the security desk at extension 4471 within one hour.",
    ),
    Passage(
        "handbook-leave",
        "Full-time staff receive 27 days of paid leave per year. "
        "Up to 5 unused days of leave can be carried over into the first quarter of the next year.",
    ),
    Passage(
        "handbook-on-call",
        "The on-call rotation for the Helios platform changes every Wednesday at 09:00. "
        "The escalation contact for Helios incidents is Priya Raman.",
    ),
)

QUESTIONS: tuple[Question, ...] = (
    Question(
        "How many days do customers have to request a full refund?",
        "Customers can request a full refund within 45 days of purchase, and refunds are paid to the "
        "original payment method within 7 business days.",
        grounded=True,
    ),
    Question(
        "How many days of paid leave do full-time staff receive per year?",
        "Full-time staff receive 35 days of paid leave per year, and up to 12 unused days can be "
        "carried over once Henrik Larsen approves them.",
        grounded=False,
    ),
)

# The citing app (LlamaIndex CitationQueryEngine) numbers the sentence-sized chunks of the retrieved
# passages: Source 1 and 2 are the refunds passage's two sentences, Source 3 and 4 the office hours'.
# The answer cites [1] and [2] right and [3] for facts only Source 2 states, so citation precision
# (2 of 4 citations) and coverage (2 of 3 sentences) are not 1, and a marker read as a retrieval rank
# ([2] = the office hours passage, [3] = no passage) scores differently.
CITATION_QUESTIONS: tuple[Question, ...] = (
    Question(
        "Within how many days can customers request a full refund, and who approves it?",
        "Customers can request a full refund within 45 days of purchase [1]. Refunds are paid to the "
        "original payment method within 7 business days [2][3]. Refunds are approved by Daniel "
        "Okafor [3].",
        grounded=True,
    ),
)

# The conversational apps: three turns of one user's chat, each its own request (trace), all in the
# session `CONVERSATION_SESSION`. Turn 2 only makes sense after turn 1 ("that refund"); the third reply
# asks again what the user said in turn 1 (which product, when it was bought), the lapse knowledge
# retention exists to catch, while every reply stays on the user's point.
CONVERSATION_SESSION = "brightleaf-chat-0042"
CONVERSATION: tuple[Question, ...] = (
    Question(
        "I bought a coffee grinder 30 days ago. Can I still request a full refund?",
        "Yes. Customers can request a full refund within 45 days of purchase, so a coffee grinder bought "
        "30 days ago still qualifies.",
        grounded=True,
    ),
    Question(
        "Who approves that refund, and how is it paid?",
        "Refunds are approved by Daniel Okafor and paid to the original payment method within 7 "
        "business days.",
        grounded=True,
    ),
    Question(
        "Can I bring the grinder back to the Lisbon office on a Saturday?",
        "Which product do you want to return, and when did you buy it? On Saturdays the front desk of "
        "the Lisbon office is staffed from 10:00 to 13:00 by Marta Sousa.",
        grounded=True,
    ),
)

FALLBACK_ANSWER = "I don't know."


@dataclass(frozen=True)
class Corpus:
    """The passages an app indexes and the questions it asks (the handbook's, or a `--corpus` file's)."""

    passages: tuple[Passage, ...]
    questions: tuple[Question, ...]

    def answers(self) -> dict[str, str]:
        """Question text -> scripted answer, the table the LLM server answers from."""
        return {q.text: q.answer for q in self.questions}

    def to_json(self) -> str:
        """`{"passages": [{id, text}], "questions": [{text, answer, grounded, passage_id}]}`."""
        document = {
            "passages": [asdict(p) for p in self.passages],
            "questions": [asdict(q) for q in self.questions],
        }
        return json.dumps(document, indent=1, ensure_ascii=False) + "\n"


def load(path: Path) -> Corpus:
    """A corpus file as `Corpus.to_json` writes it."""
    document = json.loads(Path(path).read_text(encoding="utf-8"))
    passages = tuple(Passage(**p) for p in document["passages"])
    return Corpus(passages, tuple(Question(**q) for q in document["questions"]))


def answers() -> dict[str, str]:
    """Question text -> scripted answer of every built-in app, the LLM server's default table."""
    return Corpus(PASSAGES, QUESTIONS + CITATION_QUESTIONS + CONVERSATION).answers()
