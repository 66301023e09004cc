#!/usr/bin/env bash
# Installs the pinned helm CLI into deploy/tools/bin by building it from its Go module (no prebuilt binary
# download is possible here). helm v3.21 needs Go >= 1.26; an older go (Debian bookworm's golang-go is
# 1.19) fetches the Go 1.26 toolchain as the Go module golang.org/toolchain, the way go itself switches
# toolchains, into ~/.cache/ragpulse. Measured: 108 s cold (module download + build, 2 cores), a few
# seconds when already installed. RAGPULSE_FETCH_GO_TOOLCHAIN=1 uses the fetched toolchain regardless.
set -euo pipefail
HELM_VERSION="v3.21.4"
GO_MIN="1.26"
GO_TOOLCHAIN="1.26.8"
BIN_DIR="$(cd "$(dirname "$0")" && pwd)/bin"
CACHE=${RAGPULSE_CACHE:-$HOME/.cache/ragpulse}
if [ -x "$BIN_DIR/helm" ] && "$BIN_DIR/helm" version --template '{{.Version}}' 2>/dev/null | grep -qx "$HELM_VERSION"; then
  exit 0
fi

go_at_least() {  # go_at_least GO VERSION: the go binary reports at least VERSION
  local have
  have=$("$1" env GOVERSION 2>/dev/null | sed 's/^go//') || return 1
  [ -n "$have" ] && [ "$(printf '%s\n%s\n' "$2" "$have" | sort -V | head -n 1)" = "$2" ]
}

fetch_toolchain() {  # prints the GOROOT of Go $GO_TOOLCHAIN, fetched once through the module proxy
  local root="$CACHE/go$GO_TOOLCHAIN" arch dir
  if [ ! -x "$root/bin/go" ]; then
    arch=$(go env GOARCH)
    echo "install-helm: fetching the Go $GO_TOOLCHAIN toolchain (module golang.org/toolchain)" >&2
    dir=$(cd "$(mktemp -d)" && GOFLAGS=-mod=mod GOTOOLCHAIN=local \
      go mod download -json "golang.org/toolchain@v0.0.1-go$GO_TOOLCHAIN.linux-$arch" \
      | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
    [ -n "$dir" ] || { echo "install-helm: could not fetch the Go toolchain" >&2; exit 1; }
    rm -rf "$root.tmp" && mkdir -p "$CACHE" && cp -r "$dir" "$root.tmp" && chmod -R u+w "$root.tmp"
    chmod +x "$root.tmp"/bin/* "$root.tmp"/pkg/tool/*/*  # module zips carry no file modes
    rm -rf "$root" && mv "$root.tmp" "$root"
  fi
  echo "$root"
}

GO=go
if [ "${RAGPULSE_FETCH_GO_TOOLCHAIN:-0}" = 1 ] || ! go_at_least go "$GO_MIN"; then
  GOROOT=$(fetch_toolchain)
  export GOROOT GOTOOLCHAIN=local
  GO="$GOROOT/bin/go"
fi
mkdir -p "$BIN_DIR"
GOBIN="$BIN_DIR" GOFLAGS="${GOFLAGS:-} -buildvcs=false" \
  "$GO" install -ldflags "-X helm.sh/helm/v3/internal/version.version=$HELM_VERSION" "helm.sh/helm/v3/cmd/helm@$HELM_VERSION"
"$BIN_DIR/helm" version --short
