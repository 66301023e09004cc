"""The evaluations list in the store's SQL: paging over a fixed moment, sorting, search and filters,
and the query parameters that carry all of it (the list's address is its whole state)."""

from __future__ import annotations

from collector.exporters.verdicts import VerdictLimits
from collector.page.exporter import stored_evaluation
from collector.page.queries import Filters, choices, evaluations, matching, newer
from collector.page.store import Store
from collector.stages import Evaluation, Outcome
from tests.page.factories import faithfulness, make_record, relevancy

NOW = 1_800_000_000.0


def unmeasured(metric: str = "contextual_recall") -> Evaluation:
    return Evaluation(
        metric=metric,
        outcome=Outcome.UNMEASURED,
        score=None,
        reason="unmeasured: no reference context ids to compare against",
        threshold=0.5,
        lower_is_better=False,
        judge="offline",
        judge_model="",
    )


def fill(store: Store, count: int, at: float = NOW - 600, **record: object) -> list[str]:
    """`count` records, one second apart (the last newest), each with a faithfulness score i/count."""
    traces = []
    for i in range(count):
        r = make_record(**record)  # type: ignore[arg-type]
        rows = [stored_evaluation(r, faithfulness(round(i / count, 3)), at + i, VerdictLimits())]
        assert store.write(rows) == []
        traces.append(r.trace_id)
    return traces


def keys(rows: list[dict[str, object]]) -> list[tuple[object, object]]:
    return [(row["trace_id"], row["metric"]) for row in rows]


def test_pages_are_read_as_of_one_moment_and_new_rows_are_counted_not_mixed_in() -> None:
    store = Store(clock=lambda: NOW)
    traces = fill(store, 120)
    first = Filters(limit=50, until=NOW)
    with store.reader() as db:
        assert matching(db, first, NOW) == 120
        pages = [evaluations(db, Filters(limit=50, page=n, until=NOW), NOW) for n in (1, 2, 3)]
    assert [len(p) for p in pages] == [50, 50, 20]
    assert [row["trace_id"] for page in pages for row in page] == traces[::-1]  # newest first, no gaps

    # Ten more arrive while someone reads page 2: page 2 shows the same rows, the ten are counted.
    arrived = fill(store, 10, at=NOW + 1)
    with store.reader() as db:
        assert keys(evaluations(db, Filters(limit=50, page=2, until=NOW), NOW + 20)) == keys(pages[1])
        assert newer(db, Filters(limit=50, page=2, until=NOW), NOW, NOW + 20) == 10
        assert newer(db, Filters(outcome="passed"), NOW, NOW + 20) == 3  # scores .7, .8, .9 pass
        live = evaluations(db, Filters(limit=50), NOW + 20)
    assert [row["trace_id"] for row in live[:10]] == arrived[::-1]


def test_sorting_by_score_time_and_metric_is_stable_and_puts_unscored_last() -> None:
    store = Store(clock=lambda: NOW)
    fill(store, 5)
    record = make_record()
    assert store.write([stored_evaluation(record, unmeasured(), NOW - 1, VerdictLimits())]) == []
    with store.reader() as db:
        low_first = evaluations(db, Filters.parse({"sort": "score"}), NOW)
        high_first = evaluations(db, Filters.parse({"sort": "score", "order": "desc"}), NOW)
        oldest_first = evaluations(db, Filters.parse({"sort": "time", "order": "asc"}), NOW)
        by_metric = evaluations(db, Filters.parse({"sort": "metric"}), NOW)
    assert [r["score"] for r in low_first] == [0.0, 0.2, 0.4, 0.6, 0.8, None]
    assert [r["score"] for r in high_first] == [0.8, 0.6, 0.4, 0.2, 0.0, None]
    assert oldest_first[0]["score"] == 0.0 and oldest_first[-1]["metric"] == "contextual_recall"
    assert [r["metric"] for r in by_metric][:2] == ["contextual_recall", "faithfulness"]


def test_search_and_filters_narrow_the_list_in_sql() -> None:
    store = Store(clock=lambda: NOW)
    fill(store, 4, service="shop")
    special = make_record(
        query="Is 100% of the_tower iron?",
        answer="Mostly WROUGHT iron.",
        service="wiki",
        service_version="2.1",
    )
    rows = [
        stored_evaluation(special, faithfulness(0.55), NOW - 5, VerdictLimits()),
        stored_evaluation(special, relevancy(0.2), NOW - 5, VerdictLimits()),
    ]
    assert store.write(rows) == []

    def find(**params: str) -> list[dict[str, object]]:
        with store.reader() as db:
            return evaluations(db, Filters.parse(params), NOW)

    assert {r["trace_id"] for r in find(q="wrought")} == {special.trace_id}  # the answer, any case
    assert {r["trace_id"] for r in find(q="100% of the_")} == {special.trace_id}  # % and _ are literal
    assert find(q="100%% of") == [] and len(find(q="_")) == 2
    assert {r["trace_id"] for r in find(q=special.trace_id[:10])} == {special.trace_id}  # a trace id prefix
    assert len(find(q="Eiffel Tower")) == 4  # the other records' question
    assert [r["metric"] for r in find(cause="off_topic")] == ["answer_relevancy"]
    assert len(find(cause="contradicted_claim")) == 4  # faithfulness below 0.7, with a cause
    assert [r["score"] for r in find(score_min="0.5", score_max="0.6", sort="score")] == [0.5, 0.55]
    assert len(find(version="2.1")) == 2 and len(find(service="shop", outcome="passed")) == 1
    assert find(score_min="nan") == find()  # what is not a number is no bound
    with store.reader() as db:
        options = choices(db, NOW - 3600)
    assert options["cause"] == ["contradicted_claim", "off_topic"] and options["version"] == ["", "2.1"]


def test_the_query_parameters_say_the_whole_state_and_nothing_more() -> None:
    params = {
        "q": "iron",
        "outcome": "failed",
        "metric": "faithfulness",
        "cause": "contradicted_claim",
        "score_min": "0.1",
        "score_max": "0.9",
        "version": "2.1",
        "window": "6h",
        "sort": "score",
        "order": "desc",
        "page": "3",
        "limit": "25",
        "until": "1800000000.125",
    }
    filters = Filters.parse(params)
    assert Filters.parse(filters.params()) == filters
    assert filters.params() == params
    assert Filters().params() == {} and Filters.parse({"sort": "score"}).params() == {"sort": "score"}
    assert Filters.parse({"failed": "1"}).outcome == "failed"  # the nav's "Failed" link
    assert Filters.parse({"page": "0", "limit": "x", "sort": "nope", "outcome": "odd"}) == Filters()
    assert filters.params(page=1, until=None)["order"] == "desc" and "page" not in filters.params(page=1)
