"""Result objects of turinglab.stats and the one place where pass decisions are made.

Every result is a frozen dataclass with ``to_dict()`` giving the JSON contract of the
``turinglab stats`` command line: plain floats, lists instead of tuples, and strict JSON
(an unbounded or undefined number, e.g. the upper bound of p_m / p_h when no human
witness was judged human, is ``null``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Literal, Sequence

Decision = Literal["passes", "fails", "inconclusive"]


def _num(x: float | None) -> float | None:
    """A strict-JSON float: NaN (undefined) and +-infinity (unbounded) become None (null)."""
    if x is None:
        return None
    x = float(x)
    return x if math.isfinite(x) else None


def decide(interval_pieces: Sequence[Sequence[float]], threshold: float, closed: bool = True) -> Decision:
    """The three-way pass decision from the accepted set of a parameter.

    ``passes`` when every accepted value is at or above ``threshold`` (``closed``, Giunti's
    criterion; with ``closed=False`` every value strictly above it, so a set that starts at the
    threshold is inconclusive), ``fails`` when every accepted value is below it,
    ``inconclusive`` otherwise.
    """
    pieces = [(float(a), float(b)) for a, b in interval_pieces]
    if not pieces:
        raise ValueError("decide() needs at least one (low, high) piece")
    low = min(a for a, _ in pieces)
    high = max(b for _, b in pieces)
    if low > threshold or (closed and low == threshold):
        return "passes"
    if high < threshold:
        return "fails"
    return "inconclusive"


@dataclass(frozen=True)
class Estimate:
    """A point estimate with its interval (``low``, ``high``); ``pieces``, when given, is the
    confidence set itself (closed intervals, with gaps between them) and low/high its hull."""

    estimate: float
    low: float
    high: float
    pieces: tuple[tuple[float, float], ...] | None = None

    def to_dict(self) -> dict[str, Any]:
        d = {"estimate": _num(self.estimate), "low": _num(self.low), "high": _num(self.high)}
        if self.pieces is not None:
            d["pieces"] = [[_num(a), _num(b)] for a, b in self.pieces]
        return d


@dataclass(frozen=True)
class IntervalSet:
    """A confidence set for a parameter: its pieces (closed intervals), hull and shape.

    ``low``/``high`` are the hull; ``is_interval`` is False when the set has gaps.
    """

    method: str
    low: float
    high: float
    pieces: tuple[tuple[float, float], ...]
    is_interval: bool
    alpha: float = 0.05

    def contains(self, p: float) -> bool:
        return any(a <= p <= b for a, b in self.pieces)

    def to_dict(self) -> dict[str, Any]:
        return {
            "method": self.method,
            "low": _num(self.low),
            "high": _num(self.high),
            "pieces": [[_num(a), _num(b)] for a, b in self.pieces],
            "is_interval": self.is_interval,
        }


@dataclass(frozen=True)
class BinomResult:
    """An exact binomial test of p = p0 with its confidence set."""

    k: int
    n: int
    p0: float
    alpha: float
    estimate: float
    p_value: float
    interval: IntervalSet
    alternative: str = "two-sided"

    def to_dict(self) -> dict[str, Any]:
        return {
            "k": self.k, "n": self.n, "p0": self.p0, "alpha": self.alpha,
            "estimate": _num(self.estimate), "p_value": _num(self.p_value),
            "alternative": self.alternative, "interval": self.interval.to_dict(),
        }


@dataclass(frozen=True)
class ThreePlayerResult:
    """Giunti's absolute and relative criteria for a three-player test (one binomial)."""

    k: int
    n: int
    alpha: float
    method: str
    machine_success: Estimate
    interval: IntervalSet
    p_value: float
    decision: Decision
    humanness: Estimate
    threshold: float = 0.5

    def to_dict(self) -> dict[str, Any]:
        return {
            "format": "three-player",
            "k": self.k,
            "n": self.n,
            "alpha": self.alpha,
            "method": self.method,
            "machine_success": self.machine_success.to_dict(),
            "interval": self.interval.to_dict(),
            "threshold": self.threshold,
            "p_value": _num(self.p_value),
            "decision": self.decision,
            "humanness": self.humanness.to_dict(),
        }


@dataclass(frozen=True)
class TwoPlayerResult:
    """Giunti's criteria for a two-player test: machine rate against the humans' own rate."""

    k_m: int
    n_m: int
    k_h: int
    n_h: int
    alpha: float
    method: str
    ratio_method: str
    machine_success: Estimate
    threshold: Estimate
    p_value: float
    decision: Decision
    humanness: Estimate
    test: str = "Boschloo exact unconditional, two-sided"
    machine_interval: IntervalSet | None = None
    threshold_interval: IntervalSet | None = None
    note: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {
            "format": "two-player",
            "machine": {"k": self.k_m, "n": self.n_m},
            "human": {"k": self.k_h, "n": self.n_h},
            "alpha": self.alpha,
            "method": self.method,
            "ratio_method": self.ratio_method,
            "test": self.test,
            "null_hypothesis": "p_m = p_h (two-sided)",
            "machine_success": self.machine_success.to_dict(),
            "threshold": self.threshold.to_dict(),
            "p_value": _num(self.p_value),
            "decision": self.decision,
            "humanness": self.humanness.to_dict(),
            "note": self.note,
        }


@dataclass(frozen=True)
class PowerResult:
    """Exact power of the level-alpha test as a function of n, and the sample sizes it implies."""

    rate: float
    vs: float
    alpha: float
    target: float
    method: str
    first_n: int | None
    stable_n: int | None
    n_max: int
    power_at_first_n: float | None
    power_at_stable_n: float | None
    ns: tuple[int, ...] = field(default=(), repr=False)
    powers: tuple[float, ...] = field(default=(), repr=False)

    def power_at(self, n: int) -> float:
        return self.powers[self.ns.index(n)]

    def to_dict(self) -> dict[str, Any]:
        return {
            "rate": self.rate, "vs": self.vs, "alpha": self.alpha, "power": self.target, "method": self.method,
            "first_n": self.first_n, "stable_n": self.stable_n,
            "power_at_first_n": _num(self.power_at_first_n),
            "power_at_stable_n": _num(self.power_at_stable_n),
            "n_max": self.n_max,
        }


@dataclass(frozen=True)
class BetaPosterior:
    """Summary of the Beta posterior of a rate."""

    a: float
    b: float
    level: float
    mean: float
    low: float
    high: float
    threshold: float
    prob_at_or_above: float
    rope: tuple[float, float] | None
    prob_in_rope: float | None

    def to_dict(self) -> dict[str, Any]:
        return {
            "posterior": {"a": self.a, "b": self.b},
            "level": self.level,
            "mean": self.mean,
            "low": self.low,
            "high": self.high,
            "threshold": self.threshold,
            "prob_at_or_above_threshold": self.prob_at_or_above,
            "rope": list(self.rope) if self.rope else None,
            "prob_in_rope": _num(self.prob_in_rope),
        }


@dataclass(frozen=True)
class ConfidenceSequence:
    """An always-valid confidence sequence for a rate, at the latest time and along the path."""

    alpha: float
    prior: tuple[float, float]
    k: int
    n: int
    low: float
    high: float
    lows: tuple[float, ...] = field(default=(), repr=False)
    highs: tuple[float, ...] = field(default=(), repr=False)
    intersected: bool = False

    def to_dict(self) -> dict[str, Any]:
        method = "beta-binomial mixture martingale (Robbins)"
        return {
            "method": method + (", running intersection" if self.intersected else ""),
            "alpha": self.alpha,
            "prior": list(self.prior),
            "k": self.k,
            "n": self.n,
            "low": self.low,
            "high": self.high,
        }


@dataclass(frozen=True)
class DPrimeResult:
    """Signal-detection sensitivity d' and criterion c."""

    d: float
    c: float
    hit_rate: float
    false_alarm_rate: float
    smoothing: str

    def to_dict(self) -> dict[str, Any]:
        return {
            "d": _num(self.d),
            "c": _num(self.c),
            "hit_rate": self.hit_rate,
            "false_alarm_rate": self.false_alarm_rate,
            "smoothing": self.smoothing,
        }
