"""RAGChecker's diagnostics online: named in `sampling.reference_metrics` (or by their `ragchecker_`
aliases), sampled only for records that carry an expected output, and scored by the sidecar's scorer
from the record's test case, with the same four judge calls as in the library."""

from __future__ import annotations

from dataclasses import replace

import pytest

from collector.config import Settings
from collector.judging.cases import to_test_case
from collector.judging.scorers import JudgeOnLoop
from collector.records import RagRecord, RetrievedNode
from collector.sampling.sampler import Sampler, SamplingConfig, SamplingOutcome
from evaluators import OpenAIJudge
from evaluators.metrics.diagnostics import DIAGNOSTIC_METRICS
from testkit.openai_server import ScriptedOpenAIServer
from tests.evaluators.test_diagnostic_metrics import ANSWER, CASE, CHUNKS, EXPECTED, EXPECTED_SCORES, script

NAMES = list(DIAGNOSTIC_METRICS)
RECORD = RagRecord(
    "1" * 32,
    "2" * 16,
    CASE.input or "",
    ANSWER,
    nodes=tuple(RetrievedNode(f"d{i}", text) for i, text in enumerate(CHUNKS)),
    expected_output=EXPECTED,
)


async def test_sampled_with_an_expected_output_and_scored_by_name(
    openai_server: ScriptedOpenAIServer, openai_judge: OpenAIJudge
) -> None:
    script(openai_server)
    sampler = Sampler(SamplingConfig(metrics=["faithfulness"], reference_metrics=NAMES))
    decision = sampler.decide(RECORD)
    assert decision.decision is SamplingOutcome.SAMPLED and decision.case == to_test_case(RECORD)
    assert decision.metrics == ("faithfulness", *NAMES)
    assert decision.case is not None
    result = await JudgeOnLoop(openai_judge).score(decision.case, decision.metrics)
    assert {r.name: r.score for r in result.results} == {
        name: pytest.approx(EXPECTED_SCORES[name]) for name in ("faithfulness", *NAMES)
    }
    assert result.usage.calls == 4  # faithfulness' claims and checks are the diagnostics' own

    without = sampler.decide(replace(RECORD, expected_output=None))
    assert without.metrics == ("faithfulness",)


def test_aliases_and_options_are_accepted_in_the_config() -> None:
    settings = Settings.model_validate(
        {
            "sampling": {"reference_metrics": ["ragchecker_precision", "ragchecker_context_utilization"]},
            "metrics": {"options": {"claim_hallucination": {"threshold": 0.2}}},
        }
    )
    assert settings.sampling.reference_metrics == ["ragchecker_precision", "ragchecker_context_utilization"]
    with pytest.raises(ValueError, match="claim_hallucination: unknown option 'mode'"):
        Settings.model_validate({"metrics": {"options": {"claim_hallucination": {"mode": "all"}}}})
