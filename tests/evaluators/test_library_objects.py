"""Test cases from both libraries, and `evaluate()` inside a running event loop (notebooks).

The real deepeval `LLMTestCase` and ragas `SingleTurnSample` / `EvaluationDataset` are built in their own
cached venv (scripts/peers-venv.sh, built by scripts/setup.sh) with the work tree first on PYTHONPATH;
locally, without that venv, the test skips and says how to build it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from evaluators import Faithfulness, Hallucination, Outcome, evaluate
from evaluators.case import case_input
from evaluators.offline import OfflineJudge
from testkit.venvs import cached_python

ROOT = Path(__file__).resolve().parents[2]
QUESTION = "What is the capital of France?"
PASSAGES = ["Paris is the capital of France.", "The Louvre is a museum in Paris."]


@dataclass
class LLMTestCase:  # deepeval's attribute names
    input: str
    actual_output: str
    retrieval_context: list[str] | None = None
    context: list[str] | None = None
    expected_output: str | None = None
    name: str | None = None
    additional_metadata: dict[str, str] = field(default_factory=dict)


@dataclass
class SingleTurnSample:  # ragas' attribute names
    user_input: str
    response: str
    retrieved_contexts: list[str] | None = None
    reference: str | None = None


@pytest.fixture(scope="module")
def offline_judge() -> OfflineJudge:
    return OfflineJudge()


def test_objects_are_read_by_attribute_names(offline_judge: OfflineJudge) -> None:
    deepeval = LLMTestCase(QUESTION, "Paris is the capital of France.", PASSAGES, name="dv")
    ragas = SingleTurnSample(QUESTION, "Berlin is the capital of France.", PASSAGES)
    assert case_input(deepeval) == {
        "input": QUESTION,
        "actual_output": "Paris is the capital of France.",
        "retrieval_context": PASSAGES,
        "id": "dv",
        "metadata": {},
    }
    result = evaluate([deepeval, ragas], [Faithfulness(), Hallucination()], offline_judge)
    assert [c.case_id for c in result.cases] == ["dv", "1"]
    passed = [c.by_name()["faithfulness"].outcome for c in result.cases]
    assert passed == [Outcome.PASSED, Outcome.FAILED]
    assert all(c.by_name()["hallucination"].score is not None for c in result.cases)


def test_an_object_without_the_fields_is_unmeasured_not_a_crash(offline_judge: OfflineJudge) -> None:
    result = evaluate([object()], [Faithfulness()], offline_judge)
    assert result.cases[0].results[0].outcome is Outcome.UNMEASURED


async def test_evaluate_inside_a_running_loop(offline_judge: OfflineJudge) -> None:
    """As in a notebook cell: the loop is running, evaluate() still returns results."""
    case = {"question": QUESTION, "answer": "Paris is the capital of France.", "contexts": PASSAGES}
    result = evaluate([case], [Faithfulness()], offline_judge)
    assert result.cases[0].results[0].outcome is Outcome.PASSED


SCRIPT = """
import json
from deepeval.dataset import EvaluationDataset as DeepevalDataset
from deepeval.test_case import LLMTestCase
from ragas import EvaluationDataset, SingleTurnSample
from evaluators import Faithfulness, Hallucination, assert_rag, evaluate
from evaluators.offline import OfflineJudge

q, passages = "What is the capital of France?", ["Paris is the capital of France."]
deepeval = LLMTestCase(input=q, actual_output="Paris is the capital of France.",
                       retrieval_context=passages, name="deepeval-case")
ragas = SingleTurnSample(user_input=q, response="Lyon is the capital of France.", retrieved_contexts=passages)
judge = OfflineJudge()
metrics = [Faithfulness(), Hallucination()]
report = {"objects": evaluate([deepeval, ragas], metrics, judge).model_dump(mode="json")}
report["ragas_dataset"] = evaluate(EvaluationDataset(samples=[ragas]), metrics, judge).model_dump(mode="json")
dataset = DeepevalDataset()
dataset.add_test_case(deepeval)
report["deepeval_dataset"] = evaluate(dataset, metrics, judge).model_dump(mode="json")
assert_rag(deepeval, ("faithfulness",), judge="offline")
try:
    assert_rag(ragas, ("faithfulness",), judge="offline")
except AssertionError as error:
    report["assertion"] = str(error)
print(json.dumps(report))
"""


def peers_python() -> str:
    return cached_python("peers-venv.sh", "about 1 min")


def test_real_deepeval_and_ragas_objects(tmp_path: Path) -> None:
    python = peers_python()
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
        # Neither library may phone home from a test: telemetry and tracking off.
        "DEEPEVAL_TELEMETRY_OPT_OUT": "YES",
        "DEEPEVAL_UPDATE_WARNING_OPT_IN": "NO",
        "DEEPEVAL_GRPC_LOGGING": "NO",
        "RAGAS_DO_NOT_TRACK": "true",
        "HOME": str(tmp_path),  # deepeval writes its settings under the home directory
    }
    env.pop("OPENAI_API_KEY", None)
    done = subprocess.run(
        [python, "-c", SCRIPT], env=env, cwd=tmp_path, capture_output=True, text=True, timeout=240
    )
    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert sys.executable != python
    objects = report["objects"]["cases"]
    assert objects[0]["case_id"] == "deepeval-case"
    assert [c["results"][0]["outcome"] for c in objects] == ["passed", "failed"]
    assert "retrieval context" in objects[1]["results"][1]["reason"]  # hallucination's fallback
    assert report["ragas_dataset"]["cases"][0]["results"][0]["outcome"] == "failed"
    assert report["deepeval_dataset"]["cases"][0]["case_id"] == "deepeval-case"
    assert "faithfulness: failed" in report["assertion"] and "Lyon" in report["assertion"]
