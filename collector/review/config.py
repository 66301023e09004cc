"""The `review:` section: what the review queue picks and when reviewers' corrections move thresholds."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field


class ReviewConfig(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    enabled: bool = Field(
        True, description="The review queue at /review and corrections on the page's evaluation view."
    )
    queue_size: int = Field(50, ge=1, le=500, description="Evaluations the queue lists at once.")
    random_share: float = Field(
        0.1,
        ge=0,
        le=1,
        description="Share of the queue kept for evaluations drawn at random (by trace id): what the "
        "judge was sure of is checked too, so agreement is not estimated on doubtful cases alone.",
    )
    fit_thresholds: bool = Field(
        True,
        description="Refit each metric's pass threshold on the corrections and use it where it agrees with "
        "reviewers more than the shipped one on held-out corrections (each judged by a fit made without it).",
    )
    min_corrections: int = Field(
        20,
        ge=2,
        description="Corrections of one metric (in one scope) needed before a fitted threshold is used; "
        "agreement is exported from the first one.",
    )
    scope: Literal["service", "all"] = Field(
        "service",
        description="Fit thresholds per service (each team's answers and documents differ) or one per "
        "metric over all services (a few corrections per service).",
    )
