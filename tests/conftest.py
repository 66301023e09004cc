"""Shared fixtures: each real component the tests need lives in its own plugin module."""

pytest_plugins = [
    "tests.fixtures.kafka",
    "tests.fixtures.openai_server",
]
