"""The grounding SLO's objective is set in one place and every burn-rate threshold follows it.

Users change `ragpulse:grounding_slo_objective` in the rules file (or `slo.objective` in the Helm values):
nothing else in the rules may spell the objective or its budget, the Helm default must equal the rules'
(so the chart renders the plain manifests), and a stricter objective must page on traffic that the default
objective lets through, in promtool's real rule engine.
"""

from __future__ import annotations

import re
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.ops.tools import DEPLOY, RULES_FILE, require_binary, run

pytestmark = pytest.mark.prometheus

OBJECTIVE = "ragpulse:grounding_slo_objective"
CHART = DEPLOY / "helm" / "ragpulse"
HELM = DEPLOY / "tools" / "bin" / "helm"
SERIES = 'ragpulse_evaluations_total{{metric="faithfulness",service="chat",route="/ask",outcome="{outcome}"}}'


def _rules(text: str) -> list[dict[str, Any]]:
    return [rule for group in yaml.safe_load(text)["groups"] for rule in group["rules"]]


def _objective(rules: list[dict[str, Any]]) -> float:
    (rule,) = [rule for rule in rules if rule.get("record") == OBJECTIVE]
    match = re.fullmatch(r"vector\(([0-9.]+)\)", rule["expr"].strip())
    assert match, f"{OBJECTIVE} must be a plain vector(<number>), got {rule['expr']!r}"
    return float(match.group(1))


def test_the_objective_is_set_in_one_place_and_every_burn_rate_reads_it() -> None:
    rules = _rules(RULES_FILE.read_text())
    objective = _objective(rules)
    assert 0.9 <= objective < 1
    budget = f"{1 - objective:.2f}"
    for rule in rules:
        name = rule.get("record") or rule["alert"]
        if name != OBJECTIVE:
            assert not re.search(rf"\b({objective}|{budget})\b", rule["expr"]), f"{name} spells the objective"
    burn_rates = [rule for rule in rules if ":burn_rate" in rule.get("record", "")]
    assert len(burn_rates) == 7
    assert all("ragpulse:grounding_slo_error_budget" in rule["expr"] for rule in burn_rates)


def test_the_helm_default_objective_is_the_rules_objective() -> None:
    values = yaml.safe_load((CHART / "values.yaml").read_text())
    assert values["slo"]["objective"] == _objective(_rules(RULES_FILE.read_text()))


@pytest.fixture(scope="module")
def helm() -> Iterator[str]:
    """helm built from its Go module by deploy/tools/install-helm.sh (as tests/ops/test_deploy.py does)."""
    require_binary("go", "install Go >= 1.24 to build helm (deploy/tools/install-helm.sh)")
    result = run(["bash", str(DEPLOY / "tools" / "install-helm.sh")], timeout=600)
    assert result.returncode == 0, result.stdout + result.stderr
    yield str(HELM)


def test_helm_slo_objective_sets_the_rule(helm: str) -> None:
    argv = [helm, "template", "ragpulse", str(CHART), "--show-only", "templates/prometheusrule.yaml"]
    result = run([*argv, "--set", "slo.objective=0.99"])
    assert result.returncode == 0, result.stderr
    assert _objective(yaml.safe_load(result.stdout)["spec"]["groups"][0]["rules"]) == 0.99


def _promtool_burn_test(tmp_path: Path, objective: float, expect_fast: bool, expect_slow: bool) -> str:
    """Run the shipped rules, objective replaced, on 2 hours of a steady 10% failed share."""
    shipped = RULES_FILE.read_text()
    rules_dir, tests_dir = tmp_path / "rules", tmp_path / "tests"
    rules_dir.mkdir(parents=True)
    tests_dir.mkdir(parents=True)
    replaced = shipped.replace(f"vector({_objective(_rules(shipped))})", f"vector({objective})")
    assert _objective(_rules(replaced)) == objective
    (rules_dir / "ragpulse.rules.yml").write_text(replaced)

    def expect(alert: str, fires: bool) -> dict[str, Any]:
        """Whether `alert` fires at 2h, read from the ALERTS series (annotations are not compared here)."""
        severity = "critical" if "Fast" in alert else "warning"
        firing = f'ALERTS{{alertname="{alert}",alertstate="firing"'
        labels = f'{firing},component="ragpulse",service="chat",severity="{severity}"}}'
        samples = [{"labels": labels, "value": 1}] if fires else []
        return {"expr": firing + "}", "eval_time": "2h", "exp_samples": samples}

    test = {
        "rule_files": ["../rules/ragpulse.rules.yml"],
        "evaluation_interval": "1m",
        "tests": [
            {
                "interval": "1m",
                "input_series": [
                    {"series": SERIES.format(outcome="failed"), "values": "0+1x130"},
                    {"series": SERIES.format(outcome="passed"), "values": "0+9x130"},
                ],
                "promql_expr_test": [
                    expect("RagpulseGroundingBudgetFastBurn", expect_fast),
                    expect("RagpulseGroundingBudgetSlowBurn", expect_slow),
                ],
            }
        ],
    }
    (tests_dir / "objective.test.yml").write_text(yaml.safe_dump(test))
    promtool = require_binary("promtool", "apt-get install prometheus")
    result = subprocess.run(
        [promtool, "test", "rules", "objective.test.yml"], cwd=tests_dir, capture_output=True, text=True
    )
    assert result.returncode == 0, result.stdout + result.stderr
    return result.stdout


def test_a_stricter_objective_pages_on_what_the_default_only_tickets(tmp_path: Path) -> None:
    """10% failed: 2x the default 5% budget (a ticket), 10x a 99% objective's 1% (a page, 6 h/30 m pair).
    The summaries are not checked here: slo_fast/slo_slow.test.yml pin them; this is about thresholds."""
    _promtool_burn_test(tmp_path / "default", 0.95, expect_fast=False, expect_slow=True)
    _promtool_burn_test(tmp_path / "strict", 0.99, expect_fast=True, expect_slow=True)
