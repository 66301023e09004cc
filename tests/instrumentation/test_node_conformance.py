"""Conformance of the Node apps: the Vercel AI SDK (with and without a retrieval tool) and the openai
JS SDK with OpenInference, real packages from npm (tests/instrumentation/node), exporting with the
stock OTLP/HTTP exporter to `ragpulse run`.

The same check as the Python apps' (test_conformance.py): one `rag_record` per question with the exact
question, passages and answer the app saw, and the planted unfaithful answer the one that fails
faithfulness. Installing the packages (`npm ci`, cached by package-lock.json's hash) takes about 10 s
cold; only RAGPULSE_SKIP_INSTRUMENTATION=1 skips.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from testkit.process import RagpulseProcess
from tests.instrumentation.llm_server import ScriptedLLMServer
from tests.instrumentation.node import harness
from tests.instrumentation.test_conformance import (
    EXPECTATIONS,
    Expect,
    check_committed_capture,
    check_expected,
    compare,
    wait_until_settled,
)

NODE_EXPECTATIONS: dict[str, Expect] = {
    "vercel-ai-ai-sdk": Expect(False, False, "system message in ai.prompt.messages of the doGenerate span"),
    "vercel-ai-tool-ai-sdk": Expect(True, False, "ai.toolCall.result: JSON list of {id, text} documents"),
    "openai-js-openinference": Expect(
        False, False, "system message under a `Context:` header, llm.input_messages.0.message.content"
    ),
    "vercel-ai-ai-sdk-genai": Expect(False, False, "gen_ai.system_instructions of the chat span"),
    "vercel-ai-tool-ai-sdk-genai": Expect(True, False, "execute_tool span gen_ai.tool.call.result"),
}
# `compare` and `check_extracted_exactly` look a combination up in this table; the Node ones join it.
EXPECTATIONS.update(NODE_EXPECTATIONS)
# Known not to come out right yet, with why: strict, so the fix shows as an unexpected pass.
KNOWN_WRONG: dict[str, str] = {}


def combinations() -> list:
    """The combinations as pytest params, the known-wrong ones marked strict xfail."""
    return [
        pytest.param(c, id=name, marks=[pytest.mark.xfail(strict=True, reason=KNOWN_WRONG[name])])
        if name in KNOWN_WRONG
        else pytest.param(c, id=name)
        for name, c in harness.NAMES.items()
    ]


@pytest.fixture(scope="session")
def node_apps() -> Path:
    """The cached folder of the apps' node_modules, installed on first use; an install that fails is an
    error of the suite, never a silent skip."""
    if os.environ.get("RAGPULSE_SKIP_INSTRUMENTATION") == "1":
        pytest.skip("RAGPULSE_SKIP_INSTRUMENTATION=1: instrumentation conformance tests skipped")
    try:
        return harness.node_folder()
    except subprocess.CalledProcessError as error:
        raise RuntimeError(
            f"scripts/instrumentation-node.sh failed (exit {error.returncode}); see its stderr above"
        ) from error


@pytest.mark.instrumentation
@pytest.mark.parametrize("combination", combinations())
def test_node_conformance(
    node_apps: Path, llm_server: ScriptedLLMServer, combination: tuple[str, str], tmp_path: Path
) -> None:
    combo = harness.combination_name(*combination)
    with RagpulseProcess("--log-records", "--quiet-period", "1") as collector:
        endpoint = f"http://127.0.0.1:{collector.otlp_port}"
        out = tmp_path / "expected.json"
        result = harness.run(
            node_apps, combination, llm_server.base_url, "--endpoint", endpoint, "--expected", str(out)
        )
        assert result.returncode == 0, (
            f"the {combo} app failed (harness, not ragpulse):\n{result.stderr[-4000:]}"
        )
        expected = json.loads(out.read_text())
        check_expected(expected)
        records, metrics = wait_until_settled(collector, {e["trace_id"] for e in expected})
        problems = compare(combo, expected, records, metrics)
        traces = metrics.by_label("ragpulse_traces_total", "state")
        output = collector.output()
    assert not problems, (
        f"{combo}: ragpulse disagrees with the app\n  "
        + "\n  ".join(problems)
        + f"\ntraces by state: {traces}\ncollector log (tail):\n{output[-3000:]}"
    )


@pytest.mark.parametrize("combo", list(harness.NAMES))
def test_committed_node_fixture_is_consistent(combo: str) -> None:
    """The committed captures hold the app's questions and every question's trace (no Node needed)."""
    logs = check_committed_capture(harness.CAPTURES / combo)
    assert logs == {}, "neither instrumentation logs content"
