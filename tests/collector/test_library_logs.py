"""A broker outage reads as a few clear lines: kafka-python's per-connection tracebacks and
metadata chatter are cut to one line per message template per 30 s, unless running at DEBUG."""

from __future__ import annotations

import io
import logging

from collector.logs import quiet_libraries


def _run(level: int) -> str:
    root, stream = logging.getLogger(), io.StringIO()
    handler = logging.StreamHandler(stream)
    saved = root.handlers, root.level, logging.getLogger("kafka").level
    root.handlers, root.level = [handler], level
    try:
        quiet_libraries(level)
        transport = logging.getLogger("kafka.net.transport")
        for _ in range(50):
            try:
                raise ConnectionResetError(104, "Connection reset by peer")
            except ConnectionResetError:
                transport.exception("%s: Error receiving network data closing socket", "<KafkaTCPTransport>")
        logging.getLogger("kafka.cluster").info("Updated metadata: %s", "ClusterMetadata(...)")
        logging.getLogger("collector.pipeline.pipeline").error("ours %d", 1)
        logging.getLogger("collector.pipeline.pipeline").error("ours %d", 2)
    finally:
        root.handlers, root.level = saved[0], saved[1]
        logging.getLogger("kafka").setLevel(saved[2])
    return stream.getvalue()


def test_an_outage_is_one_line_per_cause_without_traceback() -> None:
    text = _run(logging.INFO)
    assert text.count("Error receiving network data") == 1
    assert "Traceback" not in text and "Updated metadata" not in text
    assert "ours 1" in text and "ours 2" in text  # ragpulse's own lines are untouched


def test_debug_keeps_everything() -> None:
    text = _run(logging.DEBUG)
    assert text.count("Error receiving network data") == 50 and "Traceback" in text
    assert "Updated metadata" in text
