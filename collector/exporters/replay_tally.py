"""`ReplayTally`: the last exporter of a replay, counting what the others were handed
(`collector.commands.replay` prints it)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from collector.records import RagRecord
from collector.stages import Evaluation, InProcessExporter


class ReplayTally(InProcessExporter):
    """The last exporter of a replay: counts the generations, traces and results handed to the others."""

    def __init__(self) -> None:
        self.records, self.traces, self.outcomes = 0, set[str](), Counter[str]()

    def export(self, record: RagRecord, evaluations: Sequence[Evaluation]) -> None:
        self.records += 1
        self.traces.add(record.trace_id)
        self.outcomes.update(e.outcome.value for e in evaluations)
