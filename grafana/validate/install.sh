#!/usr/bin/env bash
# Installs the pinned dashboard validators (@grafana/schema, typescript) from package-lock.json.
set -euo pipefail
cd "$(dirname "$0")"
npm ci --no-audit --no-fund --loglevel=error
