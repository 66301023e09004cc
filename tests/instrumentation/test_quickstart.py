"""docs/quickstart.md step 2, its commands read from the page and run as written: `ragpulse run`, the
scripted OpenAI-compatible server with the example's corpus, a fresh `python3 -m venv`, and the real
LlamaIndex example app, whose answers the sidecar scores.

Two stand-ins, both said here: the app runs in the cached instrumentation venv (the page's `pip install`
needs the network; the test checks that the page's requirements pin exactly what that venv holds), and
ports are free ones instead of 4318/9464/8000, so that the test runs beside anything else.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from testkit.process import RagpulseProcess, free_port
from testkit.scrape import scrape
from tests.instrumentation.capture import ROOT

PAGE = ROOT / "docs" / "quickstart.md"
FENCE = re.compile(r"^```[^\n]*\n(.*?)^```", re.M | re.S)


def step_two_commands() -> list[str]:
    """Every command line of the fenced blocks of step 2, continuation lines joined."""
    text = PAGE.read_text(encoding="utf-8")
    section = text[text.index("## 2.") : text.index("## 3.")]
    lines = []
    for block in FENCE.findall(section):
        lines += [line.strip() for line in block.replace("\\\n", " ").splitlines() if line.strip()]
    return lines


def the(commands: list[str], marker: str) -> str:
    found = [c for c in commands if marker in c]
    assert len(found) == 1, f"step 2 should have one command with {marker!r}: {found}"
    return found[0]


def pins(path: Path) -> dict[str, str]:
    found = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        if "==" in line and not line.startswith("#"):
            name, version = line.split("==")
            found[name.strip().lower()] = version.strip()
    return found


def test_the_quickstart_installs_into_a_virtualenv_what_ci_runs(tmp_path: Path) -> None:
    commands = step_two_commands()
    assert the(commands, "-m venv") == "python3 -m venv app-venv"
    pip = shlex.split(the(commands, "pip install"))
    assert pip[0] == "app-venv/bin/pip", "pip outside the venv fails on a stock Debian python (PEP 668)"
    requirements = pins(ROOT / pip[pip.index("-r") + 1])
    tested = pins(ROOT / "tests" / "instrumentation" / "requirements.txt")
    assert requirements and {name: tested.get(name) for name in requirements} == requirements
    subprocess.run(shlex.split(the(commands, "-m venv")), cwd=tmp_path, check=True, timeout=300)
    assert (tmp_path / "app-venv" / "bin" / "pip").exists()


@pytest.mark.instrumentation
def test_the_quickstart_app_is_scored(instrumentation_venv: str) -> None:
    commands = step_two_commands()
    assert the(commands, "ragpulse run") == ".venv/bin/ragpulse run"
    server_argv = shlex.split(the(commands, "llm_server"))
    assert server_argv[0] == ".venv/bin/python" and server_argv[server_argv.index("--port") + 1] == "8000"
    server_argv[0], server_argv[server_argv.index("--port") + 1] = sys.executable, str(free_port())

    app_words = shlex.split(the(commands, "quickstart_app.py"))
    env_words = [w for w in app_words if re.fullmatch(r"[A-Z_]+=.*", w)]
    app_argv = app_words[len(env_words) :]
    assert app_argv[0] == "app-venv/bin/python"
    app_env = dict(w.split("=", 1) for w in env_words)
    assert app_env["OPENAI_BASE_URL"] == "http://127.0.0.1:8000/v1"
    grep = re.search(r"grep '([^']+)'", the(commands, "curl"))
    assert grep

    server = subprocess.Popen(server_argv, cwd=ROOT, stdout=subprocess.PIPE, text=True)
    try:
        assert server.stdout is not None
        base_url = server.stdout.readline().strip()
        assert re.fullmatch(r"http://127\.0\.0\.1:\d+/v1", base_url), base_url
        with RagpulseProcess() as ragpulse:
            env = {
                **{k: v for k, v in os.environ.items() if not k.startswith(("OTEL_", "OPENAI_"))},
                **app_env,
                "OPENAI_BASE_URL": base_url,
                "RAGPULSE_OTLP_ENDPOINT": f"http://127.0.0.1:{ragpulse.otlp_port}/v1/traces",
            }
            grounded = run_app(instrumentation_venv, app_argv, env)
            assert "Full-time staff receive 27 days of paid leave per year." in grounded
            saturday = [*app_argv[:-1], "Can I work from the Lisbon office on Saturdays?"]
            invented = run_app(instrumentation_venv, saturday, env)
            assert "Saturdays from 10:00" in invented

            faithfulness = {"metric": "faithfulness", "service": "quickstart-rag-app"}
            deadline = time.monotonic() + 90
            while scrape(ragpulse.metrics_port).value("ragpulse_evaluations_total", **faithfulness) < 2:
                assert time.monotonic() < deadline, ragpulse.output()[-3000:]
                time.sleep(0.3)
            metrics = scrape(ragpulse.metrics_port)
            assert metrics.value("ragpulse_evaluations_total", outcome="passed", **faithfulness) == 1
            assert metrics.value("ragpulse_evaluations_total", outcome="failed", **faithfulness) == 1
            with urllib.request.urlopen(f"{ragpulse.metrics_url}/metrics", timeout=10) as response:
                exposition = response.read().decode()
            shown = [line for line in exposition.splitlines() if grep.group(1) in line]
            assert shown, f"the page's grep finds nothing in /metrics: {grep.group(1)}"
            example = [c for c in commands if c.startswith("ragpulse_evaluations_total{")]
            assert len(example) == 1 and example[0] in shown  # the line the page shows, as it shows it
            print("\n".join(shown))
    finally:
        server.terminate()
        server.wait(10)


def run_app(python: str, argv: list[str], env: dict[str, str]) -> str:
    app = subprocess.run([python, *argv[1:]], cwd=ROOT, env=env, capture_output=True, text=True, timeout=240)
    assert app.returncode == 0, app.stderr[-3000:]
    return app.stdout
