"""The Prometheus rules pass promtool's checks and unit tests, and every alert is tested both ways."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from tests.ops.tools import RULE_TESTS_DIR, RULES_FILE, require_binary, run

pytestmark = pytest.mark.prometheus

PROMTOOL_HINT = "apt-get install prometheus (Debian ships promtool with it)"


def _alert_rules() -> list[dict]:
    groups = yaml.safe_load(RULES_FILE.read_text())["groups"]
    return [rule for group in groups for rule in group["rules"] if "alert" in rule]


def _rule_test_files() -> list[Path]:
    return sorted(RULE_TESTS_DIR.glob("*.test.yml"))


def test_promtool_check_rules_accepts_the_rules() -> None:
    promtool = require_binary("promtool", PROMTOOL_HINT)
    result = run([promtool, "check", "rules", str(RULES_FILE)])
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.mark.parametrize("test_file", _rule_test_files(), ids=lambda path: path.name)
def test_promtool_unit_tests_pass(test_file: Path) -> None:
    promtool = require_binary("promtool", PROMTOOL_HINT)
    result = run([promtool, "test", "rules", test_file.name], cwd=test_file.parent)
    assert result.returncode == 0, result.stdout + result.stderr


def test_every_alert_has_severity_and_runbook_text() -> None:
    for rule in _alert_rules():
        assert rule["labels"]["severity"] in {"critical", "warning"}, rule["alert"]
        for key in ("summary", "description", "runbook"):
            assert rule["annotations"].get(key, "").strip(), f"{rule['alert']} lacks annotation {key}"


def test_every_alert_is_tested_firing_and_quiet() -> None:
    """A rule that is only tested firing may page on noise; one only tested quiet may never fire."""
    firing: set[str] = set()
    quiet: set[str] = set()
    for path in _rule_test_files():
        for case in yaml.safe_load(path.read_text())["tests"]:
            for check in case.get("alert_rule_test", []):
                (firing if check.get("exp_alerts") else quiet).add(check["alertname"])
    alerts = {rule["alert"] for rule in _alert_rules()}
    assert alerts - firing == set(), "alerts never tested firing"
    assert alerts - quiet == set(), "alerts never tested quiet"


def test_expected_alerts_are_present() -> None:
    alerts = {rule["alert"] for rule in _alert_rules()}
    assert alerts == {
        "RagpulseHallucinationSpike",
        "RagpulseFaithfulnessDrop",
        "RagpulseRelevancyDrop",
        "RagpulseJudgeErrorRate",
        "RagpulseJudgeBudgetExhausted",
        "RagpulseEvaluationPipelineStalled",
        "RagpulseConsumerLagGrowing",
        "RagpulseDeadLetters",
        "RagpulseDown",
        "RagpulseAbsent",
    }
