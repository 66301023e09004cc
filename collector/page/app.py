"""`Page`: the store, its writer, the exporter that feeds it, the results-topic reader and the
routes, built from settings in one place. The pipeline owns the exporter like any other; the status
server owns the rest, since the page must answer until the server stops, after the pipeline drained.
"""

from __future__ import annotations

import logging

from collector.exporters.kafka_results import KafkaResultsConfig
from collector.page.config import PageConfig
from collector.page.exporter import StoreExporter
from collector.page.results_reader import ResultsReader
from collector.page.routes import PageRoutes
from collector.page.store import Store
from collector.page.writer import StoreWriter
from collector.verdicts import VerdictLimits

logger = logging.getLogger(__name__)


class Page:
    def __init__(
        self,
        config: PageConfig,
        results: KafkaResultsConfig | None = None,
        verdicts: VerdictLimits | None = None,
        hide_texts: bool = False,
    ) -> None:
        retention_s = config.retention_hours * 3600
        self.store = Store(config.store_path, retention_s, int(config.max_store_mb * 2**20), hide_texts)
        self.writer = StoreWriter(self.store, config.max_queued)
        self.exporter = StoreExporter(self.writer, verdicts, hide_texts)
        self.reader = (
            ResultsReader(results, self.writer, retention_s)
            if results is not None and results.bootstrap_servers and config.read_results_topic
            else None
        )
        self.routes = PageRoutes(
            self.store, config, hide_texts=hide_texts, group_view=self.reader is not None
        )

    def start(self) -> None:
        if self.reader is not None:
            self.reader.start()
            logger.info("page: reading every replica's results from %s", self.reader.config.topic)

    def close(self, timeout_s: float = 10.0) -> None:
        if self.reader is not None:
            self.reader.stop(timeout_s / 2)
        self.writer.close(timeout_s / 2)
