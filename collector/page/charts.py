"""Sparklines as inline SVG drawn on the server: no chart library, no script, works offline."""

from __future__ import annotations

from collections.abc import Sequence

from markupsafe import Markup, escape


def sparkline(
    values: Sequence[float | None],
    threshold: float | None = None,
    width: int = 120,
    height: int = 28,
    label: str = "",
) -> Markup:
    """Scores 0..1 left (oldest) to right; gaps where a bucket had no score; the threshold dashed."""
    step = width / max(len(values) - 1, 1)

    def y(value: float) -> float:
        return round(height - 2 - max(0.0, min(1.0, value)) * (height - 4), 1)

    runs: list[list[str]] = [[]]
    dots = []
    for index, value in enumerate(values):
        if value is None:
            runs.append([])
            continue
        x = round(index * step, 1)
        runs[-1].append(f"{x},{y(value)}")
        dots.append((x, y(value)))
    lines = "".join(f'<polyline points="{" ".join(run)}"/>' for run in runs if len(run) > 1)
    singles = "".join(
        f'<circle cx="{x}" cy="{cy}" r="1.6"/>'
        for run in runs
        if len(run) == 1
        for x, cy in [run[0].split(",")]
    )
    last = f'<circle class="last" cx="{dots[-1][0]}" cy="{dots[-1][1]}" r="2.2"/>' if dots else ""
    rule = (
        f'<line class="threshold" x1="0" x2="{width}" y1="{y(threshold)}" y2="{y(threshold)}"/>'
        if threshold is not None
        else ""
    )
    known = [f"{v:.2f}" for v in values if v is not None]
    title = escape(label or ("score trend: " + (" → ".join(known) if known else "no scores yet")))
    return Markup(
        f'<svg class="spark" viewBox="0 0 {width} {height}" width="{width}" height="{height}" role="img" '
        f'aria-label="{title}"><title>{title}</title>{rule}{lines}{singles}{last}</svg>'
    )
