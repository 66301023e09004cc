"""The collector's view of a capture folder (`traces.json`, `logs.json`: OTLP JSON as the conformance
apps export it): decoded, flattened and assembled into traces exactly as `ragpulse run` does, for the
extraction tests of the committed captures and the instrumented-traffic benchmark."""

from __future__ import annotations

from pathlib import Path

from collector.assembly.assembler import AssembledTrace, TraceAssembler
from collector.pipeline.offsets import NoAck
from collector.receivers.decode import decode, decode_logs
from collector.spans import flatten, flatten_logs


def payloads(folder: Path, protobuf: bool = False) -> tuple[bytes, bytes]:
    """The capture's traces and logs request bodies: its OTLP JSON, or the same requests as protobuf
    (`protobuf`: the encoding the stock OTLP exporters send by default)."""
    traces, logs = (folder / "traces.json").read_bytes(), (folder / "logs.json").read_bytes()
    if protobuf:
        return decode(traces).SerializeToString(), decode_logs(logs).SerializeToString()
    return traces, logs


def assembled(traces: bytes, logs: bytes) -> list[AssembledTrace]:
    """The traces of one traces request and one logs request, as the collector assembles them."""
    assembler = TraceAssembler()
    assembler.add(flatten(decode(traces)), NoAck(), 0.0, flatten_logs(decode_logs(logs)))
    return assembler.drain()


def captured_traces(folder: Path) -> list[AssembledTrace]:
    return assembled(*payloads(folder))
