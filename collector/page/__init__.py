"""The built-in page at `/` on the metrics port: live scores, the latest evaluations with their
per-claim verdicts, failure causes and knowledge-base hotspots, from an embedded, bounded store.

    exporter.py        StoreExporter: evaluations -> StoreWriter (a thread, a bounded queue) -> store.py
    results_reader.py  Kafka mode: the results topic (every replica's results) -> StoreWriter
    queries.py         what each view asks of the store; routes.py serves it as HTML and JSON
    app.py             Page: builds these from settings; the status server starts and stops it
"""
