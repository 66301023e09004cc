#!/usr/bin/env bash
# Build (once) the venv of the instrumentation conformance suite and print its python on stdout.
# The venv holds third-party RAG frameworks and instrumentations that must not enter ragpulse's own
# environment; it is keyed by the hash of the requirements file, so a changed pin builds a new one and
# a warm call costs milliseconds. A lock serialises concurrent callers; everything but the path goes to
# stderr.
set -euo pipefail
cd "$(dirname "$0")/.."
REQUIREMENTS=tests/instrumentation/requirements.txt
PYTHON=${PYTHON:-python3}
CACHE=${RAGPULSE_CACHE:-$HOME/.cache/ragpulse}
HASH=$(sha256sum "$REQUIREMENTS" | cut -c1-12)
VENV="$CACHE/instrumentation-$HASH"

if [ ! -f "$VENV/.complete" ]; then
  mkdir -p "$CACHE"
  exec 9>"$VENV.lock"
  flock 9
  if [ ! -f "$VENV/.complete" ]; then  # another caller may have built it while we waited
    echo "instrumentation-venv: building $VENV" >&2
    rm -rf "$VENV"
    "$PYTHON" -m venv "$VENV" >&2
    "$VENV/bin/python" -m pip install -q --disable-pip-version-check --upgrade pip >&2
    "$VENV/bin/python" -m pip install -q --disable-pip-version-check -r "$REQUIREMENTS" >&2
    touch "$VENV/.complete"  # only a finished install counts: an interrupted one is rebuilt
  fi
fi
echo "$VENV/bin/python"
