"""Judging: from a `RagRecord` and the metrics sampling chose to `Evaluation`s.

Read in this order: `config` (what users set), `cases` (the record -> test case mapping, once),
`scorers` (where a case is scored: on the event loop with an LLM judge, or in worker processes
with the CPU-bound offline judge), `breaker`, `evaluator` (the cascade, the result mapping) and
`build` (the evaluator the settings ask for).
"""
