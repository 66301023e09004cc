#!/usr/bin/env bash
# Usage: instrumentation-venv.sh [agents|openlit] [--check]
# Build (once) a venv of the instrumentation conformance suite and print its python; cached by the
# requirements' hash (scripts/cached-venv.sh). The default venv holds the RAG frameworks and their
# instrumentations (tests/instrumentation/requirements.txt); `agents` the agent frameworks
# (requirements-agents.txt: Pydantic AI needs an openai the default pins exclude); `openlit` OpenLIT
# (requirements-openlit.txt: its own OpenTelemetry instrumentations pin an older SDK).
case "${1:-}" in
  agents|openlit)
    NAME=$1
    shift
    exec bash "$(dirname "$0")/cached-venv.sh" "instrumentation-$NAME" "tests/instrumentation/requirements-$NAME.txt" "$@"
    ;;
esac
exec bash "$(dirname "$0")/cached-venv.sh" instrumentation tests/instrumentation/requirements.txt "$@"
