"""pytest plugin (entry point `pytest11`): `--ragpulse-judge offline|openai` and a `ragpulse_judge` fixture.

Loaded in every pytest run of an environment where ragpulse is installed, so it imports nothing heavy
until a test asks for the fixture.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from evaluators.judges.base import Judge


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("ragpulse", "RAG quality assertions (evaluators.assert_rag)")
    group.addoption(
        "--ragpulse-judge",
        choices=["offline", "openai"],
        default=None,
        help="judge for assert_rag; default: openai when OPENAI_BASE_URL or OPENAI_API_KEY is set, "
        "else offline",
    )


def pytest_configure(config: pytest.Config) -> None:
    forced = config.getoption("ragpulse_judge", None)
    if forced:
        from evaluators import testing

        testing.forced_judge = forced


def pytest_unconfigure(config: pytest.Config) -> None:
    if config.getoption("ragpulse_judge", None):
        from evaluators import testing

        testing.forced_judge = None  # an in-process pytest run (pytester) must not leak it


@pytest.fixture
def ragpulse_judge(request: pytest.FixtureRequest) -> Judge:
    """The judge assert_rag would choose (or the one --ragpulse-judge forces), to pass to metrics."""
    from evaluators.testing import resolve_judge

    return resolve_judge(request.config.getoption("ragpulse_judge", None))
