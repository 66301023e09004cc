#!/usr/bin/env bash
# Build (once) the venv of the instrumentation conformance suite (third-party RAG frameworks and their
# instrumentations, tests/instrumentation/requirements.txt) and print its python; cached by the
# requirements' hash (scripts/cached-venv.sh).
exec bash "$(dirname "$0")/cached-venv.sh" instrumentation tests/instrumentation/requirements.txt "$@"
