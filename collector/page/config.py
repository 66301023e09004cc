"""The `page:` section: the built-in page at `/` on the metrics port and the store behind it."""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, SecretStr


class PageConfig(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    enabled: bool = Field(True, description="Serve the page at / on the metrics port and keep its store.")
    store_path: Path | None = Field(
        None,
        description="SQLite file of the store; unset = in memory (the page starts empty after a restart). "
        "A path keeps the history across restarts; one file per replica (never shared).",
    )
    retention_hours: float = Field(24.0, gt=0, description="Evaluations older than this are deleted.")
    max_store_mb: float = Field(
        256.0, gt=0, description="Size cap of the store; beyond it the oldest evaluations are deleted."
    )
    max_queued: int = Field(
        10_000,
        ge=1,
        description="Records waiting for the store's writer; nine tenths full, evaluation waits.",
    )
    read_results_topic: bool = Field(
        True,
        description="With a results topic (results.bootstrap_servers), read it into the store so every "
        "replica's page shows the whole group.",
    )
    trace_url: str | None = Field(
        None,
        description="Link to a trace in the tracing backend, with {trace_id} and {span_id}, e.g. "
        "http://jaeger:16686/trace/{trace_id}; unset = the page's own view of what ragpulse read from "
        "the trace (its RAG answer spans, where they came from, when they ended and were judged).",
    )
    token: SecretStr | None = Field(
        None, description="Bearer token the page and its API ask for; /metrics and probes stay open."
    )
    token_file: Path | None = Field(None, description="A file holding the token (e.g. a mounted Secret).")
    refresh_s: float = Field(
        5.0,
        ge=0,
        description="The overview reloads this often, and the evaluations list checks for new rows (it "
        "says how many arrived and never replaces the rows being read); 0 = never.",
    )

    def resolved_token(self) -> str | None:
        """The token to ask for, or None (the page is open to whoever reaches the metrics port)."""
        if self.token is not None:
            return self.token.get_secret_value() or None
        if self.token_file is not None:
            return self.token_file.read_text().strip() or None
        return None
