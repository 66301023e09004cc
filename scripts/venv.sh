#!/usr/bin/env bash
# Create (once) and print the project's virtualenv python: .venv/bin/python.
# A stock Debian python refuses `pip install` outside a venv (PEP 668), and its venv module needs the
# python3-venv package: installed here with apt-get when we are root, otherwise named in one line.
set -euo pipefail
cd "$(dirname "$0")/.."
VENV=${VENV:-.venv}
BASE_PYTHON=${BASE_PYTHON:-python3}
if [ ! -x "$VENV/bin/python" ]; then
  if ! "$BASE_PYTHON" -m venv "$VENV" >/dev/null 2>&1; then
    rm -rf "$VENV"
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
      echo "venv: apt-get install python3-venv" >&2
      apt-get update -qq >&2 && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-venv >&2
      "$BASE_PYTHON" -m venv "$VENV"
    else
      echo "venv: '$BASE_PYTHON -m venv' failed; install python3-venv (sudo apt-get install python3-venv)" >&2
      exit 1
    fi
  fi
  "$VENV/bin/python" -m pip install -q --disable-pip-version-check --upgrade pip >&2
fi
echo "$VENV/bin/python"
