"""Render the dashboards to the exact JSON text committed under grafana/dashboards/."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from grafana_foundation_sdk.cog.encoder import JSONEncoder
from grafana_foundation_sdk.models.dashboard import Dashboard

from grafana.generator import judge, pipeline, quality
from grafana.generator.common import GRAFANA_SCHEMA_VERSION

DASHBOARDS_DIR = Path(__file__).resolve().parent.parent / "dashboards"
DASHBOARDS: dict[str, Callable[[], Dashboard]] = {
    "ragpulse-quality.json": quality.build,
    "ragpulse-pipeline.json": pipeline.build,
    "ragpulse-judge.json": judge.build,
}


def render(build: Callable[[], Dashboard]) -> str:
    model = build()
    model.schema_version = GRAFANA_SCHEMA_VERSION
    for panel_id, panel in enumerate(model.panels or [], start=1):
        panel.id_val = panel_id  # Grafana needs unique ids for links to a panel (viewPanel=<id>)
        if panel.type_val == "table" and panel.options is not None:
            # The SDK writes a hidden footer into every table's options; newer Grafana schemas no longer
            # have that key there (it moved to the field config). Hidden is the default anyway.
            panel.options.footer = None
    for variable in model.templating.list_val or []:
        # The SDK writes interval-variable fields on every variable; Grafana's types reject them elsewhere.
        if variable.type_val != "interval":
            variable.auto = variable.auto_min = variable.auto_count = None
    return json.dumps(model, cls=JSONEncoder, indent=2, sort_keys=True) + "\n"


def rendered() -> dict[str, str]:
    """File name -> JSON text of every dashboard."""
    return {name: render(build) for name, build in DASHBOARDS.items()}
