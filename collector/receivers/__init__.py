"""Receivers (sources): where spans come from; each hands `Received` batches to the pipeline.

`otlp` decodes one request or record whatever carried it; `otlp_http` and `otlp_grpc` are the
embedded OTLP endpoints; `kafka` is the consumer group (and `replay` re-reads a time range). The
`Receiver` interface and `Received` live in `collector.stages`.
"""
