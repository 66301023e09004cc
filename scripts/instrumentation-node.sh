#!/usr/bin/env bash
# Usage: instrumentation-node.sh [--check]
# Install (once) the Node conformance apps' packages (tests/instrumentation/node: the Vercel AI SDK,
# the openai JS SDK, OpenTelemetry and OpenInference, pinned by package-lock.json) with `npm ci` into a
# folder cached by the lock file's hash, as scripts/cached-venv.sh caches the Python venvs, and print
# the folder. The apps run from a copy of their sources in a subfolder of it, where Node's module
# resolution finds its node_modules (tests/instrumentation/node/harness.py). A lock serialises
# concurrent callers; everything but the path goes to stderr. --check installs nothing: it prints
# the folder when the install is complete, else exits 1.
set -euo pipefail
cd "$(dirname "$0")/.."
SOURCE=tests/instrumentation/node
CACHE=${RAGPULSE_CACHE:-$HOME/.cache/ragpulse}
HASH=$(cat "$SOURCE/package-lock.json" | sha256sum | cut -c1-12)
DIR="$CACHE/instrumentation-node-$HASH"

if [ "${1:-}" = "--check" ]; then
  [ -f "$DIR/.complete" ] || exit 1
elif [ ! -f "$DIR/.complete" ]; then
  command -v npm >/dev/null || { echo "instrumentation-node: npm not found (scripts/setup.sh installs it)" >&2; exit 1; }
  mkdir -p "$CACHE"
  exec 9>"$DIR.lock"
  flock 9
  if [ ! -f "$DIR/.complete" ]; then  # another caller may have installed it while we waited
    echo "instrumentation-node: installing $DIR" >&2
    rm -rf "$DIR"
    mkdir -p "$DIR"
    cp "$SOURCE/package.json" "$SOURCE/package-lock.json" "$DIR/"
    (cd "$DIR" && npm ci --no-audit --no-fund --loglevel=error --engine-strict=false >&2)
    touch "$DIR/.complete"  # only a finished install counts: an interrupted one is reinstalled
  fi
fi
echo "$DIR"
