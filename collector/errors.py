"""Errors the command line turns into one line (no traceback), importable without loading the sidecar."""

KAFKA_HINT = (
    "check the bootstrap servers and the security settings in the options: security_protocol, sasl_*, ssl_*; "
    "the log above names the broker's answer"
)


def is_kafka_error(exc: BaseException) -> bool:
    """A kafka-python error at start (no broker, a security mismatch such as SASL against a plaintext
    listener): the command line prints it as one line. By module, so the CLI need not import kafka."""
    return type(exc).__module__.startswith("kafka.")


class ConfigError(ValueError):
    """The configuration cannot be used; the message is one line naming the file, key or metric."""
