"""Kafka client options that one client's configuration can lend another on the same cluster."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

_SHARED = ("security_protocol", "sasl_mechanism", "sasl_plain_username", "sasl_plain_password", "client_id")


def security_options(options: Mapping[str, Any]) -> dict[str, Any]:
    """The credentials and TLS settings of `options`, without consumer- or producer-only keys.

    kafka-python rejects keyword arguments a client does not know, so a producer cannot simply take
    the consumer's options (or the reverse); the connection settings are what they share.
    """
    return {k: v for k, v in options.items() if k in _SHARED or k.startswith(("ssl_", "sasl_"))}
