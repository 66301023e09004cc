"""The Prometheus rules pass promtool's checks and unit tests, and every alert is tested both ways."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from evaluators.causes import STAGE
from tests.ops.tools import DEPLOY, RULE_TESTS_DIR, RULES_FILE, require_binary, run

pytestmark = pytest.mark.prometheus

PROMTOOL_HINT = "apt-get install prometheus (Debian ships promtool with it)"
ALERTMANAGER_CONFIG = DEPLOY / "alertmanager" / "alertmanager.yml"
# Who hears about an alert: critical pages; a failure with a known owner goes to that owner; else a ticket.
OWNER_RECEIVERS = {"retrieval": "ragpulse-retrieval-owners", "generation": "ragpulse-prompt-owners"}


def _alert_rules() -> list[dict]:
    groups = yaml.safe_load(RULES_FILE.read_text())["groups"]
    return [rule for group in groups for rule in group["rules"] if "alert" in rule]


def _recording_rule(name: str) -> dict:
    groups = yaml.safe_load(RULES_FILE.read_text())["groups"]
    return next(rule for group in groups for rule in group["rules"] if rule.get("record") == name)


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


def test_every_alert_has_severity_summary_description_and_runbook_url() -> None:
    """The runbook itself lives in docs/runbooks/ (tests/ops/test_runbooks.py checks each link resolves);
    an inline `runbook` text would drift from it."""
    for rule in _alert_rules():
        assert rule["labels"]["severity"] in {"critical", "warning"}, rule["alert"]
        for key in ("summary", "description", "runbook_url"):
            assert rule["annotations"].get(key, "").strip(), f"{rule['alert']} lacks annotation {key}"
        assert "runbook" not in rule["annotations"], f"{rule['alert']}: move its runbook to docs/runbooks/"


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
        "RagpulseGroundingBudgetFastBurn",
        "RagpulseGroundingBudgetSlowBurn",
        "RagpulseHallucinationSpike",
        "RagpulseFaithfulnessDrop",
        "RagpulseRelevancyDrop",
        "RagpulseRetrievalFailures",
        "RagpulseGenerationFailures",
        "RagpulseVersionRegression",
        "RagpulseJudgeErrorRate",
        "RagpulseJudgeBudgetExhausted",
        "RagpulseJudgeDrift",
        "RagpulseEvaluationPipelineStalled",
        "RagpulseConsumerLagGrowing",
        "RagpulseDeadLetters",
        "RagpulseDown",
        "RagpulseAbsent",
    }


def test_rules_group_causes_into_the_stages_evaluators_assign() -> None:
    """The rules repeat evaluators.causes.STAGE as regexes (PromQL cannot import it): keep them equal, so a
    new cause is routed to its owner instead of falling into stage "unknown"."""
    expr = _recording_rule("service_stage_cause:ragpulse_failures:increase15m")["expr"]
    assigned = re.findall(r'"stage", "(\w+)", "cause", "([^"]+)"', expr)
    assert assigned[0] == ("unknown", ".*")  # the fallback, overwritten by the two owned stages
    in_rules = {stage: set(regex.split("|")) for stage, regex in assigned[1:]}
    in_evaluators: dict[str, set[str]] = {}
    for cause, stage in STAGE.items():
        in_evaluators.setdefault(stage, set()).add(str(cause))
    assert in_rules == {stage: in_evaluators[stage] for stage in ("retrieval", "generation")}
    assert set(in_evaluators) == {"retrieval", "generation", "unknown"}


def test_alertmanager_routes_every_alert_to_its_receiver() -> None:
    """`amtool config routes test` walks the shipped routing tree with each alert's static labels."""
    amtool = require_binary("amtool", "apt-get install prometheus-alertmanager")
    for rule in _alert_rules():
        labels = {"alertname": rule["alert"], "service": "chat", **rule["labels"]}
        if labels["severity"] == "critical":
            expected = "ragpulse-pager"
        else:
            expected = OWNER_RECEIVERS.get(labels.get("owner", ""), "ragpulse-tickets")
        argv = [amtool, "config", "routes", "test", f"--config.file={ALERTMANAGER_CONFIG}"]
        result = run(argv + [f"{key}={value}" for key, value in labels.items()])
        assert result.returncode == 0, result.stdout + result.stderr
        assert result.stdout.strip() == expected, rule["alert"]
    owners = {rule["labels"].get("owner") for rule in _alert_rules()}
    assert owners >= set(OWNER_RECEIVERS)
