"""Sampling: which records get judged, by which metrics, within which budget, and which were
judged recently enough to skip."""
