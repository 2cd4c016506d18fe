"""How many games at once an AI witness can serve in time (pure: the caller passes timings).

A model on this machine's cores answers in `t` seconds of compute when alone; with c replies
generating at once they share the cores, so each takes about c * t. A reply is late when it
needs longer than the designed (human-like) delay, whose short end is `delay_s`. So the witness
can serve about delay_s / t games at once: `limit = floor(headroom * delay_s / t)`, with
`headroom` < 1 for safety (not every game asks at the same moment, but some do); one game when
that is 0 but `t <= delay_s` (alone it is in time), and none when `t > delay_s`: the witness
cannot answer in time even alone at the machine's current load, and is withheld from the draw
(`why_withheld`) until a new timing (a live reply or the server's re-timing) says it can.

Which `t`: a witness that streams with a deadline (every LLM witness in a server game: see
`turinglab.witnesses.llm`) is late only when its first words come after their designed delay,
since it stops before later words would be late; so `t` is the time to its first words
(`first_s`). Without that timing, `t` is the whole reply's compute time (`t1_s`).

Timings start from a calibration (one timed reply at start) and follow live replies: each
timing divided by the number of replies that were generating with it (an exponentially
weighted mean). A model that gives up because it had no words in time gives a lower bound (its
give-up time), counted the same way. Witnesses without a limit (ELIZA, API models by default) are
never at capacity.

Across several server workers the games in progress are counted in Redis (server/live/cluster_capacity.py):
`in_use` is then the cluster's count, read before each draw.

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

    def _fit(self, t: float) -> int:
        n = math.floor(self.headroom * self.delay_s / t)
        return n if n > 0 else int(t <= self.delay_s)  # alone in time: one; too slow even alone: none

    @property
    def limit(self) -> int | None:
        if self.fixed is not None:
            return self.fixed
        t = self.timing
        if t is None:
            return 1  # unmeasured: one game at a time until a reply is timed
        n = self._fit(t)
        return n if self.ceiling is None else min(n, self.ceiling)

    @property
    def basis(self) -> str:
        """The limit's arithmetic, in words."""
        if self.fixed is not None:
            return f"{self.fixed}, set in the study file"
        t = self.timing
        if t is None:
            return "1 until a reply is timed"
        n = self._fit(t)
        text = f"floor({self.headroom:g} × {self.delay_s:.2f} s ÷ {t:.2f} s) = {math.floor(self.headroom * self.delay_s / t)}"
        if n == 0:
            return f"{text}; {t:.2f} s alone > {self.delay_s:.2f} s designed: 0, too slow even alone"
        if n > math.floor(self.headroom * self.delay_s / t):
            return f"{text}; {t:.2f} s alone ≤ {self.delay_s:.2f} s designed: 1"
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
    withheld_draws: dict[str, int] = field(default_factory=dict)  # draws a witness was left out of

    @property
    def deferred(self) -> int:
        return len(self.deferred_ids)

    def limit(self, codename: str) -> int | None:
        e = self.estimates.get(codename)
        return None if e is None else e.limit

    def why_withheld(self, codename: str) -> str | None:
        """Why the witness may not be drawn now (None: it may): too slow even alone at the current
        load, or as many games in progress as it serves in time."""
        e = self.estimates.get(codename)
        if e is None:
            return None
        lim, n = e.limit, self.in_use.get(codename, 0)
        if lim == 0:
            what = "first words" if e.first_s is not None else "a whole reply"
            return (f"cannot answer in time even alone: {what} take {e.timing:.2f} s alone at the current load, "
                    f"the designed delay's short end is {e.delay_s:.2f} s")
        if n >= lim:
            return f"full: {n} games in progress, it serves {lim} at once in time ({e.basis})"
        return None

    def free(self, codename: str) -> bool:
        return self.why_withheld(codename) is None

    def eligible(self, codenames: list[str]) -> list[str]:
        return [c for c in codenames if self.free(c)]

    def withheld(self, codenames: list[str]) -> dict[str, str]:
        """The witnesses of `codenames` that may not be drawn now, with why."""
        return {c: why for c in codenames if (why := self.why_withheld(c)) is not None}

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
                at_ms: int | None = None, gave_up: bool = False, retimed: bool = False) -> None:
        """A reply took `compute_s` (its first words `first_s`, when streamed) while up to
        `concurrent` replies of this witness generated; `cut`: it stopped at its deadline.
        `load`: the machine's load average then; `calibration`: the timed reply at start;
        `gave_up`: no words came within `first_s` (a lower bound); `retimed`: the timed reply
        of a withheld witness (it replaces the running mean: nothing else is measured meanwhile)."""
        self.generating[codename] = max(0, self.generating.get(codename, 1) - 1)
        self.learn(codename, compute_s, concurrent, first_s, cut, load, calibration, at_ms, gave_up, retimed)

    def learn(self, codename: str, compute_s: float, concurrent: int, first_s: float | None = None,
              cut: bool = False, load: float | None = None, calibration: bool = False,
              at_ms: int | None = None, gave_up: bool = False, retimed: bool = False) -> None:
        """`observe` without the count of replies generating (a cluster applies the other workers' timings)."""
        e = self.estimates.get(codename)
        if e is None or compute_s <= 0:
            return
        old, old_t = e.limit, e.timing
        c = max(1, concurrent)
        fresh = calibration or retimed
        e.t1_s = self._mean(None if fresh else e.t1_s, compute_s / c)
        if first_s is not None and first_s > 0:
            e.first_s = self._mean(None if fresh else e.first_s, first_s / c)
        e.cut += int(cut)
        e.samples += 1
        if e.fixed is None and (fresh or e.limit != old):
            e.note(old, _why(e, old_t, c, load, calibration, gave_up, retimed), at_ms)

    def _mean(self, old: float | None, new: float) -> float:
        return new if old is None else (1 - self.alpha) * old + self.alpha * new

    def to_retime(self) -> list[str]:
        """The witnesses withheld as too slow even alone, with no reply generating: re-timed now
        and then, since no game plays them to show they became fast enough again."""
        return [c for c, e in self.estimates.items() if e.limit == 0 and not self.generating.get(c)]

    def delivered(self, codename: str, late: bool) -> None:
        e = self.estimates.get(codename)
        if e is not None:
            e.replies += 1
            e.late += int(late)

    def to_dict(self) -> dict:
        return {"witnesses": {c: {**e.to_dict(), "in_use": self.in_use.get(c, 0), "withheld": self.why_withheld(c),
                              "withheld_draws": self.withheld_draws.get(c, 0)} for c, e in self.estimates.items()},
                "deferred": self.deferred, "reallocated": self.reallocated, "overflowed": self.overflowed}


def _why(e: Estimate, old_t: float | None, concurrent: int, load: float | None, calibration: bool,
         gave_up: bool = False, retimed: bool = False) -> str:
    what = "first words" if e.first_s is not None else "a whole reply"
    t = e.timing or 0.0
    took = f"{what} in {'at least ' if gave_up else ''}{t:.2f} s alone"
    if calibration:
        text = f"timed at start, after the model's warm-up: {took}"
    elif retimed:
        text = f"re-timed while withheld: {took}"
    elif gave_up:
        text = f"a reply had no words in time (the fallback wrote it): {took}"
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
