"""The AI witnesses' capacity in a running server (matchmaking/capacity.py holds the rule): the
estimates a study asks for, the timed reply at start, and the re-timing of a witness withheld as
too slow even alone (no game plays it, so nothing else would show that it became fast enough).

`Timed` is a mixin of `Hub`; a cluster re-times on its matchmaker only (`may_retime`) and shares
every timing through Redis (cluster_capacity.py)."""

from __future__ import annotations

import asyncio
import logging
import time
from datetime import datetime, timezone

from turinglab.game.config import Study, WitnessSpec
from turinglab.matchmaking.capacity import Capacity, Estimate, shortest_delay_s
from turinglab.witnesses.ai_seat import load_average
from turinglab.witnesses.base import GameContext, Turn

log = logging.getLogger("turinglab.server")

RETIME_S = 60.0  # how often a witness withheld as too slow is timed again (one reply alone)


def local_slots() -> int:
    """The local model server's slots (a game each keeps its prompt cache in one)."""
    from turinglab.witnesses.local.server import shared_server

    return shared_server().slots


def build_capacity(study: Study, cap: Capacity | None = None) -> Capacity:
    """The capacity of each AI witness with a limit (study file `allocation.capacity`), in `cap` if given."""
    cap = cap if cap is not None else Capacity()
    for w in study.witnesses:
        rule = study.capacity_of(w.codename)
        if rule == "unlimited":
            continue
        t = w.timing
        cap.estimates[w.codename] = Estimate(
            t1_s=None, delay_s=shortest_delay_s(t.base_s, t.s_per_char, t.gamma_shape, t.gamma_scale),
            headroom=study.allocation.capacity_headroom, fixed=rule if isinstance(rule, int) else None,
            ceiling=local_slots() if w.kind == "local" else None)
    return cap


class Timed:
    """Mixin of `Hub`: one timed reply of a witness alone, at start and while it is withheld."""

    retime_s: float = RETIME_S

    def may_retime(self) -> bool:
        return True

    async def _calibrate(self, spec: WitnessSpec, retimed: bool = False) -> None:
        """Time one reply of a witness whose capacity is estimated ("auto"), alone on the machine."""
        cap = self.room.capacity
        est = cap.estimates.get(spec.codename) if cap is not None else None
        if est is None or est.fixed is not None:
            return
        now = datetime.now(timezone.utc)
        # streamed as in a game (with a deadline far away: never cut), to time its first words too
        ctx = GameContext("calibration", now, now, 300, 300, reply_due=lambda n: 3600.0)
        w = self.witness_factory(spec, 0)
        old = est.limit
        try:
            n = cap.started_generating(spec.codename)
            t0 = time.monotonic()
            r = await w.reply([Turn("interrogator", "hey, how is your day going so far?", 0)], ctx)
            took = time.monotonic() - t0
            if r.error and "TimeoutError" not in r.error:  # broken, not slow: no timing, the estimate stays
                cap.generating[spec.codename] = max(0, cap.generating.get(spec.codename, 1) - 1)
                log.warning("timing witness %s failed (%s): its estimate stays %s", spec.codename, r.error, est.limit)
                return
            # a reply that timed out: its first words take at least that long (a lower bound, as in a game)
            first = took if r.error else r.meta.get("usable_s")
            cap.observe(spec.codename, took, n, first_s=first, load=load_average(), calibration=not retimed,
                        retimed=retimed, gave_up=bool(r.error), at_ms=self.now())
        finally:
            await w.close()
        log.info("witness %s capacity: %s", spec.codename, est.to_dict())
        if est.limit != old:  # stalled participants may be drawn for it now
            self.room.retry()
            self.wake.set()

    async def _retime_loop(self) -> None:
        """Every `retime_s`, time one reply of each witness withheld as too slow even alone."""
        last = time.monotonic()
        while True:
            await asyncio.sleep(min(1.0, self.retime_s))  # short steps: a changed `retime_s` counts at once
            cap = self.room.capacity
            if time.monotonic() - last < self.retime_s or cap is None or not self.may_retime() \
                    or (self._warm_task is not None and not self._warm_task.done()):
                continue
            last = time.monotonic()
            for codename in cap.to_retime():
                spec = next(w for w in self.study.witnesses if w.codename == codename)
                try:
                    await self._calibrate(spec, retimed=True)
                except Exception:  # noqa: BLE001 - tried again next round
                    log.exception("re-timing witness %s failed", codename)
