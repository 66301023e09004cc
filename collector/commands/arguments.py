"""Argument types shared by several commands (`replay`, `export-cases`)."""

from __future__ import annotations

from datetime import UTC, datetime


def utc_timestamp(value: str) -> datetime:
    """ISO 8601 (a missing zone means UTC) or 'now': `replay --from/--to`, `export-cases --since`."""
    if value == "now":
        return datetime.now(UTC)
    parsed = datetime.fromisoformat(value)
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)
