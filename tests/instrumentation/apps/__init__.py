"""Tiny real RAG apps for the instrumentation conformance suite (run in their own venv, see README)."""
