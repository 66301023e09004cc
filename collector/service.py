"""Assemble the sidecar from settings and run it until SIGTERM/SIGINT."""

from __future__ import annotations

import asyncio
import logging
import os
import signal
import sys
from dataclasses import dataclass

from collector import __version__
from collector.assemble import TraceAssembler
from collector.config import Settings
from collector.deadletter import DeadLetterSink, KafkaDeadLetters, LogDeadLetters
from collector.kafka_options import security_options
from collector.metrics import BUILD_INFO, LabelPolicy
from collector.pipeline import Pipeline
from collector.receivers import Receiver
from collector.receivers.kafka import KafkaReceiver
from collector.receivers.otlp_grpc import OtlpGrpcConfig, OtlpGrpcReceiver
from collector.receivers.otlp_http import OtlpHttpConfig, OtlpHttpReceiver
from collector.receivers.replay import KafkaReplayReceiver
from collector.status_server import StatusServer
from collector.summary import log_summaries

logger = logging.getLogger(__name__)


@dataclass
class Service:
    settings: Settings
    pipeline: Pipeline
    status: StatusServer
    receivers: list[Receiver]

    @property
    def receiver(self) -> Receiver:
        """The first receiver: Kafka (or replay) with Kafka configured, else the OTLP/HTTP one."""
        return self.receivers[0]


def build(settings: Settings, evaluate: bool = True, replay: tuple[int, int] | None = None) -> Service:
    """The service from settings; `replay=(start_ms, end_ms)` re-reads that range of the Kafka topic."""
    dead_letters: DeadLetterSink
    receivers: list[Receiver]
    if settings.kafka.bootstrap_servers:
        dead_letters = KafkaDeadLetters(
            settings.kafka.bootstrap_servers,
            settings.kafka.dlq_topic,
            **security_options(settings.kafka.options),
        )
        if replay is not None:
            receivers = [KafkaReplayReceiver(settings.kafka, dead_letters, *replay)]
        else:
            receivers = [KafkaReceiver(settings.kafka, dead_letters)]
    else:
        dead_letters = LogDeadLetters()
        receivers = _otlp_receivers(settings, dead_letters)
    pipeline_kwargs = _evaluation_stages(settings) if evaluate else {}
    pipeline = Pipeline(
        receivers=receivers,
        assembler=TraceAssembler(settings.assembly),
        dead_letters=dead_letters,
        log_records=settings.log_records,
        extraction=settings.extraction,
        **pipeline_kwargs,
    )
    status = StatusServer(settings.metrics_host, settings.metrics_port, ready=lambda: pipeline.ready)
    BUILD_INFO.labels(__version__).set(1)
    return Service(settings, pipeline, status, receivers)


def _otlp_receivers(settings: Settings, dead_letters: DeadLetterSink) -> list[Receiver]:
    """Embedded mode: OTLP/HTTP always (first: demo and tests read its port), OTLP/gRPC unless -1."""
    host, limit = settings.otlp_host, settings.otlp_max_body_bytes
    receivers: list[Receiver] = [
        OtlpHttpReceiver(
            OtlpHttpConfig(host=host, port=settings.otlp_port, max_body_bytes=limit), dead_letters
        )
    ]
    if settings.otlp_grpc_port >= 0:
        grpc_config = OtlpGrpcConfig(host=host, port=settings.otlp_grpc_port, max_body_bytes=limit)
        receivers.append(OtlpGrpcReceiver(grpc_config, dead_letters))
    return receivers


def _evaluation_stages(settings: Settings) -> dict[str, object]:
    """Sampler, evaluator and exporters (the evaluation half of the pipeline)."""
    from collector.evaluation import build_evaluation_stages

    labels = settings.labels
    services = LabelPolicy(labels.services, labels.max_values)
    routes = LabelPolicy(labels.routes, labels.max_values)
    return build_evaluation_stages(settings, services, routes)


def on_signals(stop: asyncio.Event) -> None:
    """SIGTERM/SIGINT set `stop` (a graceful drain); a second one while draining exits at once, quietly."""
    loop = asyncio.get_running_loop()

    def handle() -> None:
        if stop.is_set():
            print(
                "ragpulse: interrupted again, exiting without finishing the drain",
                file=sys.stderr,
                flush=True,
            )
            os._exit(130)
        stop.set()

    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, handle)


async def serve(service: Service, stop: asyncio.Event | None = None, handle_signals: bool = True) -> None:
    """Run until `stop`; `handle_signals=False` when the caller owns SIGTERM/SIGINT (the demo does)."""
    stop = stop or asyncio.Event()
    if handle_signals:
        on_signals(stop)
    service.status.start()
    settings = service.settings
    logger.info("metrics on http://%s:%d/metrics", settings.metrics_host, service.status.port)
    judge = "offline" if settings.judge.base_url is None else settings.judge.model
    summaries = (
        asyncio.create_task(log_summaries(settings.summary_interval_s, judge))
        if settings.summary_interval_s > 0
        else None
    )
    try:
        await service.pipeline.run(stop)
    finally:
        if summaries is not None:
            summaries.cancel()
        service.status.shutdown()


async def replay(service: Service) -> None:
    """Run until the replay receiver reached the end of its range and every record it read is done."""
    receiver = service.receiver
    assert isinstance(receiver, KafkaReplayReceiver)
    stop = asyncio.Event()
    runner = asyncio.create_task(serve(service, stop))
    while not runner.done() and not (receiver.finished.is_set() and receiver.tracker.in_flight() == 0):
        await asyncio.sleep(0.2)
    stop.set()
    await runner
