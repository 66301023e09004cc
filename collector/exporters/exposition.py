"""The registry as a scraper reads it: `Exposition` writes the same bytes as prometheus_client's text
and OpenMetrics encoders, an order of magnitude faster with thousands of series.

A scrape of 200 (service, route) pairs is ~13,600 series; the library's encoders took 150 ms (text)
and 260 ms (OpenMetrics) for it on a 2-core machine, a scrape's whole render on the interpreter the
pipeline shares (benchmarks/scrape.py). This writer reads labelled counters and histograms child by
child and keeps each series' label text between scrapes; anything it would not write exactly as the
library does (names outside the plain character set, target_info, native histograms, other escapings)
the library writes. It reads prometheus_client's internals, so tests compare its bytes with the
library's for every metric type: an upgrade that changes them fails there, not in production.
"""

from __future__ import annotations

import contextlib
import functools
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import prometheus_client.metrics
from prometheus_client import CollectorRegistry, Counter, Histogram
from prometheus_client.exposition import generate_latest as text_latest
from prometheus_client.metrics import MetricWrapperBase
from prometheus_client.openmetrics import exposition as openmetrics
from prometheus_client.utils import floatToGoString

from collector.metrics import REGISTRY

if TYPE_CHECKING:
    from prometheus_client.metrics_core import Metric
    from prometheus_client.samples import Exemplar

Encoder = Callable[[CollectorRegistry], bytes]

# Names every escaping leaves as they are (OpenMetrics samples even turn a legacy `:` into `_`).
_NAME = re.compile(r"[a-zA-Z_][a-zA-Z0-9_]*")
# The text format's type for each OpenMetrics type, and the samples it moves to a gauge of their own.
_TEXT_TYPES = {"info": "gauge", "stateset": "gauge", "gaugehistogram": "histogram", "unknown": "untyped"}
_TEXT_MOVED = ("_created", "_gsum", "_gcount")
_go_float = functools.lru_cache(maxsize=1 << 16)(floatToGoString)  # counts repeat: 0.0, 1.0, ...


class _Unusual(Exception):
    """Something `Exposition` would not write exactly as prometheus_client does: the library renders."""


def _escape(value: str) -> str:
    return value.replace("\\", r"\\").replace("\n", r"\n").replace('"', r"\"")


def _label_text(pairs: Iterable[tuple[str, str]]) -> str:
    """`{a="x",b="y"}`, sorted by name as prometheus_client writes them."""
    pairs = sorted(pairs)
    if any(not _NAME.fullmatch(name) for name, _ in pairs):
        raise _Unusual("label name")
    return "{" + ",".join(f'{name}="{_escape(value)}"' for name, value in pairs) + "}"


def _text_help(family: Metric) -> str:
    return family.documentation.replace("\\", r"\\").replace("\n", r"\n")


def _exemplar_text(exemplar: Exemplar) -> str:
    stamp = "" if exemplar.timestamp is None else f" {exemplar.timestamp}"
    return f" # {_label_text(exemplar.labels.items())} {_go_float(exemplar.value)}{stamp}"


def _fast_format(encoder: Encoder) -> bool | None:
    """True for OpenMetrics, False for the text format, None where `Exposition` would differ (the dots
    and values escapings rewrite every `_`) or the encoder is none of prometheus_client's two."""
    escaping = getattr(encoder, "keywords", {}).get("escaping", openmetrics.UNDERSCORES)
    if escaping not in (openmetrics.UNDERSCORES, openmetrics.ALLOWUTF8):
        return None
    return {text_latest: False, openmetrics.generate_latest: True}.get(getattr(encoder, "func", encoder))


def _read_directly(collector: object) -> bool:
    """A counter or histogram with labels whose samples are prometheus_client's own: every series per
    (service, route) pair is one, and reading their children beats building thousands of `Sample`s."""
    kind: Any = type(collector)
    return (
        isinstance(collector, Counter | Histogram)
        and bool(collector._is_parent())
        and kind.collect is MetricWrapperBase.collect
        and kind._multi_samples is MetricWrapperBase._multi_samples
        and kind._child_samples in (Counter._child_samples, Histogram._child_samples)
    )


class Exposition:
    """The registry in the text format or OpenMetrics, byte for byte what prometheus_client's encoders
    write (tests compare them), an order of magnitude faster with thousands of series.

    The library builds a `Sample` with a fresh label dict for every series, then escapes and sorts
    every label of it, on every scrape. Here the labelled counters and histograms are read child by
    child, and each series' `name{labels} ` text is kept from one render to the next (only what the
    last render used: removed series leave nothing behind), so a render mostly formats values. What it
    does not know (a name outside the legacy charset, target_info, native histograms, the dots or
    values escapings) the library renders. It reads prometheus_client's internals (the registry's
    collectors, a child's values): tests/collector/test_scrape.py compares its bytes with the library's
    for every metric type, so an upgrade that moves them fails there, not on a scraper.
    """

    def __init__(self, registry: CollectorRegistry = REGISTRY) -> None:
        self._registry = registry
        self._texts = _Texts()

    def encode(self, encoder: Encoder) -> bytes:
        """What `encoder` (from prometheus_client's `choose_encoder`) returns for the registry."""
        fast = _fast_format(encoder)
        if fast is not None:
            with contextlib.suppress(_Unusual):
                return self.render(fast)
        return encoder(self._registry)

    def render(self, openmetrics: bool) -> bytes:
        """Raises `_Unusual` where only the library's encoder writes the registry exactly."""
        registry = self._registry
        with registry._lock:
            collectors = list(registry._collector_to_names)
            if registry._target_info:
                raise _Unusual("target_info")
        page = _Page(openmetrics, self._texts)
        for collector in collectors:
            if _read_directly(collector):
                page.wrapper(collector)  # type: ignore[arg-type]  # _read_directly checked it
            else:
                for family in collector.collect():
                    page.family(family)
        self._texts = page.texts
        return page.bytes()


@dataclass
class _Texts:
    """What a render wrote that the next one can reuse, each by what it depends on (the object is kept
    beside its text and compared by identity, so a replaced child or exemplar is written anew)."""

    labels: dict[tuple[tuple[str, str], ...], str] = field(default_factory=dict)  # `{a="x",...}`
    children: dict[tuple[str, tuple[str, ...]], tuple[object, tuple[str, ...]]] = field(default_factory=dict)
    exemplars: dict[int, tuple[Exemplar, str]] = field(default_factory=dict)


class _Page:
    """One render: its lines, and the texts it used (the next render starts from them)."""

    def __init__(self, openmetrics: bool, kept: _Texts) -> None:
        self.openmetrics, self.kept, self.texts = openmetrics, kept, _Texts()
        self.out: list[str] = []

    def bytes(self) -> bytes:
        if self.openmetrics:
            self.out.append("# EOF\n")
        return "".join(self.out).encode("utf-8")

    def header(self, family: Metric) -> None:
        name, kind = family.name, family.type
        if not _NAME.fullmatch(name):
            raise _Unusual(name)
        if self.openmetrics:
            self.out.append(f"# HELP {name} {_escape(family.documentation)}\n# TYPE {name} {kind}\n")
            if family.unit:
                self.out.append(f"# UNIT {name} {family.unit}\n")
            return
        shown = name + "_total" if kind == "counter" else name + "_info" if kind == "info" else name
        kind = _TEXT_TYPES.get(kind, kind)
        self.out.append(f"# HELP {shown} {_text_help(family)}\n# TYPE {shown} {kind}\n")

    def moved(self, family: Metric, lines: dict[str, list[str]]) -> None:
        """The text format's gauges of OpenMetrics-only samples (`_created`, ...), after their family."""
        for suffix, moved in sorted(lines.items()):
            self.out.append(f"# HELP {family.name}{suffix} {_text_help(family)}\n")
            self.out.append(f"# TYPE {family.name}{suffix} gauge\n")
            self.out.extend(moved)

    def exemplar(self, exemplar: Exemplar | None) -> str:
        if not exemplar:
            return ""
        held = self.kept.exemplars.get(id(exemplar))
        if held is None or held[0] is not exemplar:
            held = (exemplar, _exemplar_text(exemplar))
        self.texts.exemplars[id(exemplar)] = held
        return held[1]

    def family(self, family: Metric) -> None:
        """Any collector's samples, as prometheus_client's encoders write them."""
        self.header(family)
        moved_names = {} if self.openmetrics else {family.name + s: s for s in _TEXT_MOVED}
        moved: dict[str, list[str]] = {}
        for sample in family.samples:
            if sample.native_histogram is not None or not _NAME.fullmatch(sample.name):
                raise _Unusual(sample.name)
            line = sample.name
            if sample.labels:
                key = tuple(sample.labels.items())
                text = self.kept.labels.get(key) or _label_text(sample.labels.items())
                self.texts.labels[key] = text
                line += text
            if self.openmetrics:
                if sample.value is None:
                    raise _Unusual(sample.name)
                line += f" {_go_float(sample.value)}"
                line += "" if sample.timestamp is None else f" {sample.timestamp}"
                line += self.exemplar(sample.exemplar)
            else:
                line += f" {_go_float(sample.value)}"
                line += "" if sample.timestamp is None else f" {int(float(sample.timestamp) * 1000):d}"
            suffix = moved_names.get(sample.name)
            (self.out if suffix is None else moved.setdefault(suffix, [])).append(line + "\n")
        self.moved(family, moved)

    def wrapper(self, metric: Counter | Histogram) -> None:
        """A labelled counter or histogram read child by child: the lines `family` would write."""
        family = metric._get_metric()
        self.header(family)
        histogram = family.type == "histogram"
        with metric._lock:
            children: list[tuple[Sequence[str], Any]] = list(metric._metrics.items())
        created: list[str] = []
        write_created = prometheus_client.metrics._use_created
        for values, child in children:
            prefixes = self.prefixes(family, metric._labelnames, values, child, histogram)
            if histogram:
                self.histogram(child, prefixes)
            else:
                exemplar = child._value.get_exemplar() if self.openmetrics else None
                self.out.append(f"{prefixes[0]}{_go_float(child._value.get())}{self.exemplar(exemplar)}\n")
            if write_created:
                line = f"{prefixes[-1]}{_go_float(child._created)}\n"
                (self.out if self.openmetrics else created).append(line)
        self.moved(family, {"_created": created} if created else {})

    def histogram(self, child: Histogram, prefixes: tuple[str, ...]) -> None:
        count = 0.0
        for prefix, bucket in zip(prefixes, child._buckets, strict=False):
            count += bucket.get()
            exemplar = bucket.get_exemplar() if self.openmetrics else None
            self.out.append(f"{prefix}{_go_float(count)}{self.exemplar(exemplar)}\n")
        buckets = len(child._buckets)
        self.out.append(prefixes[buckets] + _go_float(count) + "\n")
        if child._upper_bounds[0] >= 0:
            self.out.append(prefixes[buckets + 1] + _go_float(child._sum.get()) + "\n")

    def prefixes(
        self, family: Metric, names: Sequence[str], values: Sequence[str], child: object, histogram: bool
    ) -> tuple[str, ...]:
        """`name{labels} ` of each of a child's samples, in their order (`_created` last)."""
        key = (family.name, tuple(values))
        held = self.kept.children.get(key)
        if held is None or held[0] is not child:
            base = list(zip(names, values, strict=True))
            name, labels = family.name, _label_text(base)
            if histogram:
                bounds = [floatToGoString(b) for b in child._upper_bounds]  # type: ignore[attr-defined]
                texts = [f"{name}_bucket{_label_text([*base, ('le', b)])} " for b in bounds]
                texts += [f"{name}_count{labels} ", f"{name}_sum{labels} "]
            else:
                texts = [f"{name}_total{labels} "]
            held = (child, (*texts, f"{name}_created{labels} "))
        self.texts.children[key] = held
        return held[1]
