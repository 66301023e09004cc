"""The `ragpulse` command line (`cli`) and one module per command that is more than a call into
the pipeline: demo, inspect, export-cases, replay, check-config."""
