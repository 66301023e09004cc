"""`ragpulse export-cases`: failed evaluations of live traffic become test cases for `ragpulse eval`.

    ragpulse export-cases --store /var/lib/ragpulse/page.db --metric faithfulness --since 2h \\
        --out regressions.jsonl
    ragpulse eval regressions.jsonl --metrics faithfulness

One JSON line per record (trace id + span id), never per metric: under deepeval's names, every field a
metric read in production (the question, the answer, the passages in rank order, the expected output,
the reference contexts, the reference document ids, the baseline answer), so `ragpulse eval` can
measure each metric the sidecar measured; in `metadata` where it came from (service, versions,
conversation id) and what each metric said and who said it (score, outcome, threshold, cause,
reason, verdicts, judge): `evaluators.dataset.production_result` reads that back. With `hide_texts`
the sidecar kept no texts, so the cases carry ids, scores and verdict labels only, and `ragpulse
eval` scores them unmeasured; the user is told how many. Exit codes: 0 written (possibly none), 2
bad usage or an unreadable source, always as one line on stderr.

A metric a reviewer corrected on the page also carries `human`: the outcome the reviewer says is
right (None when they marked only claims), their verdict of each claim, who and when. `--corrected`
exports only the records corrected since `--since` (whatever their outcome): labels `ragpulse eval`
measures both judges against (`evaluators.dataset.reviewers_result`), and that
`scripts/grounding/corrected.py` turns into training examples for the grounding model.

    ragpulse export-cases --store page.db --corrected --since 30d --out reviewed.jsonl
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import tempfile
import time
from collections.abc import Generator, Iterable, Iterator
from contextlib import closing, contextmanager
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from collector.commands.arguments import utc_timestamp
from collector.review.corrections import from_document

if TYPE_CHECKING:  # the sources pull in Kafka, HTTP and the page: imported when the command runs
    from collector.commands.case_sources import CaseFilters

DEFAULT_TOKEN_ENV = "RAGPULSE_PAGE__TOKEN"  # the variable the sidecar itself reads page.token from
_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([smhd])\s*$")
_UNIT_S = {"s": 1, "m": 60, "h": 3600, "d": 86400}
# Line breaks to str.splitlines() that JSON leaves unescaped: one would split a case in two.
_LINE_BREAKS = str.maketrans({"\x85": "\\u0085", "\u2028": "\\u2028", "\u2029": "\\u2029"})


class UsageError(ValueError):
    """Bad arguments; the message is the one line the user sees."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    source = parser.add_argument_group("source (exactly one)")
    source.add_argument(
        "--store", type=Path, metavar="PATH", help="the SQLite file of page.store_path (read-only)"
    )
    source.add_argument("--kafka-bootstrap", metavar="HOST:PORT", help="read the results topic here")
    source.add_argument(
        "--results-topic",
        metavar="NAME",
        help="with --kafka-bootstrap (default: results.topic's, ragpulse_evaluations)",
    )
    source.add_argument(
        "--url", metavar="URL", help="a running sidecar's metrics port, e.g. http://ragpulse:9464"
    )
    source.add_argument(
        "--token-env",
        metavar="NAME",
        help=f"environment variable holding the page's bearer token (default {DEFAULT_TOKEN_ENV}, if set)",
    )
    parser.add_argument(
        "--all",
        dest="all_sampled",
        action="store_true",
        help="every sampled evaluation, not only failed",
    )
    parser.add_argument(
        "--corrected",
        action="store_true",
        help="only records a reviewer corrected since --since, whatever their outcome (labels for eval)",
    )
    parser.add_argument(
        "--metric", action="append", metavar="NAME", help="only these metrics (repeatable or comma list)"
    )
    parser.add_argument("--service", default="", help="only this service")
    parser.add_argument("--route", default="", help="only this route")
    parser.add_argument("--version", default="", help="only this service.version (or prompt version)")
    parser.add_argument(
        "--since", default="24h", metavar="WHEN", help="e.g. 30m, 2h, 1d or ISO 8601 (default 24h)"
    )
    parser.add_argument("--limit", metavar="N", help="at most this many cases, newest first")
    parser.add_argument("--out", type=Path, metavar="FILE", help="JSONL file to write (default: stdout)")


def since_timestamp(value: str, now: float | None = None) -> float:
    """Unix seconds of `--since`: a duration back from now (30m, 2h, 1d) or ISO 8601 (UTC if no zone)."""
    now = time.time() if now is None else now
    match = _DURATION.match(value)
    if match:
        return now - float(match.group(1)) * _UNIT_S[match.group(2)]
    try:
        return utc_timestamp(value.strip()).timestamp()
    except ValueError:
        raise UsageError(f"--since {value!r}: use a duration (30m, 2h, 1d) or ISO 8601") from None


def case_from_record(record: dict[str, Any]) -> dict[str, Any]:
    """One record (the page's detail shape) as a test case under deepeval's field names."""
    from collector.exporters.kafka_results import rfc3339

    passages = sorted(record.get("passages") or (), key=lambda p: p.get("rank", 0))
    texts = [p.get("text") for p in passages]
    # A passage without its text keeps its place: verdicts index passages by rank.
    retrieved = [t or "" for t in texts] if any(texts) else None
    evaluations = sorted(record.get("evaluations") or (), key=lambda e: str(e.get("metric")))
    latest: dict[str, Any] = max(evaluations, key=lambda e: e.get("evaluated_at") or 0, default={})
    metadata: dict[str, Any] = {
        "trace_id": record.get("trace_id"),
        "span_id": record.get("span_id"),
        "service": record.get("service"),
        "route": record.get("route"),
        "model": record.get("model"),
    }
    for name in ("service_version", "prompt_version", "conversation_id"):  # once the source records them
        if record.get(name):
            metadata[name] = record[name]
    metadata.update(
        evaluated_at=rfc3339(float(record.get("evaluated_at") or latest.get("evaluated_at") or 0)),
        judge=latest.get("judge"),
        judge_model=latest.get("judge_model"),
        passage_ids=[p.get("id") for p in passages],
        retriever_scores=[p.get("score") for p in passages],
        failed_metrics=[e["metric"] for e in evaluations if e.get("outcome") == "failed"],
        metrics={e["metric"]: _production(e) for e in evaluations},
    )
    references = _strings(record.get("reference_contexts"))
    return {
        "id": f"{record.get('trace_id')}:{record.get('span_id')}",
        "input": record.get("question"),
        "actual_output": record.get("answer"),
        "retrieval_context": retrieved,
        "expected_output": record.get("expected_output"),
        # what the sidecar's case had as `context` (collector.judging.cases): the reference contexts
        # the app sent, else the retrieved passages
        "context": references or retrieved,
        "retrieved_context_ids": [str(p.get("id")) for p in passages] if passages else None,
        "reference_context_ids": _strings(record.get("reference_context_ids")),
        "baseline_output": record.get("baseline_output"),
        "metadata": metadata,
    }


def _production(evaluation: dict[str, Any]) -> dict[str, Any]:
    """What production said of one metric, and which judge said it."""
    return {
        "score": evaluation.get("score"),
        "outcome": evaluation.get("outcome"),
        "threshold": evaluation.get("threshold"),
        "lower_is_better": bool(evaluation.get("lower_is_better")),
        "cause": evaluation.get("cause"),
        "reason": evaluation.get("reason"),
        "verdicts": evaluation.get("verdicts") or [],
        "judge": evaluation.get("judge"),
        "judge_model": evaluation.get("judge_model"),
        **_human(evaluation.get("correction")),
    }


def _human(document: Any) -> dict[str, Any]:
    """`{"human": ...}`, the reviewer's correction of the metric, when there is one (readable)."""
    from collector.exporters.kafka_results import rfc3339

    try:
        correction = from_document(document) if isinstance(document, dict) else None
    except ValueError:  # a page answering with a damaged correction: the case goes without it
        correction = None
    if correction is None:
        return {}
    passed = correction.human_passed
    claims = [
        {"index": c.index, "verdict": c.verdict, "judge_verdict": c.judge_verdict, "claim": c.claim}
        for c in correction.claims
    ]
    outcome = None if passed is None else ("passed" if passed else "failed")
    return {
        "human": {
            "outcome": outcome,
            "claims": claims,
            "reviewer": correction.reviewer,
            "corrected_at": rfc3339(correction.corrected_at),
        }
    }


def _strings(value: Any) -> list[str] | None:
    """A list of texts or ids as a source gives it: a list, or a JSON-encoded one (a store column)."""
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except json.JSONDecodeError:
            return None
    if not isinstance(value, list) or not value:
        return None
    return [str(item) for item in value]


def has_texts(case: dict[str, Any]) -> bool:
    return bool(case["input"] or case["actual_output"] or case["retrieval_context"])


def case_line(case: dict[str, Any]) -> str:
    return json.dumps(case, ensure_ascii=False).translate(_LINE_BREAKS)


def _token(args: argparse.Namespace) -> str | None:
    name = args.token_env or DEFAULT_TOKEN_ENV
    token = os.environ.get(name, "").strip()
    if args.token_env and not token:
        raise UsageError(f"--token-env {name}: the variable is not set")
    return token or None


def _records(args: argparse.Namespace, filters: CaseFilters) -> Generator[dict[str, Any], None, None]:
    from collector.commands.case_sources import api_records, store_records, topic_records
    from collector.exporters.kafka_results import KafkaResultsConfig
    from evaluators.redaction import without_credentials

    given = [flag for flag in ("store", "kafka_bootstrap", "url") if getattr(args, flag)]
    if len(given) != 1:
        raise UsageError("give exactly one source: --store PATH, --kafka-bootstrap HOST:PORT or --url URL")
    if args.store:
        return store_records(args.store, filters)
    if args.kafka_bootstrap:
        return topic_records(args.kafka_bootstrap, args.results_topic or KafkaResultsConfig().topic, filters)
    if not re.match(r"^https?://", args.url):
        raise UsageError(f"--url {without_credentials(args.url)!r}: expected http://host:port")
    return api_records(args.url, _token(args), filters)


def _limit(value: str | None) -> int | None:
    if value is None:
        return None
    if not value.strip().isdigit() or int(value) < 1:
        raise UsageError(f"--limit {value!r}: a whole number, at least 1")
    return int(value)


def _filters(args: argparse.Namespace) -> CaseFilters:
    from collector.commands.case_sources import CaseFilters

    metrics = {m.strip() for value in args.metric or () for m in value.split(",") if m.strip()}
    return CaseFilters(
        since=since_timestamp(args.since),
        failed_only=not (args.all_sampled or args.corrected),
        metrics=frozenset(metrics),
        service=args.service,
        route=args.route,
        version=args.version,
        corrected=args.corrected,
    )


@contextmanager
def _output(path: Path | None) -> Iterator[IO[str]]:
    """stdout, or `path` replaced only once every case is written (never a half-written file)."""
    if path is None:
        yield sys.stdout
        sys.stdout.flush()
        return
    directory = path.parent if str(path.parent) else Path(".")
    handle, temporary = tempfile.mkstemp(prefix=f".{path.name}.", dir=directory)
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as out:
            yield out
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def write_cases(records: Iterable[dict[str, Any]], out: IO[str], limit: int | None) -> tuple[int, int]:
    """(cases written, cases without texts)."""
    written = textless = 0
    for record in records:
        case = case_from_record(record)
        out.write(case_line(case) + "\n")
        written += 1
        textless += not has_texts(case)
        if limit is not None and written >= limit:
            break
    return written, textless


def main(args: argparse.Namespace) -> int:
    from collector.commands.case_sources import SourceError

    def say(message: str) -> None:
        print(f"ragpulse export-cases: {message}", file=sys.stderr)

    try:
        filters, limit = _filters(args), _limit(args.limit)
        # closing: --limit stops reading early, and the source's connection goes with it
        with closing(_records(args, filters)) as records, _output(args.out) as out:
            written, textless = write_cases(records, out, limit)
    except (UsageError, SourceError) as exc:
        say(str(exc))
        return 2
    except OSError as exc:  # --out in a missing directory, a full disk, ...
        say(f"cannot write {args.out or 'stdout'}: {exc.strerror or exc}")
        return 2
    for note in filters.notes:
        say(note)
    if textless:
        say(
            f"{textless} of {written} cases carry no question, answer or passages (the sidecar ran with "
            "hide_texts): `ragpulse eval` will mark them unmeasured"
        )
    kind = "corrected" if args.corrected else "sampled" if args.all_sampled else "failed"
    say(f"wrote {written} {kind} cases to {args.out or 'stdout'}")
    return 0
