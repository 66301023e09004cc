"""Citations from a real citing app: LlamaIndex's CitationQueryEngine splits the retrieved nodes into
numbered chunks ("Source 1:\\n..."), the LLM cites them as [1], [2], and the real OpenInference
LlamaIndex instrumentation records the trace. ragpulse must read the chunks the answer numbers (not
the retriever's nodes, which the engine re-chunks) and score citation precision and coverage on them.

The committed capture (tests/data/instrumentation/llamaindex-citations-openinference, refreshed with
`python -m tests.instrumentation.capture llamaindex-citations-openinference`) is read without the venv;
the live test runs the app in the instrumentation venv and reads what it exports.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from collector.judging.cases import to_test_case
from evaluators import OpenAIJudge, Outcome, a_evaluate
from evaluators.judges.prompts import parse_fenced
from evaluators.metrics.citations import CitationCoverage, CitationPrecision
from testkit.openai_server import ScriptedOpenAIServer
from tests.instrumentation.apps import corpus
from tests.instrumentation.capture import CITATION_COMBINATIONS, FIXTURES, capture, combination_name
from tests.instrumentation.llm_server import ScriptedLLMServer
from tests.instrumentation.test_images import records_of

COMBO = combination_name(*CITATION_COMBINATIONS[0])
# The engine's chunks of the two retrieved passages (refunds, then office hours), one sentence each.
CHUNKS = [
    "Source 1:\nCustomers can request a full refund within 45 days of purchase.\n",
    "Source 2:\nRefunds are paid to the original payment method within 7 business days and are approved "
    "by Daniel Okafor.\n",
    "Source 3:\nThe Brightleaf Lisbon office is open Monday to Friday from 08:30 to 17:30.\n",
    "Source 4:\nOn Saturdays the front desk is staffed from 10:00 to 13:00 by Marta Sousa.\n",
]
SENTENCES = [
    "Customers can request a full refund within 45 days of purchase.",
    "Refunds are paid to the original payment method within 7 business days.",
    "Refunds are approved by Daniel Okafor.",
]


def check_chunks_read(folder: Path) -> None:
    """The record holds the citation chunks in the engine's numbering, and the answer with its markers."""
    expected, records = records_of(folder)
    (item,) = expected
    record = records[item["trace_id"]]
    assert (record.query, record.response) == (item["question"], item["response"])
    assert "[1]" in record.response and "[2][3]" in record.response and "[3]." in record.response
    assert [n.text for n in record.nodes] == [p["text"] for p in item["passages"]] == CHUNKS
    # A chunk keeps its retrieved node's id and score (the engine's NodeWithScore keeps the score).
    ids = [n.id for n in record.nodes]
    assert ids[0] == ids[1] != ids[2] == ids[3]
    assert [n.score for n in record.nodes] == pytest.approx([p["score"] for p in item["passages"]])
    assert to_test_case(record).retrieval_context == CHUNKS


def test_the_committed_capture_gives_the_citation_chunks() -> None:
    check_chunks_read(FIXTURES / COMBO)


def test_chunks_not_numbered_from_one_leave_the_retrieved_nodes(tmp_path: Path) -> None:
    """Only the engine's own numbering ("Source 1:" .. "Source n:") marks citation chunks: the same
    capture with its chunks renumbered keeps the retriever's two passages."""
    shutil.copytree(FIXTURES / COMBO, tmp_path, dirs_exist_ok=True)
    traces = tmp_path / "traces.json"
    renumbered = traces.read_text().replace("Source 2:", "Source 5:")
    assert renumbered != traces.read_text()
    traces.write_text(renumbered)
    expected, records = records_of(tmp_path)
    record = records[expected[0]["trace_id"]]
    passages = {p.id: p.text for p in corpus.PASSAGES}
    assert [n.text for n in record.nodes] == [passages["handbook-refunds"], passages["handbook-office-hours"]]


async def test_citation_metrics_on_the_real_capture() -> None:
    expected, records = records_of(FIXTURES / COMBO)
    case = to_test_case(records[expected[0]["trace_id"]])
    with ScriptedOpenAIServer() as server:
        # Source 3 (the office hours) supports neither sentence that cites it; the rest is supported.
        server.script.task_verdicts[("supported", "", "Lisbon office is open")] = "no"
        judge = OpenAIJudge("scripted-judge", base_url=server.base_url, cache_size=0)
        evaluation = await a_evaluate([case], [CitationPrecision(), CitationCoverage()], judge)
        precision, coverage = evaluation.cases[0].results
        # Citations [1] [2] [3] [3]: [1] and [2] supported. Sentences: the first two covered.
        assert (precision.score, precision.outcome) == (pytest.approx(2 / 4), Outcome.PASSED)
        assert "2 of 4 citations supported" in precision.reason
        assert [(v.verdict, v.source_ids) for v in precision.verdicts] == [
            ("yes", [0]),
            ("yes", [1]),
            ("no", [2]),
            ("no", [2]),
        ]
        assert coverage.score == pytest.approx(2 / 3)
        assert "2 of 3 factual sentences supported by the passages they cite" in coverage.reason
        assert (
            "not supported: '[3] does not support it: Refunds are approved by Daniel Okafor.'"
            in coverage.reason
        )
        assert "[3] does not support it: Refunds are paid to the original" in precision.reason
        # One call per cited chunk, each judging the sentences that cite it against that chunk alone:
        # marker [n] reached the judge as the n-th chunk, text and "Source n:" label as the LLM saw it.
        asked = []
        for request in server.chat_requests:
            fenced = parse_fenced(request.body["messages"][-1]["content"])
            asked.append((fenced["REFERENCES"], fenced["ITEMS"]))
        assert sorted(asked) == [
            ([CHUNKS[0]], [SENTENCES[0]]),
            ([CHUNKS[1]], [SENTENCES[1]]),
            ([CHUNKS[2]], [SENTENCES[1], SENTENCES[2]]),
        ]
        assert server.operations() == ["verdicts_supported"] * 3


@pytest.mark.instrumentation
def test_the_live_instrumentation_records_chunks_ragpulse_reads(
    instrumentation_venv: str, llm_server: ScriptedLLMServer, tmp_path: Path
) -> None:
    capture(instrumentation_venv, CITATION_COMBINATIONS[0], llm_server.base_url, tmp_path)
    check_chunks_read(tmp_path)
