#!/usr/bin/env bash
# Build (once) the venv holding Arize Phoenix, the server the Phoenix exporter's tests post annotations
# to (tests/collector/test_phoenix.py), and print its python; --check only says whether it is built.
# About two minutes and 0.9 GB cold; cached by the hash of scripts/phoenix-requirements.txt.
exec bash "$(dirname "$0")/cached-venv.sh" phoenix scripts/phoenix-requirements.txt "$@"
