#!/usr/bin/env bash
# Build (once) the venv holding deepeval and ragas, the libraries whose test-case objects ragpulse's
# `evaluate()` reads (tests/evaluators/test_library_objects.py), and print its python; --check only says
# whether it is built. A few minutes cold; cached by the hash of scripts/peers-requirements.txt.
exec bash "$(dirname "$0")/cached-venv.sh" peers scripts/peers-requirements.txt "$@"
