"""RAGChecker's claim-level diagnostics: the worked example, shared judge calls, edge cases, offline.

The metrics run through `OpenAIJudge` -> the real `openai` client -> the scripted server, whose
extractions and (task, item, reference) verdicts reproduce the hand-computed example in
docs/evaluators.md.
"""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from evaluators import (
    Faithfulness,
    NoiseSensitivity,
    OpenAIJudge,
    Outcome,
    TestCase,
    a_evaluate,
    create_metric,
)
from evaluators.case import CaseField, MissingFieldError
from evaluators.judges.base import ExtractKind, JudgeInfo, Verdict, VerdictTask
from evaluators.metrics.diagnostics import (
    ClaimContextUtilization,
    ClaimF1,
    ClaimHallucination,
    ClaimPrecision,
    ClaimRecall,
    RetrieverClaimRecall,
    RetrieverContextPrecision,
    SelfKnowledge,
)
from evaluators.metrics.registry import ALIAS_OPTIONS, ALIASES
from testkit.openai_server import ScriptedOpenAIServer

CHUNKS = [
    "The Eiffel Tower is in Paris and was completed in 1889.",
    "The Eiffel Tower is 330 metres tall.",
    "Paris is the capital of France.",
    "The Statue of Liberty was a gift from France to the United States.",
]
ANSWER = (
    "The Eiffel Tower is in Paris, the capital of France. It was completed in 1889. "
    "It is 300 metres tall. It was built by Gustave Eiffel's company."
)
EXPECTED = (
    "The Eiffel Tower is in Paris. It was completed in 1889. It is 330 metres tall. "
    "It was built by Gustave Eiffel's company."
)
ANSWER_CLAIMS = [
    "The Eiffel Tower is in Paris.",
    "Paris is the capital of France.",
    "The Eiffel Tower was completed in 1889.",
    "The Eiffel Tower is 300 metres tall.",
    "The Eiffel Tower was built by Gustave Eiffel's company.",
]
EXPECTED_CLAIMS = [
    "The Eiffel Tower is in Paris.",
    "The Eiffel Tower was completed in 1889.",
    "The Eiffel Tower is 330 metres tall.",
    "The Eiffel Tower was built by Gustave Eiffel's company.",
]
CASE = TestCase(
    input="Tell me about the Eiffel Tower.",
    actual_output=ANSWER,
    retrieval_context=CHUNKS,
    expected_output=EXPECTED,
)
DIAGNOSTICS = [
    ClaimPrecision(),
    ClaimRecall(),
    ClaimF1(),
    RetrieverClaimRecall(),
    RetrieverContextPrecision(),
    ClaimContextUtilization(),
    ClaimHallucination(),
    SelfKnowledge(),
]
# docs/evaluators.md, "RAGChecker's diagnostics": the numbers of the worked example.
EXPECTED_SCORES = {
    "claim_precision": 3 / 5,
    "claim_recall": 3 / 4,
    "claim_f1": 2 * 0.6 * 0.75 / (0.6 + 0.75),
    "retriever_claim_recall": 3 / 4,
    "retriever_context_precision": 2 / 4,
    "claim_context_utilization": 2 / 3,
    "claim_hallucination": 1 / 5,
    "self_knowledge": 1 / 5,
    "faithfulness": 3 / 5,
    "noise_sensitivity": 2 / 5,
    "noise_sensitivity_relevant": 0.0,
    "noise_sensitivity_irrelevant": 1 / 5,
}


def script(server: ScriptedOpenAIServer) -> None:
    """The ground truth (it names Gustave Eiffel) and the chunks (the last one names the Statue of
    Liberty) entail what the table in docs/evaluators.md says; every other check is "yes", naming the
    chunk that shares most words with the claim."""
    s = server.script
    s.extractions.update({ANSWER: ANSWER_CLAIMS, EXPECTED: EXPECTED_CLAIMS})
    s.task_verdicts[("supported", "300 metres")] = "no"  # contradicted by the ground truth and chunk 2
    s.task_verdicts[("supported", "capital of France", "Gustave")] = "idk"  # not in the ground truth
    s.task_verdicts[("supported", "Gustave", "Statue of Liberty")] = "idk"  # in no chunk
    s.task_verdicts[("supported", "330 metres", "300 metres")] = "no"  # the answer says otherwise


async def test_the_worked_example_every_metric_from_four_calls(
    openai_server: ScriptedOpenAIServer, openai_judge: OpenAIJudge
) -> None:
    script(openai_server)
    metrics = [
        *DIAGNOSTICS,
        Faithfulness(),
        NoiseSensitivity(),
        NoiseSensitivity(mode="relevant"),
        NoiseSensitivity(mode="irrelevant"),
    ]
    evaluation = await a_evaluate([CASE], metrics, openai_judge)
    scores = {r.name: r.score for r in evaluation.cases[0].results}
    assert scores == {name: pytest.approx(value) for name, value in EXPECTED_SCORES.items()}
    # Two extractions (answer, expected output) and one merged call per side's claims: 4 calls for twelve
    # metrics, the same as for faithfulness + claim recall.
    assert sorted(openai_server.operations()) == ["checks", "checks", "claims", "claims"]
    assert evaluation.cases[0].usage.calls == 4


async def test_the_generator_partition_sums_to_one(openai_server, openai_judge) -> None:
    """Every answer claim is faithful, self-knowledge or hallucinated (RAGChecker's partition), and
    noise sensitivity over all claims is 1 - precision: the same verdicts, counted twice."""
    script(openai_server)
    metrics = [Faithfulness(), SelfKnowledge(), ClaimHallucination(), NoiseSensitivity(), ClaimPrecision()]
    results = (await a_evaluate([CASE], metrics, openai_judge)).cases[0].by_name()
    grounded = sum(results[n].score or 0.0 for n in ("faithfulness", "self_knowledge", "claim_hallucination"))
    assert grounded == pytest.approx(1.0)
    assert results["noise_sensitivity"].score == pytest.approx(1 - (results["claim_precision"].score or 0.0))


async def test_reasons_and_verdicts_name_the_claims(openai_server, openai_judge) -> None:
    script(openai_server)
    precision = await ClaimPrecision().a_measure(CASE, openai_judge)
    assert precision.reason.startswith("3 of 5 answer claims are entailed by the expected output; not:")
    assert "'The Eiffel Tower is 300 metres tall.'" in precision.reason
    assert [(v.item, v.label) for v in precision.verdicts][1:4] == [
        ("Paris is the capital of France.", "not_found"),
        ("The Eiffel Tower was completed in 1889.", "supported"),
        ("The Eiffel Tower is 300 metres tall.", "contradicted"),
    ]
    recall = await ClaimRecall().a_measure(CASE, openai_judge)
    assert "missing: 'The Eiffel Tower is 330 metres tall.'" in recall.reason
    assert {v.check for v in recall.verdicts} == {"supported_by_answer"}

    hallucinated = await ClaimHallucination().a_measure(CASE, openai_judge)
    assert hallucinated.outcome is Outcome.FAILED and hallucinated.lower_is_better  # threshold 0
    assert "namely: 'The Eiffel Tower is 300 metres tall.'" in hallucinated.reason
    known = await SelfKnowledge().a_measure(CASE, openai_judge)
    assert known.outcome is Outcome.PASSED and "Gustave Eiffel's company" in known.reason

    chunks = await RetrieverContextPrecision().a_measure(CASE, openai_judge)
    assert [(v.verdict, v.label) for v in chunks.verdicts] == [
        ("yes", "relevant"),
        ("yes", "relevant"),
        ("no", "irrelevant"),
        ("no", "irrelevant"),
    ]
    assert chunks.verdicts[0].reason.startswith("entails: 'The Eiffel Tower is in Paris.'")
    assert chunks.reason == "2 of 4 retrieved chunks entail an expected-output claim; none: chunks 3, 4"
    retrieved = await RetrieverClaimRecall().a_measure(CASE, openai_judge)
    assert [v.supporting_ids for v in retrieved.verdicts] == [[0], [0], [1], []]  # as passages, for the page

    used = await ClaimContextUtilization().a_measure(CASE, openai_judge)
    assert "2 of 3 expected-output claims found in the retrieved chunks" in used.reason
    assert "unused: 'The Eiffel Tower is 330 metres tall.'" in used.reason
    f1 = await ClaimF1().a_measure(CASE, openai_judge)
    assert f1.details == {"precision": pytest.approx(0.6), "recall": pytest.approx(0.75)}


async def test_noise_in_relevant_chunks_outranks_irrelevant_ones(openai_server, openai_judge) -> None:
    """A wrong claim entailed by a relevant and an irrelevant chunk counts as noise from the relevant
    one only (RAGChecker and ragas keep the two variants exclusive)."""
    script(openai_server)
    openai_server.script.ids[("supported", "capital of France", "Statue of Liberty")] = [0, 2]
    evaluation = await a_evaluate(
        [CASE], [NoiseSensitivity(mode="relevant"), NoiseSensitivity(mode="irrelevant")], openai_judge
    )
    assert [r.score for r in evaluation.cases[0].results] == [pytest.approx(1 / 5), 0.0]
    assert (
        "entailed by a relevant chunk: 'Paris is the capital of France.'"
        in evaluation.cases[0].results[0].reason
    )


async def test_a_yes_without_chunk_ids_counts_for_recall_but_credits_no_chunk(
    openai_server, openai_judge
) -> None:
    script(openai_server)
    openai_server.script.ids[("supported", "330 metres tall", "Statue of Liberty")] = []
    results = (
        (await a_evaluate([CASE], [RetrieverClaimRecall(), RetrieverContextPrecision()], openai_judge))
        .cases[0]
        .by_name()
    )
    assert results["retriever_claim_recall"].score == pytest.approx(3 / 4)
    assert results["retriever_context_precision"].score == pytest.approx(1 / 4)  # chunk 2 is not named
    assert results["retriever_context_precision"].details == {"unattributed_claims": 1}


# -- unmeasured, zero and error --------------------------------------------------------------------
async def test_an_answer_without_claims(openai_server, openai_judge) -> None:
    openai_server.script.extractions["Hello!"] = []
    openai_server.script.task_verdicts[("supported", "", "Hello!")] = "idk"
    case = CASE.model_copy(update={"actual_output": "Hello!"})
    results = (await a_evaluate([case], DIAGNOSTICS, openai_judge)).cases[0].by_name()
    for name in ("claim_precision", "claim_f1", "claim_hallucination", "self_knowledge"):
        assert results[name].outcome is Outcome.UNMEASURED, name
        assert "no checkable claim" in results[name].reason
    assert results["retriever_claim_recall"].outcome is Outcome.PASSED  # the retriever did its part
    assert results["claim_recall"].score == 0.0  # "Hello!" says none of the expected claims


async def test_an_expected_output_without_claims(openai_server, openai_judge) -> None:
    openai_server.script.extractions["Thanks."] = []
    case = CASE.model_copy(update={"expected_output": "Thanks."})
    results = (await a_evaluate([case], DIAGNOSTICS, openai_judge)).cases[0].by_name()
    for name in ("claim_recall", "claim_f1", "retriever_claim_recall", "retriever_context_precision"):
        assert results[name].outcome is Outcome.UNMEASURED, name
        assert "the expected output states no claim" in results[name].reason


async def test_utilization_is_unmeasured_when_nothing_needed_was_retrieved(
    openai_server, openai_judge
) -> None:
    openai_server.script.extractions.update({ANSWER: ANSWER_CLAIMS, EXPECTED: EXPECTED_CLAIMS})
    case = CASE.model_copy(update={"retrieval_context": [CHUNKS[3]]})
    openai_server.script.task_verdicts[("supported", "Eiffel", "Statue of Liberty")] = "idk"
    results = (await a_evaluate([case], DIAGNOSTICS, openai_judge)).cases[0].by_name()
    assert results["claim_context_utilization"].outcome is Outcome.UNMEASURED
    assert "nothing to use" in results["claim_context_utilization"].reason
    assert results["retriever_claim_recall"].score == 0.0
    assert results["retriever_context_precision"].score == 0.0


async def test_f1_is_zero_when_nothing_matches(openai_server, openai_judge) -> None:
    openai_server.script.default_verdict = "idk"
    result = await ClaimF1().a_measure(CASE, openai_judge)
    assert (result.score, result.outcome) == (0.0, Outcome.FAILED)


async def test_a_malformed_judge_reply_is_an_error(openai_server, openai_judge) -> None:
    openai_server.failing = "malformed"
    results = (await a_evaluate([CASE], DIAGNOSTICS, openai_judge)).cases[0].results
    assert {r.outcome for r in results} == {Outcome.ERROR}
    assert all(r.score is None and r.reason.startswith("judge error") for r in results)


async def test_missing_fields_are_named(openai_judge: OpenAIJudge) -> None:
    with pytest.raises(MissingFieldError, match="expected_output"):
        await ClaimPrecision().a_measure({"actual_output": "Paris."}, openai_judge)
    with pytest.raises(MissingFieldError, match="retrieval_context"):
        await SelfKnowledge().a_measure(
            {"actual_output": "Paris.", "expected_output": "Paris."}, openai_judge
        )
    assert RetrieverContextPrecision.required_fields == (
        CaseField.RETRIEVAL_CONTEXT,
        CaseField.EXPECTED_OUTPUT,
    )


# -- names and judges ---------------------------------------------------------------------------------
def test_ragchecker_names_are_aliases_and_none_shadows_another_metric() -> None:
    for alias, name in ALIASES.items():
        if alias.startswith("ragchecker_") and alias not in ALIAS_OPTIONS:
            assert create_metric(alias).name == name
    assert isinstance(create_metric("ragchecker_faithfulness"), Faithfulness)
    for alias, mode in (
        ("noise_sensitivity_relevant", "relevant"),  # ragas' name, for ragas' (and RAGChecker's) variant
        ("noise_sensitivity_irrelevant", "irrelevant"),
        ("ragchecker_noise_sensitivity_in_relevant", "relevant"),
        ("ragchecker_noise_sensitivity_in_irrelevant", "irrelevant"),
    ):
        metric = create_metric(alias)
        assert isinstance(metric, NoiseSensitivity) and metric.mode == mode, alias
        assert metric.name == f"noise_sensitivity_{mode}"
    assert create_metric("noise_sensitivity_relevant", threshold=0.1).threshold == 0.1
    assert create_metric("hallucination").name == "hallucination"  # deepeval's, untouched
    assert create_metric("context_utilization").name == "context_utilization"  # ragas', untouched


async def test_created_by_name_they_score_the_worked_example(openai_server, openai_judge) -> None:
    script(openai_server)
    names = [alias for alias in ALIASES if alias.startswith("ragchecker_")]
    evaluation = await a_evaluate([CASE], [create_metric(n) for n in names], openai_judge)
    for result in evaluation.cases[0].results:
        assert result.score == pytest.approx(EXPECTED_SCORES[result.name]), result.name


class PlainJudge:
    """The OpenAI judge without its batching operations, as a judge that lacks them is driven."""

    def __init__(self, judge: OpenAIJudge) -> None:
        self.judge = judge
        self.info: JudgeInfo = judge.info

    async def extract(
        self, text: str, kind: ExtractKind, *, question: str | None = None, limit: int | None = None
    ) -> list[str]:
        return await self.judge.extract(text, kind, question=question, limit=limit)

    async def verdicts(
        self, items: Sequence[str], references: Sequence[str], task: VerdictTask, *, sample: int = 0
    ) -> list[Verdict]:
        return await self.judge.verdicts(items, references, task, sample=sample)


async def test_a_judge_without_batching_asks_each_check_once(openai_server, openai_judge) -> None:
    script(openai_server)
    evaluation = await a_evaluate([CASE], DIAGNOSTICS, PlainJudge(openai_judge))  # type: ignore[arg-type]
    scores = {r.name: r.score for r in evaluation.cases[0].results}
    assert scores == {name: pytest.approx(EXPECTED_SCORES[name]) for name in scores}
    assert sorted(openai_server.operations()) == ["claims"] * 2 + ["verdicts_supported"] * 4


async def test_the_offline_judge_gives_sane_numbers() -> None:
    from evaluators.offline import OfflineJudge

    evaluation = await a_evaluate([CASE], DIAGNOSTICS, OfflineJudge())
    results = evaluation.cases[0].by_name()
    for result in results.values():
        assert result.outcome in (Outcome.PASSED, Outcome.FAILED), (result.name, result.reason)
        assert result.score is not None and 0.0 <= result.score <= 1.0
    assert results["claim_precision"].score is not None and 0.0 < results["claim_precision"].score < 1.0
    assert results["claim_hallucination"].score is not None and results["claim_hallucination"].score > 0.0
    assert (
        results["retriever_claim_recall"].score is not None and results["retriever_claim_recall"].score >= 0.5
    )
    context_precision = results["retriever_context_precision"]
    assert [v.verdict for v in context_precision.verdicts][3] == "no"  # the Statue of Liberty entails nothing
    assert evaluation.usage.prompt_tokens == 0


async def test_failures_name_their_cause_and_chunks_their_relevance(openai_server, openai_judge) -> None:
    """The failure causes read the diagnostics' verdicts like the others': no extra call."""
    from evaluators import Cause, failure_causes, passage_relevance

    script(openai_server)
    metrics = [ClaimHallucination(), RetrieverClaimRecall(threshold=0.9), RetrieverContextPrecision()]
    results = (await a_evaluate([CASE], metrics, openai_judge)).cases[0].results
    assert failure_causes(CASE, results) == {
        "claim_hallucination": Cause.CONTRADICTED_CLAIM,  # '300 metres' contradicts chunk 2
        "retriever_claim_recall": Cause.INCOMPLETE_CONTEXT,
    }
    assert passage_relevance(results, len(CHUNKS)) == ["relevant", "relevant", "irrelevant", "irrelevant"]
