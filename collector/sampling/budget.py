"""The judge budget: what was spent over rolling windows, and what admitted evaluations will spend.

A judge's spend is known only once its evaluation is over, and a burst of traces is decided before the
first of them is judged: checking the spent total alone admitted a burst of ten traces against a day's
budget worth three, and spent 2.6 times the budget. So admission *reserves* what the evaluation is
expected to cost; the reservation counts against every window at once; the judge's figure replaces it
when the evaluation has spent something (`settle`), and it is given back when the job ends without
spending (`Reservation.release`: shed, a duplicate, an internal error, a judge that never answered).
A reservation that spent nothing stays while the job waits for a retry: an outage must not free the
budget of records the judge still owes a score.

The expected cost is a seed from the case's text, priced like a judge call and erring high (per metric,
a prompt of the text plus a template, and a reply as long as the text), times the running mean of
actual ÷ seed over the evaluations billed so far. It scales with each record's size and learns the
metrics, the prompts and a cascade's share of escalations. An evaluation is admitted only if what is
spent and reserved plus its own estimate fits every limit, so a budget smaller than one evaluation
admits none: the budget is a ceiling, not a target.
"""

from __future__ import annotations

import math
import threading
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field

from pydantic import BaseModel, ConfigDict, Field

from collector.judging.config import JudgeConfig
from collector.metrics import JUDGE_BUDGET_REMAINING
from evaluators import Price, TestCase
from evaluators.judges.accounting import DEFAULT_PRICES, price_of

Clock = Callable[[], float]
CHARS_PER_TOKEN = 4
TEMPLATE_TOKENS = 600  # per metric: its instructions and reply schema around the case


class BudgetConfig(BaseModel):
    """Judge spend limits over rolling windows; unset = no limit. The offline judge spends nothing."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    tokens_per_hour: int | None = Field(None, gt=0)
    tokens_per_day: int | None = Field(None, gt=0)
    usd_per_hour: float | None = Field(None, gt=0)
    usd_per_day: float | None = Field(None, gt=0)


@dataclass(slots=True, eq=False)
class Reservation:
    """What one admitted evaluation is expected to spend, held against the budget until settled."""

    tokens: float
    usd: float
    seed: tuple[float, float]  # the uncalibrated estimate: what the actual figure calibrates
    budget: JudgeBudget = field(repr=False)
    open: bool = True

    def release(self) -> None:
        """The job is over: a reservation no spend replaced goes back to the budget (no-op once settled)."""
        self.budget.settle(self, None)


class JudgeBudget:
    """Spend in one-minute buckets over the last day, open reservations, the expected cost. Thread-safe."""

    _HOUR_MIN, _DAY_MIN = 60, 24 * 60
    _LEARN_OVER = 32  # the running mean weighs about the last 32 billed evaluations

    def __init__(self, config: BudgetConfig, clock: Clock, price: Price | None = None, llm: bool = False):
        """`llm`: the judge bills tokens (the offline judge does not: nothing to reserve); `price`: its
        model's, None when unknown (its spend then counts no dollars either)."""
        self._config, self._clock, self._price, self._llm = config, clock, price, llm
        self._buckets: deque[list[float]] = deque()  # [minute, tokens, usd], oldest first
        self._lock = threading.Lock()
        self._pending = [0.0, 0.0]  # tokens, usd held by open reservations
        self._open = 0
        self._scale = [1.0, 1.0]  # running mean of actual ÷ seed: tokens, usd
        self._learned = [0, 0]

    @classmethod
    def for_judge(cls, config: BudgetConfig, clock: Clock, judge: JudgeConfig | None) -> JudgeBudget:
        """Priced like the judge's own accounting (`judge.prices_per_million`, else the known prices)."""
        if judge is None or judge.base_url is None:
            return cls(config, clock)
        prices = {m: Price(p, c) for m, (p, c) in judge.prices_per_million.items()} or DEFAULT_PRICES
        return cls(config, clock, price_of(prices, judge.model), llm=True)

    def reserve(self, case: TestCase, metrics: int) -> Reservation | None:
        """The evaluation's expected spend, held; None when it does not fit every limit."""
        seed = self._seed(case, metrics) if self._llm and any(self._limits()) else (0.0, 0.0)
        with self._lock:
            estimate = (seed[0] * self._scale[0], seed[1] * self._scale[1])
            committed = self._committed()
            # under every limit: something is left, and the estimate fits in what is left
            if not all(used < limit and used + estimate[col] <= limit for limit, used, col in committed):
                return None
            self._pending[0] += estimate[0]
            self._pending[1] += estimate[1]
            self._open += 1
            self._publish([(limit, used + estimate[col], col) for limit, used, col in committed])
            return Reservation(estimate[0], estimate[1], seed, self)

    def settle(self, reservation: Reservation | None, spent: tuple[int, float] | None) -> None:
        """Count `spent` (tokens, usd). A spend replaces the open `reservation` and calibrates the
        estimate; nothing spent leaves it held (the record may come back for a retry). `spent=None`:
        the job is over and what is still reserved goes back (`Reservation.release`)."""
        something = spent is not None and (spent[0] > 0 or spent[1] > 0)
        with self._lock:
            if reservation is not None and reservation.open and (something or spent is None):
                reservation.open = False
                self._open -= 1
                self._pending[0] -= reservation.tokens
                self._pending[1] -= reservation.usd
                if self._open == 0:
                    self._pending = [0.0, 0.0]  # no float residue once nothing is held
                if spent is not None:
                    self._learn(reservation.seed, spent)
            if spent is not None:
                self._add(*spent)
            self._remaining_ratio()

    def remaining_ratio(self) -> float:
        with self._lock:
            return self._remaining_ratio()

    # --- under the lock -------------------------------------------------------------------
    def _seed(self, case: TestCase, metrics: int) -> tuple[float, float]:
        """Tokens and dollars before any actual figure. With the scripted judge (the real prompts, tiktoken
        counts) on the default metrics it is 1.8x the actual cost at 1 KB of text, 3x at 18 KB."""
        text = _case_chars(case) / CHARS_PER_TOKEN
        prompt, reply = metrics * (text + TEMPLATE_TOKENS), metrics * text
        price = self._price
        usd = (
            0.0
            if price is None
            else (prompt * price.prompt_per_million + reply * price.completion_per_million) / 1e6
        )
        return prompt + reply, usd

    def _learn(self, seed: tuple[float, float], spent: tuple[int, float]) -> None:
        for column in (0, 1):
            if seed[column] > 0 and spent[column] > 0:
                self._learned[column] += 1
                weight = max(1.0 / self._learned[column], 1.0 / self._LEARN_OVER)
                self._scale[column] += (spent[column] / seed[column] - self._scale[column]) * weight

    def _limits(self) -> tuple[tuple[float, int, int], ...]:
        """(limit, column: 0 tokens / 1 usd, window in minutes) for each configured limit."""
        config = self._config
        limits = (
            (config.tokens_per_hour, 0, self._HOUR_MIN),
            (config.tokens_per_day, 0, self._DAY_MIN),
            (config.usd_per_hour, 1, self._HOUR_MIN),
            (config.usd_per_day, 1, self._DAY_MIN),
        )
        return tuple((float(limit), column, span) for limit, column, span in limits if limit is not None)

    def _committed(self) -> list[tuple[float, float, int]]:
        """(limit, spent in its window + reserved, column) for each limit; drops buckets over a day old."""
        minute = self._minute()
        while self._buckets and self._buckets[0][0] <= minute - self._DAY_MIN:
            self._buckets.popleft()
        return [
            (
                limit,
                sum(b[1 + column] for b in self._buckets if b[0] > minute - span) + self._pending[column],
                column,
            )
            for limit, column, span in self._limits()
        ]

    def _remaining_ratio(self) -> float:
        return self._publish(self._committed())

    @staticmethod
    def _publish(committed: list[tuple[float, float, int]]) -> float:
        """Min over configured limits of the share neither spent nor reserved (1.0 with no limits)."""
        ratio = min((max(0.0, 1.0 - used / limit) for limit, used, _ in committed), default=1.0)
        JUDGE_BUDGET_REMAINING.set(ratio)
        return ratio

    def _add(self, tokens: int, usd: float) -> None:
        minute = self._minute()
        if self._buckets and self._buckets[-1][0] == minute:
            self._buckets[-1][1] += tokens
            self._buckets[-1][2] += usd
        else:
            self._buckets.append([minute, float(tokens), usd])

    def _minute(self) -> int:
        return math.floor(self._clock() / 60.0)


def _case_chars(case: TestCase) -> int:
    """The text a judge reads of a case: the passages once (`context` is often the retrieved ones)."""
    texts = [case.input, case.actual_output, case.expected_output, case.baseline_output]
    passages = list(case.retrieval_context or ())
    if case.context and case.context != case.retrieval_context:
        passages += case.context
    for turn in case.turns or ():
        texts.append(turn.content)
        passages += turn.retrieval_context or ()
    return sum(len(text) for text in texts if text) + sum(len(p) for p in passages)
