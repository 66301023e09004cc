"""`Page`: the store, its writer, the exporter that feeds it, the results-topic reader and the
routes, built from settings in one place. The pipeline owns the exporter like any other; the status
server owns the rest, since the page must answer until the server stops, after the pipeline drained.
"""

from __future__ import annotations

import logging

from collector.exporters.kafka_results import KafkaResultsConfig
from collector.exporters.verdicts import VerdictLimits
from collector.page.config import PageConfig
from collector.page.exporter import StoreExporter
from collector.page.results_reader import ResultsReader
from collector.page.routes import PageRoutes
from collector.page.store import Store
from collector.page.writer import StoreWriter
from collector.review.config import ReviewConfig
from collector.review.fit import FittedThresholds, refit
from collector.review.routes import ReviewRoutes

logger = logging.getLogger(__name__)


class Page:
    def __init__(
        self,
        config: PageConfig,
        results: KafkaResultsConfig | None = None,
        verdicts: VerdictLimits | None = None,
        hide_texts: bool = False,
        review: ReviewConfig | None = None,
        thresholds: FittedThresholds | None = None,
    ) -> None:
        """`thresholds`: where the pass thresholds refitted on reviewers' corrections go (the
        evaluator reads them); without it they are fitted and exported, not used."""
        retention_s = config.retention_hours * 3600
        review = review or ReviewConfig()
        self.thresholds = thresholds or FittedThresholds(scope=review.scope)
        self.store = Store(config.store_path, retention_s, int(config.max_store_mb * 2**20), hide_texts)
        self.writer = StoreWriter(self.store, config.max_queued, on_corrected=self.refit)
        self.exporter = StoreExporter(self.writer, verdicts, hide_texts)
        self.reader = (
            ResultsReader(results, self.writer, retention_s)
            if results is not None and results.bootstrap_servers and config.read_results_topic
            else None
        )
        self.routes = PageRoutes(
            self.store, config, hide_texts=hide_texts, group_view=self.reader is not None
        )
        self.review = (
            ReviewRoutes(self.routes, self.writer, review, self.thresholds) if review.enabled else None
        )
        self.routes.review = self.review
        self.routes.templates.env.globals["review_on"] = self.review is not None
        self._review_config = review
        self.refit()  # a store file keeps its corrections across restarts

    def refit(self) -> None:
        """Refit the thresholds on every correction in the store (the writer's thread, or at start)."""
        with self.store.reader() as db:
            refit(db, self.thresholds, self._review_config)

    def start(self) -> None:
        if self.reader is not None:
            self.reader.start()
            logger.info("page: reading every replica's results from %s", self.reader.config.topic)

    def close(self, timeout_s: float = 10.0) -> None:
        if self.reader is not None:
            self.reader.stop(timeout_s / 2)
        self.writer.close(timeout_s / 2)
