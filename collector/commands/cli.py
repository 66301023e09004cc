"""`ragpulse` command line: run, demo, eval, export-cases, replay, check-config, inspect."""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from pydantic import ValidationError
from pydantic_core import ErrorDetails

from collector import __version__
from collector.commands.arguments import utc_timestamp
from collector.errors import KAFKA_HINT, ConfigError, is_kafka_error
from collector.logs import quiet_libraries

if TYPE_CHECKING:
    from collector.config import Settings
    from evaluators.judge_choice import SidecarJudging

logger = logging.getLogger("ragpulse")


def _settings_args(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--config", type=Path, help="YAML config file (RAGPULSE_* env vars override it)")
    parser.add_argument("--kafka-bootstrap", dest="kafka.bootstrap_servers", help="consume from this Kafka")
    parser.add_argument(
        "--topic", dest="kafka.topic", help="Kafka topic with OTLP spans (default otlp_spans)"
    )
    parser.add_argument("--group-id", dest="kafka.group_id", help="Kafka consumer group (default ragpulse)")
    parser.add_argument("--otlp-port", dest="otlp.port", type=int, help="embedded OTLP/HTTP receiver port")
    parser.add_argument(
        "--otlp-grpc-port",
        dest="otlp.grpc_port",
        type=int,
        help="embedded OTLP/gRPC receiver port (default 4317, -1 disables)",
    )
    parser.add_argument(
        "--metrics-port", dest="metrics_port", type=int, help="/metrics, /healthz, /readyz port"
    )
    parser.add_argument(
        "--quiet-period", dest="assembly.quiet_period_s", type=float, help="seconds (default 5)"
    )
    parser.add_argument("--judge-base-url", dest="judge.base_url", help="OpenAI-compatible judge endpoint")
    parser.add_argument("--judge-model", dest="judge.model", help="judge model name")
    parser.add_argument(
        "--log-records", dest="log_records", action="store_const", const=True, help="log every RagRecord"
    )
    parser.add_argument(
        "--quiet",
        dest="summary_interval_s",
        action="store_const",
        const=0.0,
        help="no periodic summary line (default: one every summary_interval_s, 30 s)",
    )


def _load(args: argparse.Namespace) -> Settings:
    from collector.config import load_settings

    overrides = {
        k: v
        for k, v in vars(args).items()
        if "." in k or k in ("metrics_port", "log_records", "summary_interval_s")
    }
    return load_settings(args.config, **overrides)


def cmd_run(args: argparse.Namespace) -> int:
    from collector.pipeline.service import build, serve

    service = build(_load(args))
    asyncio.run(serve(service))
    return 0


def cmd_check_config(args: argparse.Namespace) -> int:
    from collector.commands.check_config import masked, summary_lines

    settings = _load(args)
    print("ragpulse: the configuration is valid; what will run:")
    for line in summary_lines(settings):
        print(f"  {line}")
    print("effective settings (secrets masked):")
    print(json.dumps(masked(settings), indent=2))
    return 0


def cmd_replay(args: argparse.Namespace) -> int:
    from collector.commands.replay import replay, replay_destinations, report
    from collector.pipeline.service import build

    def refuse(message: str) -> int:
        print(f"ragpulse replay: {message}", file=sys.stderr)
        return 2

    try:
        start_ms, end_ms = (int(utc_timestamp(v).timestamp() * 1000) for v in (args.start, args.end))
    except ValueError as exc:
        return refuse(str(exc))
    settings = _load(args)
    if end_ms <= start_ms or not settings.kafka.bootstrap_servers:
        return refuse("needs --kafka-bootstrap and --to after --from")
    destinations = replay_destinations(settings)
    if not destinations:
        return refuse(
            "nowhere to write the scores (Prometheus metrics end with this process): configure "
            "results.bootstrap_servers, otel_export.endpoint, phoenix.endpoint or page.store_path"
        )
    # Never more records in flight than the evaluation queue holds: a replay waits instead of shedding.
    in_flight = min(settings.kafka.max_in_flight_records, settings.evaluation.queue_size)
    settings = settings.with_values(**{"kafka.max_in_flight_records": in_flight})
    service = build(settings, replay=(start_ms, end_ms))
    asyncio.run(replay(service))
    return report(service, f"{args.start} .. {args.end}", destinations)


def cmd_demo(args: argparse.Namespace) -> int:
    from collector.commands.demo import run_demo

    if args.summary_interval_s is None:  # the demo prints its own line of scores every two seconds
        args.summary_interval_s = 0.0
    if getattr(args, "assembly.quiet_period_s") is None:  # synthetic traces end at once: 1 s of quiet will do
        setattr(args, "assembly.quiet_period_s", 1.0)
    return run_demo(_load(args), args.duration, args.rate)


def cmd_inspect(args: argparse.Namespace) -> int:
    from collector.commands.inspect import main as inspect_main

    return inspect_main(args)


def _inspect_args(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("files", nargs="*", type=Path, metavar="FILE", help="OTLP protobuf, JSON, JSON lines")
    parser.add_argument("--listen", type=float, metavar="SECONDS", help="receive OTLP for SECONDS instead")
    parser.add_argument("--json", action="store_true", help="one JSON object per trace")
    parser.add_argument("--config", type=Path, help="YAML config file (extraction and receiver settings)")
    parser.add_argument("--otlp-port", dest="otlp_port", type=int, help="--listen: OTLP/HTTP port")
    parser.add_argument("--otlp-grpc-port", dest="otlp_grpc_port", type=int, help="--listen: OTLP/gRPC port")


def cmd_export_cases(args: argparse.Namespace) -> int:
    from collector.commands.export_cases import main as export_cases_main

    return export_cases_main(args)


def cmd_eval(argv: list[str]) -> int:
    from evaluators.cli import main as eval_main

    return eval_main(argv, read_config=eval_judging)


def eval_judging(path: Path, with_judge: bool = True) -> SidecarJudging:
    """`ragpulse eval --config`: the sidecar's judge built by the code `ragpulse run` builds it with
    (`collector.judging.build`), from settings read as `run` reads them (RAGPULSE_* included), with its
    custom criteria, metric options and, for an external judge, its outbound rewrite of each case.
    `with_judge=False`: a flag chose another judge; only the criteria and options are read."""
    from collector.config import load_settings
    from collector.judging.build import build_llm_judge, build_offline_judge
    from collector.judging.outbound import Outbound
    from collector.judging.scorers import JudgeOnLoop
    from evaluators.judge_choice import SidecarJudging
    from evaluators.redaction import without_credentials

    try:
        settings = load_settings(path)
    except ValidationError as exc:  # one line, never the values given (a key, a header)
        raise ConfigError(f"{path}: {_without_inputs(exc)}") from None
    except OSError as exc:
        raise ConfigError(str(exc)) from None
    judge = settings.judge
    custom, options = dict(settings.custom_metrics), settings.metrics.options
    sampled = tuple(dict.fromkeys([*settings.sampling.metrics, *settings.sampling.reference_metrics]))
    if not with_judge:
        return SidecarJudging(None, "", custom, options, metrics=sampled)
    if judge.base_url is None:
        offline = f"judge: offline ({path} sets no judge.base_url)"
        return SidecarJudging(build_offline_judge(), offline, custom, options, metrics=sampled)
    try:
        llm = build_llm_judge(judge)
    except OSError as exc:  # judge.api_key_file unreadable
        raise ConfigError(f"{path}: judge.api_key_file: {exc.strerror or exc}") from None
    cascade = "; its cascade's offline first pass is not run here" if judge.cascade else ""
    described = f"judge: openai {judge.model} at {without_credentials(judge.base_url)} ({path}{cascade})"
    outbound = Outbound(JudgeOnLoop(llm), judge.outbound)
    return SidecarJudging(llm, described, custom, options, outbound.rewrite, sampled)


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["eval"]:  # the evaluators library owns its own arguments
        return cmd_eval(argv[1:])
    parser = argparse.ArgumentParser(prog="ragpulse", description="Observability sidecar for RAG services.")
    parser.add_argument("--version", action="version", version=f"ragpulse {__version__}")
    parser.add_argument("--log-level", default="INFO", help="DEBUG, INFO, WARNING (default INFO)")
    commands = parser.add_subparsers(dest="command", required=True)
    run = commands.add_parser("run", help="run the sidecar (Kafka consumer or embedded OTLP receiver)")
    _settings_args(run)
    run.set_defaults(handler=cmd_run)
    check = commands.add_parser("check-config", help="validate and print the effective configuration")
    _settings_args(check)
    check.set_defaults(handler=cmd_check_config)
    demo = commands.add_parser("demo", help="everything in one process: synthetic RAG traffic, offline judge")
    _settings_args(demo)
    demo.add_argument("--duration", type=float, help="stop after this many seconds (default: until Ctrl-C)")
    demo.add_argument("--rate", type=float, default=5.0, help="synthetic requests per second (default 5)")
    demo.set_defaults(handler=cmd_demo)
    replay = commands.add_parser(
        "replay", help="re-evaluate a time range of the Kafka topic (outside the group)"
    )
    _settings_args(replay)
    replay.add_argument(
        "--from", dest="start", required=True, help="ISO 8601 start, e.g. 2026-11-21T10:00:00Z"
    )
    replay.add_argument("--to", dest="end", default="now", help="ISO 8601 end (default: now)")
    replay.set_defaults(handler=cmd_replay)
    inspect = commands.add_parser(
        "inspect", help="show what ragpulse extracts from OTLP files (or from what arrives for SECONDS)"
    )
    _inspect_args(inspect)
    inspect.set_defaults(handler=cmd_inspect)
    export_cases = commands.add_parser(
        "export-cases", help="failed evaluations as JSONL test cases for `ragpulse eval` (store, topic, URL)"
    )
    from collector.commands.export_cases import add_arguments as export_cases_args

    export_cases_args(export_cases)
    export_cases.set_defaults(handler=cmd_export_cases)
    commands.add_parser("eval", help="batch-evaluate a JSONL/JSON/CSV file of test cases (see eval --help)")
    args = parser.parse_args(argv)
    logging.basicConfig(
        level=args.log_level.upper(),
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
        stream=sys.stderr,
    )
    quiet_libraries(logging.getLogger().level)
    from evaluators.redaction import guard_logs

    guard_logs(logging.getLogger().handlers)  # no line names a credential (httpx logs each URL it calls)
    try:
        return args.handler(args)
    except ValidationError as exc:
        print(f"ragpulse: configuration error: {_without_inputs(exc)}", file=sys.stderr)
        return 2
    except (FileNotFoundError, ConfigError) as exc:
        print(f"ragpulse: configuration error: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:  # e.g. a port already taken: the message names it and the setting that moves it
        print(f"ragpulse: {exc}", file=sys.stderr)
        return 2
    except Exception as exc:
        if not is_kafka_error(exc):
            raise
        print(f"ragpulse: Kafka: {exc} ({KAFKA_HINT})", file=sys.stderr)
        return 2


def _without_inputs(exc: ValidationError) -> str:
    """Where and what, never the value given: a mistyped secret (a header, a key) must not be printed."""
    return "; ".join(_problem(error) for error in exc.errors(include_input=False, include_url=False))


def _problem(error: ErrorDetails) -> str:
    where = ".".join(str(part) for part in error["loc"])
    if error["type"] == "extra_forbidden":
        return f"{where}: unknown key (a typo? `ragpulse check-config` lists the valid settings)"
    message = error["msg"].removeprefix("Value error, ")
    return f"{where}: {message}" if where else message


if __name__ == "__main__":
    sys.exit(main())
