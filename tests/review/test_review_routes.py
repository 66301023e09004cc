"""Reviewers' corrections over HTTP on the real status server: the queue, recording a correction, the
refit it triggers, hide_texts, the token, and the correction's way back from the results topic."""

from __future__ import annotations

import contextlib
import dataclasses
import json
from collections.abc import Iterator
from typing import Any

import httpx
from pydantic import SecretStr

from collector.page.app import Page
from collector.page.config import PageConfig
from collector.page.results_reader import from_message
from collector.review import corrections
from collector.review.config import ReviewConfig
from collector.review.corrections import Correction
from collector.review.metrics import JUDGE_CORRECTION_AGREEMENT
from collector.stages import Outcome
from tests.page.factories import faithfulness, make_record, relevancy
from tests.page.test_routes import serve as serve_page


@contextlib.contextmanager
def serve(
    config: PageConfig | None = None, review: ReviewConfig | None = None, hide_texts: bool = False
) -> Iterator[tuple[str, Page]]:
    """The page on a real status server; what it would send on the results topic is kept in
    `page.published`."""
    review = review or ReviewConfig(min_corrections=4, random_share=0)
    with serve_page(config or PageConfig(), hide_texts, review) as (base, page):
        published: list[Correction] = []
        assert page.review is not None
        page.review.publish = published.append
        page.published = published  # type: ignore[attr-defined]
        yield base, page


def scored(
    page: Page, score: float, service: str = "shop", confident: float | None = None
) -> tuple[str, str]:
    """One record scored on faithfulness (threshold 0.7) and relevancy; its (trace, span)."""
    record = make_record(service=service)
    evaluation = faithfulness(score)
    if confident is not None:
        verdicts = tuple(v.model_copy(update={"confidence": confident}) for v in evaluation.verdicts)
        evaluation = dataclasses.replace(evaluation, verdicts=verdicts)
    page.exporter.export(record, [evaluation, relevancy()])
    assert page.exporter.force_flush(5.0)
    return record.trace_id, record.anchor_span_id


def correct(base: str, trace: str, span: str, **body: Any) -> httpx.Response:
    return httpx.post(f"{base}/api/corrections/{trace}/{span}", json={"metric": "faithfulness", **body})


def test_a_correction_is_stored_shown_published_and_leaves_the_queue() -> None:
    with serve() as (base, page):
        trace, span = scored(page, 0.5, confident=0.55)
        queue = httpx.get(f"{base}/api/review").json()["queue"]
        assert [
            (row["trace_id"], row["metric"], row["why"]) for row in queue if row["metric"] == "faithfulness"
        ] == [(trace, "faithfulness", "doubted")]
        detail = httpx.get(f"{base}/evaluations/{trace}/{span}?review=faithfulness").text
        assert 'id="review-form"' in detail and 'name="claim-1"' in detail and "confidence 0.55" in detail

        answer = correct(
            base, trace, span, reviewer="Ana", outcome_right=False, note="512 is the antenna height",
            claims=[{"index": 0, "verdict": "supported"}, {"index": 1, "verdict": "supported"}],
        )  # fmt: skip
        assert answer.status_code == 200, answer.text
        saved = answer.json()["correction"]
        assert saved["reviewer"] == "Ana" and saved["outcome_right"] is False and saved["outcome"] == "failed"
        assert [c["judge_verdict"] for c in saved["claims"]] == ["supported", "contradicted"]
        assert [c.trace_id for c in page.published] == [trace]  # type: ignore[attr-defined]

        api = httpx.get(f"{base}/api/evaluations/{trace}/{span}").json()
        by_metric = {e["metric"]: e for e in api["evaluations"]}
        assert by_metric["faithfulness"]["correction"]["note"] == "512 is the antenna height"
        assert by_metric["answer_relevancy"]["correction"] is None
        assert "Corrected by <b>Ana</b>" in httpx.get(f"{base}/evaluations/{trace}/{span}").text
        left = httpx.get(f"{base}/api/review").json()["queue"]
        assert all(row["metric"] != "faithfulness" for row in left)


def test_corrections_refit_the_threshold_and_report_agreement_before_and_after() -> None:
    with serve() as (base, page):
        # The judge fails answers at 0.6 and 0.65 that reviewers call right; 0.3 and 0.4 are rightly failed.
        for score, right in ((0.6, False), (0.65, False), (0.62, False), (0.3, True), (0.4, True)):
            trace, span = scored(page, score)
            assert correct(base, trace, span, reviewer="Ana", outcome_right=right).status_code == 200
        (fit,) = page.thresholds.fits
        assert (fit.metric, fit.service, fit.judge, fit.corrections) == ("faithfulness", "shop", "openai", 5)
        assert fit.shipped == 0.7 and fit.agreement_shipped == 0.4
        assert fit.agreement_fitted == 1.0 and fit.applied and 0.4 < fit.fitted < 0.6
        labels = ("faithfulness", "shop", "openai")
        assert JUDGE_CORRECTION_AGREEMENT.labels(*labels, "shipped")._value.get() == 0.4
        assert JUDGE_CORRECTION_AGREEMENT.labels(*labels, "fitted")._value.get() == 1.0

        # The evaluator's view: a 0.6 now passes for this service, not for another.
        from evaluators import MetricResult

        result = MetricResult(
            name="faithfulness", outcome=Outcome.FAILED, score=0.6, passed=False, threshold=0.7
        )
        assert page.thresholds.apply("shop", "openai", result).outcome == Outcome.PASSED
        assert page.thresholds.apply("wiki", "openai", result).outcome == Outcome.FAILED

        html = httpx.get(f"{base}/review").text
        assert 'id="fits-table"' in html and "100%" in html and "40%" in html


def test_too_few_or_unhelpful_corrections_leave_the_shipped_threshold() -> None:
    with serve(review=ReviewConfig(min_corrections=10, random_share=0)) as (base, page):
        for score, right in ((0.6, False), (0.3, True)):
            trace, span = scored(page, score)
            correct(base, trace, span, reviewer="Ana", outcome_right=right)
        (fit,) = page.thresholds.fits
        assert not fit.applied and fit.in_force == 0.7


def test_bad_corrections_are_refused_in_one_line() -> None:
    with serve() as (base, page):
        trace, span = scored(page, 0.5)
        assert correct(base, trace, span, outcome_right=True).json()["error"] == "give your name (reviewer)"
        bad_claim = correct(base, trace, span, reviewer="Ana", claims=[{"index": 7, "verdict": "supported"}])
        assert (
            bad_claim.status_code == 400
            and "not one of this evaluation's claims" in bad_claim.json()["error"]
        )
        nothing = correct(base, trace, span, reviewer="Ana")
        assert nothing.json()["error"] == "mark the outcome right or wrong, or at least one claim"
        form = httpx.post(f"{base}/api/corrections/{trace}/{span}", data={"metric": "faithfulness"})
        assert form.status_code == 415  # a form post from another site cannot correct anything
        assert correct(base, "0" * 32, "0" * 16, reviewer="Ana", outcome_right=True).status_code == 404


def test_the_token_guards_corrections_and_hide_texts_keeps_no_text() -> None:
    config = PageConfig(token=SecretStr("t0ken"))
    with serve(config, hide_texts=True) as (base, page):
        trace, span = scored(page, 0.5)
        assert correct(base, trace, span, reviewer="Ana", outcome_right=False).status_code == 401
        answer = httpx.post(
            f"{base}/api/corrections/{trace}/{span}",
            json={"metric": "faithfulness", "reviewer": "Ana", "outcome_right": False, "note": "a secret",
                  "claims": [{"index": 1, "verdict": "supported"}]},
            headers={"Authorization": "Bearer t0ken"},
        )  # fmt: skip
        assert answer.status_code == 200
        assert answer.json()["correction"]["note"] is None
        assert answer.json()["correction"]["claims"][0]["claim"] is None
        with page.store.reader() as db:
            (stored,) = corrections.of_record(db, trace, span).values()
        assert (
            stored.note is None and stored.claims[0].claim is None and stored.claims[0].verdict == "supported"
        )


def test_a_correction_from_the_results_topic_lands_in_another_replicas_store() -> None:
    with serve() as (base, page), serve() as (other_base, other):
        trace, span = scored(page, 0.5)
        scored_copy = make_record(trace_id=trace, anchor_span_id=span)
        other.exporter.export(scored_copy, [faithfulness(0.5)])
        assert other.exporter.force_flush(5.0)
        correct(base, trace, span, reviewer="Ana", outcome_right=False)
        (sent,) = page.published  # type: ignore[attr-defined]
        value = json.dumps(corrections.document(sent)).encode()
        read = from_message(value, 0)
        assert read == sent
        assert other.writer.submit([read]) and other.writer.flush()
        detail = httpx.get(f"{other_base}/api/evaluations/{trace}/{span}").json()
        (faith,) = [e for e in detail["evaluations"] if e["metric"] == "faithfulness"]
        assert faith["correction"]["reviewer"] == "Ana"
        assert other.thresholds.fits and other.thresholds.fits[0].corrections == 1


def test_a_cascade_disagreement_comes_first_in_the_queue() -> None:
    with serve() as (base, page):
        scored(page, 0.5, confident=0.51)
        record = make_record()
        escalated = dataclasses.replace(faithfulness(0.9), offline_outcome=Outcome.FAILED)
        page.exporter.export(record, [escalated])
        assert page.exporter.force_flush(5.0)
        queue = httpx.get(f"{base}/api/review", params={"metric": "faithfulness"}).json()["queue"]
        assert [row["why"] for row in queue] == ["disagreement", "doubted"]
        assert queue[0]["trace_id"] == record.trace_id
        assert "offline judge said failed" in queue[0]["why_words"]


def test_a_share_of_the_queue_is_drawn_at_random_whatever_the_judge_said() -> None:
    with serve(review=ReviewConfig(random_share=1.0, queue_size=3)) as (base, page):
        for score in (0.5, 0.9, 0.2):
            scored(page, score, confident=0.99)
        queue = httpx.get(f"{base}/api/review", params={"metric": "faithfulness"}).json()["queue"]
        assert [row["why"] for row in queue] == ["random"] * 3
        assert {row["outcome"] for row in queue} == {"passed", "failed"}
