# The two commands a new user needs (see README); both work on a stock Debian python (PEP 668):
# they create and use the virtualenv .venv (scripts/venv.sh).
#   make demo   install ragpulse and run it on embedded defaults (no Kafka, no API key);
#               DEMO_ARGS="--duration 30" passes flags to `ragpulse demo`
#   make test   install everything the tests need (pip, apt, Maven, npm, the instrumentation venv),
#               check lint, formatting and types (ruff, mypy), and run the whole suite
ifndef PYTHON
PYTHON := $(shell bash scripts/venv.sh)
endif

.PHONY: setup demo test lint bench

setup:
	PYTHON=$(PYTHON) bash scripts/setup.sh

demo:
	$(PYTHON) -m pip install -q --disable-pip-version-check -e .
	$(PYTHON) -m collector.commands.cli demo $(DEMO_ARGS)

test: setup lint
	$(PYTHON) -m pytest

lint:
	$(PYTHON) -m ruff check .
	$(PYTHON) -m ruff format --check .
	$(PYTHON) -m mypy collector evaluators ragpulse_sdk testkit

bench:
	$(PYTHON) -m benchmarks.ingest
	$(PYTHON) -m benchmarks.pipeline
