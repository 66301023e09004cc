"""docs/quickstart.md step 2 as written: the example LlamaIndex app, scored by a running `ragpulse run`."""

from __future__ import annotations

import os
import subprocess
import time

import pytest

from testkit.process import RagpulseProcess
from testkit.scrape import scrape
from tests.instrumentation.capture import ROOT
from tests.instrumentation.llm_server import ScriptedLLMServer

QUESTION = "How many days of paid leave do staff receive per year?"
ANSWER = "Full-time staff receive 27 days of paid leave per year."


@pytest.mark.instrumentation
def test_the_quickstart_app_is_scored(instrumentation_venv: str) -> None:
    with (
        ScriptedLLMServer(answers={QUESTION: ANSWER}) as llm,
        RagpulseProcess("--quiet-period", "1") as ragpulse,
    ):
        env = {
            **{k: v for k, v in os.environ.items() if not k.startswith(("OTEL_", "OPENAI_"))},
            "OPENAI_BASE_URL": llm.base_url,
            "OPENAI_API_KEY": "sk-quickstart",
            "RAGPULSE_OTLP_ENDPOINT": f"http://127.0.0.1:{ragpulse.otlp_port}/v1/traces",
        }
        app = subprocess.run(
            [instrumentation_venv, str(ROOT / "docs" / "examples" / "quickstart_app.py")],
            env=env,
            capture_output=True,
            text=True,
            timeout=240,
        )
        assert app.returncode == 0 and ANSWER in app.stdout, app.stderr[-3000:]
        deadline = time.monotonic() + 60
        faithfulness = {"metric": "faithfulness", "service": "quickstart-rag-app"}
        while scrape(ragpulse.metrics_port).value("ragpulse_evaluations_total", **faithfulness) < 1:
            assert time.monotonic() < deadline, ragpulse.output()[-3000:]
            time.sleep(0.3)
        assert (
            scrape(ragpulse.metrics_port).value(
                "ragpulse_evaluations_total", outcome="passed", **faithfulness
            )
            == 1
        )
