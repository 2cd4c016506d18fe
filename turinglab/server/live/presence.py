"""Who is connected to a live game, and the end of a game whose interrogator left and stayed away
past the verdict grace (`abandoned`), which frees its witness slot: a part of GameSession (session.py)."""

from __future__ import annotations

import asyncio
import logging

from turinglab.game.engine import Disconnect, End, Reconnect
from turinglab.game.events import INTERROGATOR
from turinglab.server.live.host import StoreAway

log = logging.getLogger("turinglab.server")


class Presence:
    """Mixed into GameSession, which gives `game`, `seat_of`, `rules`, `hub`, `id`, `away_since`,
    `locked`, `_commit`, `_retrying`, `_spawn` and `_after_change`."""

    async def on_connection(self, pid: str, connected: bool) -> None:
        if self.game.state == "ended":
            return
        seat = self.seat_of[pid]
        try:
            async with self.locked():
                out = self.game.apply(Reconnect(seat) if connected else Disconnect(seat), self.hub.now())
                await self._commit(out.events)
        except StoreAway:  # not recorded (and not kept in memory): nobody was told it was
            pass
        if seat == INTERROGATOR and not connected and self.rules.verdict_grace_s is not None:
            self.away_since = self.hub.now()
            self._spawn(self._abandon_if_away(self.away_since))
        elif seat == INTERROGATOR and connected:
            self.away_since = None

    async def _abandon_if_away(self, since: int) -> None:
        """The interrogator left: if still away after the grace period, the game ends (`abandoned`)
        and its witness slot is free for the next participant."""
        await asyncio.sleep(self.rules.verdict_grace_s)
        if self.away_since != since or self.game.state == "ended":
            return  # came back (or left again later: that departure's own timer decides)

        async def end() -> None:
            if self.game.state != "ended":
                await self._commit(self.game.apply(End("abandoned"), self.hub.now()).events)
        await self._retrying(end)
        log.info("game %s: the interrogator left %.0f s ago: ended (abandoned)", self.id,
                 (self.hub.now() - since) / 1000)
        await self._after_change()
