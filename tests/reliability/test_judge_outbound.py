"""What an external judge receives, read off the scripted server: every text bounded, IBANs masked.

A 2.8 MB answer used to go out whole (one request of 1,372,278 prompt tokens); an IBAN went out in clear.
"""

from __future__ import annotations

import json

from collector.judging.build import build_evaluator
from collector.judging.config import JudgeConfig, MetricsConfig
from collector.judging.outbound import Outbound, OutboundConfig
from collector.metrics import JUDGE_INPUT_REWRITES, JUDGE_INPUT_TRUNCATED
from collector.records import RagRecord, RetrievedNode
from collector.stages import Outcome
from evaluators import TestCase
from evaluators.case import Turn
from testkit.openai_server import ScriptedOpenAIServer

PASSAGE = "The Eiffel Tower was completed in March 1889 and is 330 metres tall."
IBAN, IBAN_COMPACT = "DE89 3704 0044 0532 0130 00", "DE89370400440532013000"
NOT_IBAN = "DE88370400440532013000"  # the same shape, check digits off by one: fails mod 97


def _record(query: str, response: str) -> RagRecord:
    return RagRecord(
        trace_id="8" * 32,
        anchor_span_id="8" * 16,
        query=query,
        response=response,
        nodes=(RetrievedNode("n0", PASSAGE, 0.9),),
    )


def _value(counter, *labels: str) -> float:
    return counter.labels(*labels)._value.get()


async def test_a_huge_answer_reaches_the_judge_cut_counted_and_said() -> None:
    answer = "The Eiffel Tower was completed in 1889. " * 70_000  # 2.8 MB
    limit = OutboundConfig().max_text_chars
    with ScriptedOpenAIServer() as server:
        evaluator = build_evaluator(JudgeConfig(base_url=server.base_url, max_retries=0), MetricsConfig(), 1)
        before = _value(JUDGE_INPUT_TRUNCATED, "actual_output")
        (evaluation,), _ = await evaluator.evaluate(
            _record("When was it completed?", answer), ["faithfulness"]
        )
        sizes = [len(json.dumps(r.body)) for r in server.chat_requests]
        prompt_tokens = [json.loads(r.reply)["usage"]["prompt_tokens"] for r in server.chat_requests]
    print(f"answer {len(answer):,} chars; requests {sizes} bytes, prompt tokens {prompt_tokens}")
    assert len(answer) == 2_800_000 and sizes
    assert max(sizes) < 4 * limit  # the cut answer (or the claims taken from it) and the prompt around it
    assert _value(JUDGE_INPUT_TRUNCATED, "actual_output") == before + 1
    assert evaluation.outcome is Outcome.PASSED
    assert evaluation.reason.endswith(
        f"(the judge read actual_output cut to {limit:,} of 2,800,000 characters)"
    )


async def test_ibans_are_masked_and_a_look_alike_is_not() -> None:
    query = f"Refund to {IBAN} please, or to {IBAN_COMPACT}. Order {NOT_IBAN} was charged twice."
    with ScriptedOpenAIServer() as server:
        evaluator = build_evaluator(JudgeConfig(base_url=server.base_url, max_retries=0), MetricsConfig(), 1)
        masked = _value(JUDGE_INPUT_REWRITES, "iban_masked")
        await evaluator.evaluate(_record(query, "We refunded the order."), ["answer_relevancy"])
        sent = json.dumps([r.body for r in server.chat_requests])
    assert server.chat_requests
    assert IBAN not in sent and IBAN_COMPACT not in sent and "3704 0044" not in sent
    assert "Refund to [iban-1] please, or to [iban-1]." in sent  # one account, one placeholder
    assert f"Order {NOT_IBAN} was charged twice." in sent  # not an IBAN: left alone
    assert _value(JUDGE_INPUT_REWRITES, "iban_masked") == masked + 1


def test_every_text_of_a_case_is_bounded_and_a_number_across_the_cut_is_never_half_sent() -> None:
    config = OutboundConfig(max_text_chars=200, max_passage_chars=200)
    card = "4111 1111 1111 1111"
    across = "x" * 190 + f" {card} " + "y" * 100  # the card number straddles the cut at 200
    case = TestCase(
        input=across,
        actual_output="a" * 500,
        expected_output="e" * 500,
        baseline_output="b" * 500,
        retrieval_context=[across],
        turns=[Turn(role="user", content=across), Turn(role="assistant", content="t" * 500)],
    )
    cut: dict[str, int] = {}
    sent = Outbound(_NoJudge(), config).rewrite(case, cut)
    texts = [sent.input, sent.actual_output, sent.expected_output, sent.baseline_output]
    texts += [*(sent.retrieval_context or []), *(turn.content for turn in sent.turns or [])]
    assert all(text is not None and len(text) <= 200 for text in texts)
    assert cut == {
        "input": len(across),
        "actual_output": 500,
        "expected_output": 500,
        "baseline_output": 500,
        "turn": 500,
    }
    for text in (sent.input, (sent.retrieval_context or [""])[0], (sent.turns or [])[0].content):
        assert text is not None and text.startswith("x" * 190 + " [card-") and "4111" not in text


class _NoJudge:
    """`rewrite` asks nothing of the scorer it wraps."""

    info = None

    async def score(self, case, metrics):  # pragma: no cover - never called
        raise AssertionError

    def shutdown(self) -> None:
        pass
