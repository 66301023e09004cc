#!/usr/bin/env bash
# Usage: cached-venv.sh NAME REQUIREMENTS [--check]
# Build (once) a venv of third-party software that must not enter ragpulse's own environment and print
# its python on stdout. It is keyed by the hash of the requirements file (and of pyproject's dependencies
# when it installs '.'), so a changed pin builds a new one and a warm call costs milliseconds. A lock serialises concurrent callers; everything but the path
# goes to stderr. --check builds nothing: it prints the path when the venv is complete, else exits 1.
set -euo pipefail
cd "$(dirname "$0")/.."
NAME=$1
REQUIREMENTS=$2
PYTHON=${PYTHON:-python3}
CACHE=${RAGPULSE_CACHE:-$HOME/.cache/ragpulse}
# A requirements file that installs ragpulse itself ('.') also depends on pyproject's dependency list.
HASH=$( (cat "$REQUIREMENTS"; if grep -qx '\.' "$REQUIREMENTS"; then sed -n '/^dependencies = \[/,/^\]/p' pyproject.toml; fi) \
  | sha256sum | cut -c1-12)
VENV="$CACHE/$NAME-$HASH"

if [ "${3:-}" = "--check" ]; then
  [ -f "$VENV/.complete" ] || exit 1
elif [ ! -f "$VENV/.complete" ]; then
  mkdir -p "$CACHE"
  exec 9>"$VENV.lock"
  flock 9
  if [ ! -f "$VENV/.complete" ]; then  # another caller may have built it while we waited
    echo "cached-venv: building $VENV" >&2
    rm -rf "$VENV"
    "$PYTHON" -m venv "$VENV" >&2
    "$VENV/bin/python" -m pip install -q --disable-pip-version-check --upgrade pip >&2
    "$VENV/bin/python" -m pip install -q --disable-pip-version-check -r "$REQUIREMENTS" >&2
    touch "$VENV/.complete"  # only a finished install counts: an interrupted one is rebuilt
  fi
fi
echo "$VENV/bin/python"
