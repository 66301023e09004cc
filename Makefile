# The two commands a new user needs (see README):
#   make demo   install ragpulse and run it on embedded defaults (no Kafka, no API key)
#   make test   install everything the tests need (pip, apt, Maven, npm) and run the whole suite
PYTHON ?= python3

.PHONY: setup demo test lint bench

setup:
	bash scripts/setup.sh

demo:
	$(PYTHON) -m pip install -q -e .
	ragpulse demo

test: setup
	$(PYTHON) -m ruff check .
	$(PYTHON) -m pytest

lint:
	$(PYTHON) -m ruff check .
	$(PYTHON) -m ruff format --check collector evaluators tests benchmarks scripts

bench:
	$(PYTHON) benchmarks/ingest.py
	$(PYTHON) benchmarks/pipeline.py
