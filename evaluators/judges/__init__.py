"""Judges: the `Judge` protocol (`base`), the OpenAI-compatible judge, its prompts and call accounting."""
