"""How many games at once an AI witness can serve in time (pure: the caller passes timings).

A model on this machine's cores answers in `t` seconds of compute when alone; with c replies
generating at once they share the cores, so each takes about c * t. A reply is late when it
needs longer than the designed (human-like) delay, whose short end is `delay_s`. So the witness
can serve about delay_s / t games at once: `limit = max(1, floor(headroom * delay_s / t))`,
with `headroom` < 1 for safety (not every game asks at the same moment, but some do).

Which `t`: a witness that streams with a deadline (every LLM witness in a server game: see
`turinglab.witnesses.llm`) is late only when its first words come after their designed delay,
since it stops before later words would be late; so `t` is the time to its first words
(`first_s`). Without that timing, `t` is the whole reply's compute time (`t1_s`).

Timings start from a calibration (one timed reply at start) and follow live replies: each
timing divided by the number of replies that were generating with it (an exponentially
weighted mean). Witnesses without a limit (ELIZA, API models by default) are never at capacity.

Every change of a limit is kept with its reason (the timing that moved it, alone and at how many
replies at once, and the machine's load average when the caller gives it), for /admin.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field


UNMEASURED = "not measured yet (the model is warming up): one game at a time until a reply is timed"
CHANGES_KEPT = 10


@dataclass
class Estimate:
    """The inputs and result of one witness's capacity estimate (shown on /admin and logged)."""

    t1_s: float | None  # compute seconds of one reply when alone (None: not measured yet)
    delay_s: float  # the short end of the designed delay
    headroom: float
    fixed: int | None  # a limit the study file set (then no estimate is used)
    samples: int = 0
    late: int = 0  # replies that came later than designed
    replies: int = 0
    first_s: float | None = None  # seconds to the first words of a streamed reply when alone
    cut: int = 0  # replies stopped at their deadline (deadline-aware generation)
    ceiling: int | None = None  # never more (the local model: its slots, one per game's prompt cache)
    why: str = UNMEASURED  # why the limit is what it is (its last change)
    changes: list[dict] = field(default_factory=list)  # the last CHANGES_KEPT changes: at_ms, from, to, why

    @property
    def timing(self) -> float | None:
        """The seconds the limit is computed from: to the first words when measured, else a whole reply."""
        t = self.first_s if self.first_s is not None else self.t1_s
        return t if t is not None and t > 0 else None

    @property
    def limit(self) -> int | None:
        if self.fixed is not None:
            return self.fixed
        t = self.timing
        if t is None:
            return 1  # unmeasured: one game at a time until a reply is timed
        n = max(1, math.floor(self.headroom * self.delay_s / t))
        return n if self.ceiling is None else min(n, self.ceiling)

    @property
    def basis(self) -> str:
        """The limit's arithmetic, in words."""
        if self.fixed is not None:
            return f"{self.fixed}, set in the study file"
        t = self.timing
        if t is None:
            return "1 until a reply is timed"
        n = max(1, math.floor(self.headroom * self.delay_s / t))
        text = f"floor({self.headroom:g} × {self.delay_s:.2f} s ÷ {t:.2f} s) = {n}"
        return text if self.ceiling is None or n <= self.ceiling else f"{text}, at most {self.ceiling} (the model's slots)"

    def note(self, old: int | None, why: str, at_ms: int | None = None) -> None:
        """Keep why the limit is now what it is; a change of the limit is kept in `changes` too."""
        self.why = why
        if self.limit != old:
            self.changes.append({"at_ms": at_ms, "from": old, "to": self.limit, "why": why})
            del self.changes[:-CHANGES_KEPT]

    def to_dict(self) -> dict:
        return {"limit": self.limit, "t1_s": None if self.t1_s is None else round(self.t1_s, 3),
                "first_s": None if self.first_s is None else round(self.first_s, 3), "cut": self.cut,
                "ceiling": self.ceiling,
                "delay_s": round(self.delay_s, 3), "headroom": self.headroom, "fixed": self.fixed,
                "samples": self.samples, "replies": self.replies, "late": self.late,
                "why": self.why, "basis": self.basis, "changes": list(self.changes)}


@dataclass
class Capacity:
    """Games in progress per AI witness, and each limited witness's estimate."""

    estimates: dict[str, Estimate] = field(default_factory=dict)  # only the limited witnesses
    in_use: dict[str, int] = field(default_factory=dict)
    generating: dict[str, int] = field(default_factory=dict)
    alpha: float = 0.3  # weight of a new timing in the running mean
    deferred_ids: set = field(default_factory=set)  # participants whose due AI game waited: every witness was full
    reallocated: int = 0  # AI games given to another witness than the policy would have drawn from all
    overflowed: int = 0  # AI games given to the study's overflow witness

    @property
    def deferred(self) -> int:
        return len(self.deferred_ids)

    def limit(self, codename: str) -> int | None:
        e = self.estimates.get(codename)
        return None if e is None else e.limit

    def free(self, codename: str) -> bool:
        lim = self.limit(codename)
        return lim is None or self.in_use.get(codename, 0) < lim

    def eligible(self, codenames: list[str]) -> list[str]:
        return [c for c in codenames if self.free(c)]

    def acquire(self, codename: str) -> None:
        self.in_use[codename] = self.in_use.get(codename, 0) + 1

    def release(self, codename: str) -> None:
        n = self.in_use.get(codename, 0) - 1
        if n > 0:
            self.in_use[codename] = n
        else:
            self.in_use.pop(codename, None)

    # ---- live timings -------------------------------------------------------------------
    def started_generating(self, codename: str) -> int:
        """A reply starts generating; returns how many (with it) generate now."""
        n = self.generating.get(codename, 0) + 1
        self.generating[codename] = n
        return n

    def observe(self, codename: str, compute_s: float, concurrent: int, first_s: float | None = None,
                cut: bool = False, load: float | None = None, calibration: bool = False,
                at_ms: int | None = None) -> None:
        """A reply took `compute_s` (its first words `first_s`, when streamed) while up to
        `concurrent` replies of this witness generated; `cut`: it stopped at its deadline.
        `load`: the machine's load average then; `calibration`: the timed reply at start."""
        self.generating[codename] = max(0, self.generating.get(codename, 1) - 1)
        e = self.estimates.get(codename)
        if e is None or compute_s <= 0:
            return
        old, old_t = e.limit, e.timing
        c = max(1, concurrent)
        e.t1_s = self._mean(e.t1_s, compute_s / c)
        if first_s is not None and first_s > 0:
            e.first_s = self._mean(e.first_s, first_s / c)
        e.cut += int(cut)
        e.samples += 1
        if e.fixed is None and (calibration or e.limit != old):
            e.note(old, _why(e, old_t, c, load, calibration), at_ms)

    def _mean(self, old: float | None, new: float) -> float:
        return new if old is None else (1 - self.alpha) * old + self.alpha * new

    def delivered(self, codename: str, late: bool) -> None:
        e = self.estimates.get(codename)
        if e is not None:
            e.replies += 1
            e.late += int(late)

    def to_dict(self) -> dict:
        return {"witnesses": {c: {**e.to_dict(), "in_use": self.in_use.get(c, 0)} for c, e in self.estimates.items()},
                "deferred": self.deferred, "reallocated": self.reallocated, "overflowed": self.overflowed}


def _why(e: Estimate, old_t: float | None, concurrent: int, load: float | None, calibration: bool) -> str:
    what = "first words" if e.first_s is not None else "a whole reply"
    t = e.timing or 0.0
    if calibration:
        text = f"timed at start, after the model's warm-up: {what} in {t:.2f} s alone"
    elif old_t is None:
        text = f"first live timing: {what} in {t:.2f} s alone"
    else:
        text = (f"measured reply latency {'rose' if t > old_t else 'fell'}: {what} in {t:.2f} s alone "
                f"(was {old_t:.2f} s)")
    text += f", {concurrent} replies generating at once" if concurrent > 1 else ""
    return text + (f"; machine load average {load:.1f}" if load is not None else "")


def shortest_delay_s(base_s: float, s_per_char: float, gamma_shape: float, gamma_scale: float,
                     n_chars: int = 10) -> float:
    """The short end of the designed delay: a short reply (`n_chars`) with a low gamma draw
    (its 10% quantile, about shape * scale * 0.4 for the shipped shapes)."""
    from scipy.stats import gamma

    return base_s + s_per_char * n_chars + float(gamma.ppf(0.10, gamma_shape, scale=gamma_scale))
