"""Errors the command line turns into one line (no traceback), importable without loading the sidecar."""


class ConfigError(ValueError):
    """The configuration cannot be used; the message is one line naming the file, key or metric."""
