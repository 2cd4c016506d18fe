"""The study's recruitment on this server (issue 27): paused or not, who is blocked, the quotas
of `stop_after`, and the researchers' requests to end a game or remove a participant.

Everything comes from the `admin_actions` rows (turinglab/store/admin_log.py), read every
`poll_s` seconds and right after an action on this server: every worker of a cluster reads the
same rows, so an action taken on any worker (or by `turinglab admin`) reaches the worker that
runs the game. What participants see of an action is the same whoever their partner is.
"""

from __future__ import annotations

import asyncio
import logging
import time
from typing import Any

from turinglab.game.engine import End
from turinglab.store import admin_log
from turinglab.store.counting import min_rule, too_short
from turinglab.store.withdraw import gone_hash, withdrawals

log = logging.getLogger("turinglab.server")
RESEARCHER_END = "researcher"  # the end reason of a game a researcher ended
PENDING_S = 600.0  # how long an end request of a game running elsewhere is kept, should it come here
COUNT_EVERY_S = 5.0  # how often the quotas' counts are read again (other workers' games)
ENDED_FLAG = "ended_by_researcher"  # its exclusion flag (column flag_ended_by_researcher in the analysis)


async def end_session(s: Any, reason: str, researcher: str) -> bool:
    """End a live game now (False: it had already ended). The log gets `game_ended` (reason
    `researcher`) and a `flag` event: the exclusion flag `ended_by_researcher`, with the reason
    and the researcher. Everyone in the game then sees the end (no verdict, no reveal)."""
    async with s.locked():
        if s.game.state == "ended":
            return False
        note = {"flag": ENDED_FLAG, "value": True, "reason": reason, "origin": "admin", "by": researcher}
        out = s.game.apply(End(RESEARCHER_END, flag=note), s.hub.now())
        await s._commit(out.events)
    await s.finish()
    return True


class Recruitment:
    def __init__(self, hub: Any, poll_s: float = 1.0) -> None:
        self.hub = hub
        self.poll_s = poll_s
        self.paused = False
        self.blocked: set[str] = set()
        self.last_id = 0
        self.games = 0
        self.people: set[str] = set()
        self._sync_lock = asyncio.Lock()
        self.pending: dict[str, admin_log.AdminAction] = {}  # end requests of games not running here
        self._asked: dict[str, float] = {}
        self.outcomes: dict[int, str] = {}  # action id -> what happened here, when not simply applied (/admin says it)
        self._counted = time.monotonic()
        self.last_withdrawal = max((w.id for w in withdrawals(hub.store)), default=0)  # nobody known here yet
        wall = time.time_ns() // 1_000_000
        for r in self._read(admin_log.actions(hub.store, hub.study_id)):  # the state before this start
            if r.action == "end_game" and r.target and wall - r.t_ms < PENDING_S * 1000:
                self.pending[r.target] = r  # a game of a dead worker this one may take over
                self._asked[r.target] = time.monotonic() - (wall - r.t_ms) / 1000
        self._count(*admin_log.counts(hub.store, hub.study_id, min_rule(hub.study)))
        self.task = asyncio.create_task(self._loop())

    # ---- the state ---------------------------------------------------------------
    def _read(self, rows: list[admin_log.AdminAction]) -> list[admin_log.AdminAction]:
        for r in rows:
            self.last_id = max(self.last_id, r.id)
            if r.action in ("pause", "resume"):
                self.paused = r.action == "pause"
            elif r.action == "block" and r.target:
                self.blocked.add(r.target)
            elif r.action == "unblock" and r.target:
                self.blocked.discard(r.target)
        return rows

    def _count(self, games: int, people: set[str]) -> None:
        """The store's counts: games that count or may still (store/counting.py), so a game that
        ended too short (an instant verdict) frees its place in the quota again."""
        self.games = games
        self.people = set(people)

    def full(self, pid: str | None = None) -> bool:
        """The study's quota is reached for `pid` (None: a new arrival). A participant who has
        played already may play on while only the participants' quota is reached."""
        stop = self.hub.study.stop_after
        if stop is None:
            return False
        if stop.games is not None and self.games >= stop.games:
            return True
        return stop.participants is not None and len(self.people) >= stop.participants and pid not in self.people

    def gate(self, pid: str | None) -> str | None:
        """Why `pid` (None: a new arrival) may not start a game now: blocked, full, paused; None: they may."""
        if pid is not None and pid in self.blocked:
            return "blocked"
        if self.full(pid):
            return "full"
        return "paused" if self.paused else None

    def started(self, pids: set[str], bot: bool) -> None:
        """A game started here: counted at once (the next read of the store agrees)."""
        if not bot:
            self.games += 1
            self.people |= pids
        if self.hub.study.stop_after is not None:
            asyncio.create_task(self._turn_away())

    async def ended(self, s: Any) -> None:
        """A game ended here that does not count (store/counting.py: a researcher ended it, or too
        short: an instant verdict, or below the study's `counting`) frees its place in the quota at
        once; the store's next count agrees (the rule reads the log, no flag is written)."""
        g, hub = s.game, self.hub
        if g.ended_ms is None or hub.demo or set(s.participants()) & hub.bots:  # never counted (`started`)
            return
        asked = sum(m.sender == "interrogator" for c in g.conversations.values() for m in c.messages)
        if g.end_reason == RESEARCHER_END or too_short(asked, g.started_ms, g.ended_ms, min_rule(hub.study)):
            self.games = max(0, self.games - 1)

    # ---- reading the actions ---------------------------------------------------------
    async def _loop(self) -> None:
        while True:
            await asyncio.sleep(self.poll_s)
            try:
                await self.sync()
            except Exception as exc:  # noqa: BLE001 - the store may be away; next time
                from sqlalchemy.exc import OperationalError

                from turinglab.store import StoreError

                if isinstance(exc, (OperationalError, StoreError)):  # the database away: one line, not a traceback
                    log.warning("reading the researchers' actions failed: the database is away (%s)",
                                " ".join(str(exc).split())[:200])
                else:
                    log.exception("reading the researchers' actions failed")

    async def sync(self) -> None:
        """Apply the actions stored since the last read (and the quotas' counts)."""
        async with self._sync_lock:
            was = (self.paused, self.full())
            rows = self._read(await asyncio.to_thread(admin_log.actions, self.hub.store, self.hub.study_id,
                                                      self.last_id))
            if self.hub.study.stop_after is not None and time.monotonic() >= self._counted + COUNT_EVERY_S:
                self._counted = time.monotonic()  # games started here are counted at once (`started`)
                self._count(*await asyncio.to_thread(admin_log.counts, self.hub.store, self.hub.study_id,
                                                     min_rule(self.hub.study)))
            for r in rows:  # one failing action never stops the ones after it
                try:
                    await self._apply(r)
                except Exception as exc:  # noqa: BLE001 - stored: reported, and kept by the recruitment state
                    log.exception("applying researcher action %s (%s) failed", r.id, r.action)
                    self._said(r.id, f"stored, but applying it here failed ({type(exc).__name__}); its block, "
                               "pause or resume holds all the same")
            for w in await asyncio.to_thread(withdrawals, self.hub.store, self.last_withdrawal):
                self.last_withdrawal = w.id
                await self._forget(w.gone)
            for gid in [g for g in self.pending if g in self.hub.live]:  # taken over here since the request
                r = self.pending.pop(gid)
                try:
                    await end_session(self.hub.live[gid], r.reason or "", r.researcher)
                except Exception:  # noqa: BLE001 - the next request or the game's own end
                    log.exception("ending game %s for researcher action %s failed", gid, r.id)
            now = time.monotonic()
            self.pending = {g: r for g, r in self.pending.items() if now - self._asked[g] < PENDING_S}
            self._asked = {g: t for g, t in self._asked.items() if g in self.pending}
            if (self.paused, self.full()) != was:
                await self._turn_away()

    async def _apply(self, r: admin_log.AdminAction) -> None:
        hub = self.hub
        if r.action == "end_game" and r.target in hub.live:
            if await end_session(hub.live[r.target], r.reason or "", r.researcher):
                log.info("game %s ended by researcher %s", r.target, r.researcher)
        elif r.action == "end_game" and r.target:  # another worker's game, or one that may come here
            self.pending[r.target] = r  # (a takeover): ended here if it does, within PENDING_S
            self._asked[r.target] = time.monotonic()
        elif r.action in ("remove", "block", "unblock") and r.target and r.target not in hub.people:
            self._said(r.id, "the participant is not on this server now (another worker, another study, or not "
                             "connected since it started): the action holds wherever they come back")
        elif r.action in ("remove", "block") and r.target:
            await hub._unqueue(r.target)
            s = hub.session_of.get(r.target)
            if s is not None and s.id in hub.live and await end_session(s, r.reason or "", r.researcher) \
                    and r.action == "block":  # as the blocked person's ended games were (admin_actions.take)
                await asyncio.to_thread(hub.store.flag_game, s.id, "participant_blocked", True,
                                        f"{r.researcher}: {r.reason}", hub.now())
            await hub.send_state(r.target)
        elif r.action == "unblock" and r.target:
            await hub.send_state(r.target)

    async def _forget(self, gone: str) -> None:
        """A participant withdrew (turinglab/store/withdraw.py): if they are known here, their game
        ends, their open pages can start nothing more, and their link is forgotten."""
        hub = self.hub
        for pid in [p for p in list(hub.people) if gone_hash(p) == gone]:
            self.blocked.add(pid)
            await hub._unqueue(pid)
            s = hub.session_of.get(pid)
            if s is not None and s.id in hub.live:
                await end_session(s, "a participant withdrew", "withdrawal")
            await hub.send_state(pid)
            hub.people.pop(pid, None)

    def _said(self, action_id: int, text: str) -> None:
        self.outcomes[action_id] = text
        while len(self.outcomes) > 100:  # kept for the /admin answer only
            self.outcomes.pop(next(iter(self.outcomes)))

    async def _turn_away(self) -> None:
        """After a pause, a resume or a quota reached: the waiting leave the room (paused or full)
        and everyone here without a game gets their state again."""
        hub = self.hub
        for pid in list(hub.conns):
            s = hub.session_of.get(pid)
            if s is not None and s.game.state != "ended":
                continue  # people in games finish them
            if self.gate(pid) is not None:
                await hub._unqueue(pid)
            await hub.send_state(pid)

    def close(self) -> None:
        self.task.cancel()
