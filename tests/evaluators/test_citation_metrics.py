"""Citation precision and coverage (Bedrock): marker parsing, the worked example, edge cases, judge calls.

The metrics run through `OpenAIJudge` -> the real `openai` client -> the scripted server, whose
(task, item, reference) verdicts reproduce the hand-computed example in docs/evaluators.md.
"""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from evaluators import OpenAIJudge, Outcome, TestCase, a_evaluate
from evaluators.case import CaseField, MissingFieldError
from evaluators.citations_parse import cited_sentences, parse_citations, without_citations
from evaluators.judges.base import Verdict, VerdictTask
from evaluators.metrics.citations import CitationCoverage, CitationPrecision
from testkit.openai_server import ScriptedOpenAIServer


def labels(text: str, passages: int = 5, **options) -> list[tuple[str, int | None]]:
    return [(c.label, c.passage) for c in parse_citations(text, passages, **options)]


# -- parsing ------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Paris [1].", [("1", 0)]),
        ("Paris [1, 3].", [("1", 0), ("3", 2)]),
        ("Paris [1;3].", [("1", 0), ("3", 2)]),
        ("Paris [1-3].", [("1", 0), ("2", 1), ("3", 2)]),
        ("Paris [2–3].", [("2", 1), ("3", 2)]),
        ("Paris [1][2].", [("1", 0), ("2", 1)]),
        ("Paris [doc-3].", [("doc-3", 2)]),
        ("Paris [doc3] [Doc 2] [document_1].", [("doc3", 2), ("Doc 2", 1), ("document_1", 0)]),
        ("Paris [source 2] [passage 4] [ref-5].", [("source 2", 1), ("passage 4", 3), ("ref-5", 4)]),
        ("Paris [doc-1, doc-2].", [("doc-1", 0), ("doc-2", 1)]),
        ("Paris[^1] and Lyon[^2].", [("^1", 0), ("^2", 1)]),
        ("Paris is the capital¹ and largest city.²", [("1", 0), ("2", 1)]),
        ("Paris is the capital¹,³.", [("1", 0), ("3", 2)]),
    ],
)
def test_every_citation_form(text: str, expected: list[tuple[str, int | None]]) -> None:
    assert labels(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "Sales grew in [2023].",  # a year in brackets, no such passage
        "Between [1990-2000] sales grew.",
        "See [the docs](https://example.com/1).",  # a markdown link
        "See [the docs][2].",  # a reference-style link
        "![figure 1](chart.png)",
        "An area of 5 m² and E = mc².",  # superscripts of units and formulas
        "Use the [x] flag or [see above].",
        "Checkboxes: [ ] and [].",
    ],
)
def test_what_is_not_a_citation(text: str) -> None:
    assert labels(text) == []


def test_a_numbered_source_link_is_a_citation_and_leaves_no_url_behind() -> None:
    (sentence,) = cited_sentences("Paris is the capital [2](https://example.com/paris).", 5)
    assert sentence.text == "Paris is the capital." and [c.passage for c in sentence.citations] == [1]


def test_a_citation_outside_the_retrieved_passages_says_so() -> None:
    (cited,) = parse_citations("Paris [7].", 5)
    assert (cited.passage, cited.problem) == (None, "cites [7], but only 5 passages were retrieved")
    (one,) = parse_citations("Paris [2].", 1)
    assert one.problem == "cites [2], but only 1 passage was retrieved"
    (zero,) = parse_citations("Paris [0].", 5)
    assert zero.problem == "cites [0], but passages are numbered from 1"


def test_a_year_that_names_a_passage_is_a_citation() -> None:
    assert labels("[100]", passages=150) == [("100", 99)]


def test_zero_based_numbering() -> None:
    assert labels("Paris [0] [4].", base=0) == [("0", 0), ("4", 4)]
    assert labels("Paris [5].", base=0)[0][1] is None


def test_ids_name_passages_when_the_case_has_them() -> None:
    ids = ["kb-17", "kb-3", "doc-1"]
    assert labels("A [KB-17]. B [kb 3]. C [doc-1]. D [doc-2].", 3, ids=ids) == [
        ("KB-17", 0),
        ("kb 3", 1),
        ("doc-1", 2),  # the id, not rank 1
        ("doc-2", 1),  # no such id: rank 2
    ]
    assert labels("A [KB-17].", 3) == []  # without ids, an unknown label is text


def test_markers_attach_to_their_sentence_and_definitions_are_not_statements() -> None:
    answer = (
        "The tower is in Paris [1]. It opened in 1889.[2] [3] It is 330 m tall [1][doc-1].\n\n"
        "Sources:\n[1]: https://example.com/tower\n[^2]: Guide to Paris"
    )
    found = cited_sentences(answer, 3)
    assert [(s.text, [c.passage for c in s.citations]) for s in found] == [
        ("The tower is in Paris.", [0]),
        ("It opened in 1889.", [1, 2]),  # markers after the full stop close the sentence before them
        ("It is 330 m tall.", [0]),  # one passage cited twice counts once
    ]


def test_citation_base_must_be_zero_or_one() -> None:
    with pytest.raises(ValueError, match="citation_base"):
        CitationPrecision(citation_base=2)


# -- the worked example (docs/evaluators.md) -------------------------------------------------------
PASSAGES = [
    "The Eiffel Tower is a wrought-iron lattice tower in Paris, France.",
    "The tower was completed in 1889 for the World's Fair.",
    "The tower is 330 metres tall.",
    "Gustave Eiffel's engineering company designed and built the tower.",
    "About seven million people visit the tower each year.",
]
ANSWER = (
    "The Eiffel Tower stands in Paris [1]. It was completed in 1889 [2]. "
    "It is 330 metres tall [1][3]. It was painted gold in 2020 [7]. "
    "Its lifts were made by Otis. Gustave Eiffel's company built it [4][5]."
)
CASE = TestCase(input="Tell me about the Eiffel Tower.", actual_output=ANSWER, retrieval_context=PASSAGES)


def script(server: ScriptedOpenAIServer) -> None:
    """Passage 1 does not give the height; passage 5 says nothing of who built the tower."""
    server.script.task_verdicts[("supported", "330 metres", "lattice tower")] = "no"
    server.script.task_verdicts[("supported", "company built it", "seven million")] = "no"


async def test_citation_precision_worked_example(
    openai_server: ScriptedOpenAIServer, openai_judge: OpenAIJudge
) -> None:
    script(openai_server)
    result = await CitationPrecision().a_measure(CASE, openai_judge)
    # Citations on factual sentences: [1] [2] [1] [3] [7] [4] [5]; supported: [1] [2] [3] [4].
    assert result.score == pytest.approx(4 / 7)
    assert result.outcome is Outcome.PASSED
    assert "4 of 7 citations supported" in result.reason
    assert "cites [7], but only 5 passages were retrieved: It was painted gold in 2020." in result.reason
    assert "[1] does not support it: It is 330 metres tall." in result.reason
    assert [(v.verdict, v.source_ids, v.supporting_ids) for v in result.verdicts] == [
        ("yes", [0], [0]),
        ("yes", [1], [1]),
        ("no", [0], []),
        ("yes", [2], [2]),
        ("no", [], []),
        ("yes", [3], [3]),
        ("no", [4], []),
    ]
    assert result.verdicts[2].check == "supported_by_cited_passage [1]"


async def test_citation_coverage_worked_example(
    openai_server: ScriptedOpenAIServer, openai_judge: OpenAIJudge
) -> None:
    script(openai_server)
    result = await CitationCoverage().a_measure(CASE, openai_judge)
    # Six factual sentences; covered: Paris, 1889, 330 m (by [3]), built by (by [4]); not: [7], Otis.
    assert result.score == pytest.approx(4 / 6)
    assert "4 of 6 factual sentences supported by the passages they cite" in result.reason
    assert "1 cite nothing: 'Its lifts were made by Otis.'" in result.reason
    assert "cites [7], but only 5 passages were retrieved" in result.reason
    assert [(v.verdict, v.supporting_ids) for v in result.verdicts] == [
        ("yes", [0]),
        ("yes", [1]),
        ("yes", [2]),
        ("no", []),
        ("no", []),
        ("yes", [3]),
    ]
    assert result.verdicts[2].reason.startswith("supported by [3]")
    assert result.verdicts[4].reason == "cites no passage"


async def test_both_metrics_share_one_call_per_cited_passage(
    openai_server: ScriptedOpenAIServer, openai_judge: OpenAIJudge
) -> None:
    script(openai_server)
    evaluation = await a_evaluate([CASE], [CitationPrecision(), CitationCoverage()], openai_judge)
    scores = [r.score for r in evaluation.cases[0].results]
    assert scores == [pytest.approx(4 / 7), pytest.approx(4 / 6)]
    # Passages 1, 2, 3 are cited by different sentences: a call each. Passages 4 and 5 are cited by
    # the same sentence: one call with two checks. No extraction: sentences are split without the judge.
    assert sorted(openai_server.operations()) == ["checks", *["verdicts_supported"] * 3]


class PlainJudge:
    """The OpenAI judge without its batching operations, as a judge that lacks them is driven."""

    def __init__(self, judge: OpenAIJudge) -> None:
        self.judge = judge
        self.info = judge.info

    async def verdicts(
        self, items: Sequence[str], references: Sequence[str], task: VerdictTask, *, sample: int = 0
    ) -> list[Verdict]:
        return await self.judge.verdicts(items, references, task, sample=sample)


async def test_a_judge_without_batching_gets_one_call_per_cited_passage(
    openai_server: ScriptedOpenAIServer, openai_judge: OpenAIJudge
) -> None:
    script(openai_server)
    result = await CitationPrecision().a_measure(CASE, PlainJudge(openai_judge))  # type: ignore[arg-type]
    assert result.score == pytest.approx(4 / 7)
    assert openai_server.operations() == ["verdicts_supported"] * 5


async def test_many_passages_cited_by_one_sentence_stay_within_a_call_s_checks(
    openai_server: ScriptedOpenAIServer, openai_judge: OpenAIJudge
) -> None:
    passages = [f"Fact number {i} about Paris." for i in range(1, 11)]
    case = TestCase(actual_output="Paris has ten facts [1-10].", retrieval_context=passages)
    result = await CitationPrecision().a_measure(case, openai_judge)
    assert result.score == 1.0 and len(result.verdicts) == 10
    assert openai_server.operations() == ["checks"] * 3  # 4 + 4 + 2 checks, never more than the judge takes


# -- unmeasured and edge cases ----------------------------------------------------------------------
async def test_an_answer_without_citations(openai_server: ScriptedOpenAIServer, openai_judge) -> None:
    case = CASE.model_copy(update={"actual_output": "The Eiffel Tower is in Paris. It opened in 1889."})
    precision = await CitationPrecision().a_measure(case, openai_judge)
    assert precision.outcome is Outcome.UNMEASURED and precision.score is None
    assert "the answer cites no passage" in precision.reason
    coverage = await CitationCoverage().a_measure(case, openai_judge)
    assert (coverage.score, coverage.outcome) == (0.0, Outcome.FAILED)
    assert "0 of 2 factual sentences" in coverage.reason and "2 cite nothing" in coverage.reason
    assert openai_server.operations() == []  # nothing cited, nothing to ask


async def test_only_citations_outside_the_retrieved_passages(openai_server, openai_judge) -> None:
    case = CASE.model_copy(update={"actual_output": "The tower is in Paris [7]."})
    precision = await CitationPrecision().a_measure(case, openai_judge)
    coverage = await CitationCoverage().a_measure(case, openai_judge)
    assert precision.score == coverage.score == 0.0
    assert "cites [7], but only 5 passages were retrieved" in precision.reason
    assert "cites [7], but only 5 passages were retrieved" in coverage.reason
    assert openai_server.operations() == []


async def test_no_checkable_fact(openai_server, openai_judge) -> None:
    case = CASE.model_copy(update={"actual_output": "Thanks! Any other question about [1]?"})
    precision = await CitationPrecision().a_measure(case, openai_judge)
    coverage = await CitationCoverage().a_measure(case, openai_judge)
    assert precision.outcome is coverage.outcome is Outcome.UNMEASURED
    assert "on sentences that state no checkable fact" in precision.reason
    assert "states no checkable fact" in coverage.reason


async def test_zero_based_citations(openai_server: ScriptedOpenAIServer, openai_judge) -> None:
    script(openai_server)
    answer = "The Eiffel Tower stands in Paris [0]. It is 330 metres tall [0][2]."
    case = CASE.model_copy(update={"actual_output": answer})
    result = await CitationPrecision(citation_base=0).a_measure(case, openai_judge)
    assert result.score == pytest.approx(2 / 3)
    coverage = await CitationCoverage(citation_base=0).a_measure(case, openai_judge)
    assert coverage.verdicts[1].reason.startswith("supported by [2]")


@pytest.mark.skipif(
    "retrieved_context_ids" not in TestCase.model_fields, reason="TestCase carries no passage ids yet"
)
async def test_ids_on_the_case_name_the_cited_passages(
    openai_server: ScriptedOpenAIServer, openai_judge: OpenAIJudge
) -> None:
    script(openai_server)
    answer = "The Eiffel Tower stands in Paris [kb-9]. It is 330 metres tall [kb-7]."
    ids = ["kb-9", "kb-5", "kb-7", "kb-1", "kb-2"]  # "kb" labels resolve only through ids
    case = CASE.model_copy(update={"actual_output": answer, "retrieved_context_ids": ids})
    result = await CitationPrecision().a_measure(case, openai_judge)
    assert result.score == 1.0 and [v.source_ids for v in result.verdicts] == [[0], [2]]


async def test_missing_fields_are_named(openai_judge: OpenAIJudge) -> None:
    with pytest.raises(MissingFieldError, match="retrieval_context"):
        await CitationCoverage().a_measure({"actual_output": "Paris [1]."}, openai_judge)
    assert CitationPrecision.required_fields == (CaseField.ACTUAL_OUTPUT, CaseField.RETRIEVAL_CONTEXT)


async def test_the_offline_judge_reproduces_the_worked_example() -> None:
    from evaluators.offline import OfflineJudge

    evaluation = await a_evaluate([CASE], [CitationPrecision(), CitationCoverage()], OfflineJudge())
    assert [r.score for r in evaluation.cases[0].results] == [pytest.approx(4 / 7), pytest.approx(4 / 6)]


def test_claims_are_read_without_their_citation_markers() -> None:
    """The offline judge reads claims through `without_citations`: markers go, bracketed years and
    links stay, and so do line breaks (they end sentences)."""
    text = "It is 330 metres tall [2]. Built in 1889 [1][3].\nIn [2023] it had 7 [^1] visitors¹ [doc-4]."
    assert without_citations(text) == "It is 330 metres tall. Built in 1889.\nIn [2023] it had 7 visitors."
    assert without_citations("See [the docs](https://x.y).") == "See [the docs](https://x.y)."
