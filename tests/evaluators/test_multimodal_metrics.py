"""Multi-modal RAG: the image rule, multimodal faithfulness / relevance (ragas, LlamaIndex), and text
metrics that never read an image as text.

The metrics run through `OpenAIJudge` -> the real `openai` client -> the scripted server, which sees the
image passages as `image_url` content parts (asserted on the recorded requests) and answers the
scripted verdicts of the worked example in docs/evaluators.md.
"""

from __future__ import annotations

import pytest

from evaluators import OpenAIJudge, Outcome, TestCase, a_evaluate, create_metric, required_inputs
from evaluators.case import CaseField
from evaluators.images import MAX_DATA_URI_CHARS, image_positions, is_image, kept_image, short_form
from evaluators.judges.prompts import parse_fenced
from evaluators.metrics.citations import CitationPrecision
from evaluators.metrics.faithfulness import Faithfulness
from evaluators.metrics.multimodal import MultimodalFaithfulness, MultimodalRelevance
from evaluators.metrics.retrieval import ContextualPrecision
from evaluators.result import verdict_passages
from evaluators.session import JudgeSession
from testkit.chat_request import images_of, text_of
from testkit.openai_server import IMAGE_TOKENS, JudgeScript, ScriptedOpenAIServer

# A real 1x1 PNG, as an app embeds a retrieved image, and a poster image by URL.
PIXEL = (
    "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQ"
    "AAAABJRU5ErkJggg=="
)
POSTER = "https://images.example.com/posters/tram-28.jpg?sig=abc"
TIMETABLE = "Tram 28 runs from Martim Moniz to Campo de Ourique every 12 minutes."
QUESTION = "What colour is the tram on the poster, and how often does it run?"
GROUNDED = TestCase(
    id="grounded",
    input=QUESTION,
    actual_output="The tram on the poster is yellow and runs every 12 minutes.",
    retrieval_context=[TIMETABLE, POSTER],
)
INVENTED = GROUNDED.model_copy(
    update={"id": "invented", "actual_output": "The tram on the poster is red and runs every 5 minutes."}
)


# -- the rule -------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("passage", "image"),
    [
        (PIXEL, True),
        (f"  {PIXEL}\n", True),
        ("data:image/webp;base64,UklGRg==", True),
        (POSTER, True),
        ("http://example.com/a/b.PNG", True),
        ("https://example.com/photo.jpeg#top", True),
        ("https://example.com/gallery?id=3", False),  # no image extension: cannot tell without fetching
        ("/var/images/tram.png", False),  # a local path is never read
        ("data:text/plain;base64,aGVsbG8=", False),
        ("data:image/png;base64,", False),
        (f"See {POSTER} for the poster.", False),  # text that mentions a URL is text
        ("The tram is yellow.", False),
    ],
)
def test_what_is_an_image_passage(passage: str, image: bool) -> None:
    assert is_image(passage) is image


def test_sizes_bound_what_the_collector_keeps_never_the_kind() -> None:
    huge = "data:image/png;base64," + "A" * MAX_DATA_URI_CHARS
    assert is_image(huge) and kept_image(huge) == (None, "too_large")
    assert kept_image("__REDACTED__") == (None, "not_recognised")
    assert kept_image(f" {POSTER} ") == (POSTER, "")
    assert short_form(huge) == f"data:image/png;base64,… ({len(huge)} chars)"
    assert image_positions([TIMETABLE, PIXEL, POSTER]) == [1, 2]


# -- the worked example (docs/evaluators.md) -------------------------------------------------------------
def script(server: ScriptedOpenAIServer) -> None:
    server.script = JudgeScript(
        task_verdicts={
            ("visual_supported", "red", POSTER): "no",
            ("visual_relevant", "red", POSTER): "no",
        }
    )


async def test_multimodal_faithfulness_worked_example(
    openai_server: ScriptedOpenAIServer, openai_judge: OpenAIJudge
) -> None:
    script(openai_server)
    evaluation = await a_evaluate([GROUNDED, INVENTED], [MultimodalFaithfulness()], openai_judge)
    grounded, invented = (case.results[0] for case in evaluation.cases)
    assert (grounded.score, invented.score) == (1.0, 0.0)
    assert evaluation.summary("multimodal_faithfulness").mean == 0.5
    assert grounded.reason.startswith("the response is supported by the context (1 image(s) and 1 text")
    assert invented.outcome == Outcome.FAILED and invented.verdicts[0].label == "unsupported"
    assert grounded.details == {"image_passages": 1, "text_passages": 1}
    # One call per case, and it carries the image as an image: an image_url part, `<image 1>` fenced.
    requests = openai_server.chat_requests
    assert [r.operation for r in requests] == ["visual_supported", "visual_supported"]
    (user,) = [m for r in requests if GROUNDED.actual_output in text_of(m := r.body["messages"][1])]
    assert images_of(user) == [POSTER]
    fenced = parse_fenced(text_of(user))
    assert fenced["REFERENCES"] == [TIMETABLE, "<image 1>"]
    assert fenced["RESPONSE"] == GROUNDED.actual_output and "QUESTION" not in fenced
    assert grounded.usage.calls == 1 and grounded.usage.prompt_tokens > IMAGE_TOKENS


async def test_multimodal_relevance_asks_about_the_question_too(
    openai_server: ScriptedOpenAIServer, openai_judge: OpenAIJudge
) -> None:
    script(openai_server)
    relevancy = create_metric("multimodal_relevancy")  # LlamaIndex's name
    assert isinstance(relevancy, MultimodalRelevance)
    evaluation = await a_evaluate([GROUNDED, INVENTED], [relevancy], openai_judge)
    assert [case.results[0].score for case in evaluation.cases] == [1.0, 0.0]
    assert evaluation.cases[1].results[0].verdicts[0].label == "not_in_line"
    for request in openai_server.chat_requests:
        assert parse_fenced(text_of(request.body["messages"][1]))["QUESTION"] == QUESTION


async def test_a_data_uri_travels_whole_and_the_session_asks_once(
    openai_server: ScriptedOpenAIServer, openai_judge: OpenAIJudge
) -> None:
    case = GROUNDED.model_copy(update={"retrieval_context": [PIXEL, TIMETABLE, f" {POSTER}"]})
    session = JudgeSession(openai_judge)
    for metric in (MultimodalFaithfulness(), MultimodalFaithfulness(threshold=0.9)):
        assert (await metric.a_measure(case, session=session)).score == 1.0
    (request,) = openai_server.chat_requests  # two metrics, one question: memoised by the session
    user = request.body["messages"][1]
    assert images_of(user) == [PIXEL, POSTER]
    assert parse_fenced(text_of(user))["REFERENCES"] == ["<image 1>", TIMETABLE, "<image 2>"]
    assert "base64" not in text_of(user)  # the bytes are never prompt text


async def test_a_text_only_case_is_one_plain_text_call(
    openai_server: ScriptedOpenAIServer, openai_judge: OpenAIJudge
) -> None:
    case = GROUNDED.model_copy(update={"retrieval_context": [TIMETABLE]})
    result = await MultimodalFaithfulness().a_measure(case, openai_judge)
    assert result.score == 1.0 and result.usage.calls == 1
    assert isinstance(openai_server.chat_requests[0].body["messages"][1]["content"], str)


async def test_a_model_without_vision_is_one_clear_error_and_text_judging_goes_on() -> None:
    with ScriptedOpenAIServer(images_supported=False) as server:
        judge = OpenAIJudge("text-only-model", base_url=server.base_url, max_retries=0, cache_size=0)
        result = await MultimodalFaithfulness().a_measure(GROUNDED, judge)
        assert result.outcome == Outcome.ERROR and result.score is None
        assert "the judge model does not accept images" in result.reason
        assert "image_url is only supported by certain models" in result.reason
        # Each structured-output mode was tried, to tell a refused image from a refused mode; the mode
        # in force is still json_schema, so the judge's text calls are unchanged.
        assert [r.status for r in server.chat_requests] == [400, 400, 400]
        text = await Faithfulness().a_measure(GROUNDED, judge)
        assert text.outcome == Outcome.PASSED
        assert server.chat_requests[-1].body["response_format"]["type"] == "json_schema"


async def test_images_pass_in_a_plainer_mode_when_the_endpoint_refuses_json_schema() -> None:
    with ScriptedOpenAIServer(json_schema_supported=False) as server:
        judge = OpenAIJudge("vision-model", base_url=server.base_url, max_retries=0, cache_size=0)
        result = await MultimodalFaithfulness().a_measure(GROUNDED, judge)
        assert result.outcome == Outcome.PASSED
        assert [r.status for r in server.chat_requests] == [400, 200]
        await Faithfulness().a_measure(GROUNDED, judge)  # the refused mode is not tried again
        assert all(r.status == 200 for r in server.chat_requests[2:])


# -- the offline judge ---------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def offline():
    from evaluators.offline import OfflineJudge

    return OfflineJudge()


async def test_the_offline_judge_cannot_see_images_and_says_so(offline) -> None:
    evaluation = await a_evaluate([GROUNDED], [MultimodalFaithfulness(), MultimodalRelevance()], offline)
    for result in evaluation.cases[0].results:
        assert result.outcome == Outcome.UNMEASURED
        assert result.reason == (
            "unmeasured: the offline judge cannot see images: configure a vision-capable LLM judge"
        )


async def test_a_text_only_case_offline_is_the_claims_arithmetic(offline) -> None:
    text_only = {"retrieval_context": [TIMETABLE]}
    right = GROUNDED.model_copy(update={**text_only, "actual_output": "Tram 28 runs every 12 minutes."})
    wrong = GROUNDED.model_copy(update={**text_only, "actual_output": "Tram 28 runs every 5 minutes."})
    metrics = [MultimodalFaithfulness(), MultimodalRelevance(), Faithfulness()]
    evaluation = await a_evaluate([right, wrong], metrics, offline)
    scores = [[r.score for r in case.results] for case in evaluation.cases]
    assert scores == [[1.0, 1.0, 1.0], [0.0, 0.0, 0.0]]
    reason = evaluation.cases[1].results[0].reason
    assert reason.startswith("text-only context, judged claim by claim: 0 of 1 claims pass")


# -- text metrics never read an image as text ----------------------------------------------------------
async def test_text_metrics_skip_images_and_keep_passage_positions(
    openai_server: ScriptedOpenAIServer, openai_judge: OpenAIJudge
) -> None:
    case = GROUNDED.model_copy(
        update={"retrieval_context": [PIXEL, TIMETABLE, POSTER], "expected_output": "Every 12 minutes."}
    )
    faithfulness, precision = (
        (await a_evaluate([case], [Faithfulness(), ContextualPrecision()], openai_judge)).cases[0].results
    )
    for request in openai_server.chat_requests:
        assert "base64" not in str(request.body) and POSTER not in str(request.body)
    # The claims were judged against the timetable alone; its id is its real position, 1.
    supported = [v for v in faithfulness.verdicts if v.verdict == "yes"]
    assert supported and all(v.supporting_ids == [1] for v in supported)
    assert faithfulness.details["image_passages_not_read"] == 2
    assert faithfulness.reason.endswith("(2 image passage(s) not read)")
    # Precision ranks the text passage it judged; the images keep their slots, judging nothing.
    assert precision.score == 1.0
    assert [(v.check, v.verdict) for v in precision.verdicts] == [
        ("not_read", "idk"),
        ("useful", "yes"),
        ("not_read", "idk"),
    ]
    assert verdict_passages(precision.verdicts) == [[], [1], []]


async def test_a_context_of_images_only_is_unmeasured_for_text_metrics(
    openai_server: ScriptedOpenAIServer, openai_judge: OpenAIJudge
) -> None:
    case = GROUNDED.model_copy(update={"retrieval_context": [PIXEL, POSTER]})
    evaluation = await a_evaluate([case], [Faithfulness(), create_metric("hallucination")], openai_judge)
    for result in evaluation.cases[0].results:
        assert result.outcome == Outcome.UNMEASURED, result
        assert "the context holds only image passages" in result.reason
    assert openai_server.chat_requests == []


async def test_a_citation_of_an_image_is_left_unjudged(
    openai_server: ScriptedOpenAIServer, openai_judge: OpenAIJudge
) -> None:
    case = GROUNDED.model_copy(
        update={"actual_output": "The tram is yellow [2]. It runs every 12 minutes [1]."}
    )
    result = await CitationPrecision().a_measure(case, openai_judge)
    assert result.score == 1.0 and result.details["unjudged_citations"] == 1
    assert all(POSTER not in str(r.body) for r in openai_server.chat_requests)
    only_image = case.model_copy(update={"actual_output": "The tram is yellow [2]."})
    unmeasured = await CitationPrecision().a_measure(only_image, openai_judge)
    assert unmeasured.outcome == Outcome.UNMEASURED and "image passages" in unmeasured.reason


# -- online use: by name, as the collector's sampling asks ---------------------------------------------
def test_the_registry_knows_both_metrics_under_both_vocabularies() -> None:
    for name, cls in (
        ("multimodal_faithfulness", MultimodalFaithfulness),
        ("multi_modal_faithfulness", MultimodalFaithfulness),
        ("multimodal_relevance", MultimodalRelevance),
        ("multimodal_relevancy", MultimodalRelevance),
    ):
        assert type(create_metric(name)) is cls
    assert required_inputs("multimodal_faithfulness") == (
        CaseField.ACTUAL_OUTPUT,
        CaseField.RETRIEVAL_CONTEXT,
    )
    assert CaseField.INPUT in required_inputs("multimodal_relevancy")
