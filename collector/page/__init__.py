"""The built-in page at `/` on the metrics port: live scores, the evaluations (paged, sorted and
searched in the store's SQL) with their per-claim verdicts, failure causes, knowledge-base hotspots,
and views of one trace and one conversation, from an embedded, bounded store.

    exporter.py        StoreExporter: evaluations -> StoreWriter (a thread, a bounded queue) -> store.py
    results_reader.py  Kafka mode: the results topic (every replica's results) -> StoreWriter
    queries.py         the evaluations list and one evaluation; summaries.py the overview;
    threads.py         a trace, a conversation; routes.py serves them all as HTML and JSON
    app.py             Page: builds these from settings; the status server starts and stops it
"""
