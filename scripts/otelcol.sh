#!/usr/bin/env bash
# Builds the OpenTelemetry Collector of testkit/otelcol (the OTLP receiver and the contrib file exporter,
# all collector modules at one release, v0.161.0 / v1.67.0) from its Go modules, once, and prints the
# binary's path: ${RAGPULSE_CACHE:-~/.cache/ragpulse}/otelcol-<hash of go.mod, go.sum and main.go>/otelcol.
# No prebuilt collector can be downloaded here; the Go module proxy serves its source. The tests of the
# evaluation log events (tests/collector/test_evaluation_log_events.py) run it as the real receiver that
# stores what ragpulse sends. Measured on 2 shared cores: 2 to 4 min when not built yet (module download
# and build), instant once built. Needs Go >= 1.26: an older go uses the toolchain
# deploy/tools/install-helm.sh fetched into the same cache (scripts/setup.sh runs that first).
set -euo pipefail
SRC="$(cd "$(dirname "$0")/.." && pwd)/testkit/otelcol"
CACHE=${RAGPULSE_CACHE:-$HOME/.cache/ragpulse}
GO_MIN="1.26"
GO_TOOLCHAIN="1.26.8"  # the one install-helm.sh fetches

hash=$(cat "$SRC/go.mod" "$SRC/go.sum" "$SRC/main.go" | sha256sum | cut -c1-16)
out="$CACHE/otelcol-$hash"
if [ -x "$out/otelcol" ]; then
  echo "$out/otelcol"
  exit 0
fi

go_at_least() {  # go_at_least GO VERSION: the go binary reports at least VERSION
  local have
  have=$("$1" env GOVERSION 2>/dev/null | sed 's/^go//') || return 1
  [ -n "$have" ] && [ "$(printf '%s\n%s\n' "$2" "$have" | sort -V | head -n 1)" = "$2" ]
}

GO=go
if ! command -v go >/dev/null || ! go_at_least go "$GO_MIN"; then
  GO="$CACHE/go$GO_TOOLCHAIN/bin/go"
  if [ ! -x "$GO" ]; then
    echo "otelcol.sh: needs Go >= $GO_MIN (run deploy/tools/install-helm.sh to fetch it)" >&2
    exit 1
  fi
  export GOROOT="$CACHE/go$GO_TOOLCHAIN" GOTOOLCHAIN=local
fi

echo "otelcol.sh: building the OpenTelemetry Collector (otlp receiver, file exporter) into $out" >&2
mkdir -p "$out"
tmp="$out/otelcol.$$"
(cd "$SRC" && GOFLAGS="${GOFLAGS:-} -buildvcs=false -mod=readonly" "$GO" build -trimpath -o "$tmp" .)
mv -f "$tmp" "$out/otelcol"  # atomic: a concurrent build never leaves a half-written binary in place
echo "$out/otelcol"
