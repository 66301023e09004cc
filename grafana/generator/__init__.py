"""Generates ragpulse's Grafana dashboards (committed in grafana/dashboards/) with grafana-foundation-sdk."""
