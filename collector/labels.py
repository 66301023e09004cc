"""Bounds on free-text Prometheus label values (services, routes, models and versions), and label sets
whose outcome series are born together (`OutcomeCounter`).

A misbehaving app must never create unbounded series, and a bound must never lose counts: a value
beyond its bound is labelled `other` when its series would be created, and no series holding counts
is removed while it may still change. The one removal is a version's series after `version_idle_s`
without a score: Prometheus has scraped their final values long before (the setting is far beyond any
scrape interval), so `increase()` over them stays exact, and the slot goes to the next new deploy.
(Removing the least recently scored version as soon as a new one came, as before, dropped counts: with
one new version per record, 300 evaluations showed as 55 on /metrics.)
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterable, Sequence
from typing import Any, Literal, Self

from prometheus_client import Counter
from pydantic import BaseModel, ConfigDict, Field

OTHER = "other"


class LabelsConfig(BaseModel):
    """Allow-lists for free-text Prometheus labels; empty = the first `max_values` seen."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    services: list[str] = Field(default_factory=list)
    routes: list[str] = Field(default_factory=list)
    models: list[str] = Field(default_factory=list)
    max_values: int = Field(50, ge=1)
    max_pairs: int = Field(
        200,
        ge=1,
        description="Distinct (service, route) pairs; beyond, a new pair's route becomes `other`. Bounds the "
        "product, not only each label: a pair has 15 series per metric and version (docs/metrics.md).",
    )
    version_from: Literal["service_version", "prompt_version", "model"] = Field(
        "service_version", description="The record field the `version` label of the score metrics shows."
    )
    versions: list[str] = Field(
        default_factory=list,
        description="Allow-list of `version` values (others become `other`); empty = up to `max_versions` "
        "active versions per service.",
    )
    max_versions: int = Field(
        5,
        ge=1,
        description="Active versions per service with their own series; a new version beyond them is "
        "`other` until one goes idle (`version_idle_s`). The `other` service's versions are all `other`.",
    )
    version_idle_s: float = Field(
        3600.0,
        ge=60.0,
        description="A version not scored for this long is idle: its series leave /metrics (Prometheus has "
        "their final values: keep this far beyond the scrape interval) and its slot goes to a new version.",
    )


class LabelPolicy:
    """Maps free-text label values onto configured allow-lists; anything else becomes `other`.

    An empty allow-list admits the first `max_values` distinct values seen, then `other`: safe
    by default, without configuration.
    """

    def __init__(self, allowed: Iterable[str] = (), max_values: int = 50) -> None:
        self._allowed = set(allowed)
        self._fixed = bool(self._allowed)
        self._max_values = max_values

    def bound(self, value: str) -> str:
        if not value:
            return "unknown"
        if value in self._allowed:
            return value
        if not self._fixed and len(self._allowed) < self._max_values:
            self._allowed.add(value)
            return value
        return OTHER


class VersionPolicy:
    """Maps a version onto the `version` label: a fixed allow-list, else up to `max_versions` active
    versions per service, each with its own label.

    A new deploy must get its own label (the version-regression alert compares the newest version with
    the previous ones), and counts must never be lost. So a version keeps its label while it is scored;
    one not scored for `idle_s` frees its slot, and `bound` hands it back for its series to be removed.
    A newcomer while `max_versions` versions are active is `other` (at creation, nothing removed) until
    a slot frees: in normal operation (one to a few versions live at once) every deploy gets its label.
    The `other` service gathers unrelated services, whose versions mean nothing together: all `other`.
    """

    def __init__(self, allowed: Iterable[str] = (), max_versions: int = 5, idle_s: float = 3600.0) -> None:
        self._allowed = frozenset(allowed)
        self._max_versions, self._idle_s = max_versions, idle_s
        self._active: dict[str, dict[str, float]] = {}  # service -> version -> when last scored
        self._first_seen: OrderedDict[tuple[str, str], float] = OrderedDict()

    @classmethod
    def from_config(cls, labels: LabelsConfig) -> VersionPolicy:
        return cls(labels.versions, labels.max_versions, labels.version_idle_s)

    def bound(self, service: str, value: str, now: float) -> tuple[str, list[str]]:
        """(label, versions of `service` gone idle, whose series may be removed) for a version scored
        at `now`."""
        if not value:
            return "unknown", []
        if self._allowed:
            return (value if value in self._allowed else OTHER), []
        if service == OTHER:
            return OTHER, []
        active = self._active.setdefault(service, {})
        idle = [v for v, last in active.items() if now - last >= self._idle_s and v != value]
        for version in idle:
            del active[version]
        if value in active or len(active) < self._max_versions:
            active[value] = now
            return value, idle
        return OTHER, idle

    def first_seen(self, service: str, version: str, now: float) -> float:
        """When `version` of `service` was first labelled; kept after it went idle (bounded memory), so a
        version coming back is not mistaken for the newest."""
        key = (service, version)
        if key not in self._first_seen:
            self._first_seen[key] = now
            while len(self._first_seen) > 100 * self._max_versions:
                self._first_seen.popitem(last=False)
        return self._first_seen[key]


class OutcomeCounter(Counter):
    """A counter whose `outcome` children are created together, the ones not counted yet at 0.

    Prometheus sees a series first at a scrape, and `increase()` counts nothing before a series' first
    sample: a `failed` series born at 1 hides that first failure from every alert window. Created at 0 with
    its `passed` sibling, it is already on /metrics when the first failure comes, so `increase()` sees it.
    (The first scrape of a brand-new label set, e.g. a new version, still starts above 0: the rules count
    a series that is younger than their window by its value instead; see deploy/prometheus/rules.)
    Removing one outcome removes the whole family, so an idle version leaves no zeros behind.
    """

    def __init__(self, *args: Any, outcomes: Sequence[str] = (), **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._outcomes = tuple(outcomes)
        self._at = self._labelnames.index("outcome") if self._outcomes else -1

    def _siblings(self, values: tuple[str, ...]) -> list[tuple[str, ...]]:
        return [(*values[: self._at], outcome, *values[self._at + 1 :]) for outcome in self._outcomes]

    def labels(self, *labelvalues: object, **labelkwargs: object) -> Self:
        if labelkwargs:
            labelvalues = tuple(labelkwargs[name] for name in self._labelnames)
        key = tuple(str(value) for value in labelvalues)
        if self._outcomes and key not in self._metrics:
            for sibling in self._siblings(key):
                super().labels(*sibling)
        return super().labels(*key)

    def remove(self, *labelvalues: Any) -> None:
        super().remove(*labelvalues)
        if self._outcomes and len(labelvalues) == len(self._labelnames):
            for sibling in self._siblings(tuple(str(value) for value in labelvalues)):
                super().remove(*sibling)
