"""A live game taken over from a dead cluster worker (cluster.py): rebuilt from its stored log,
its timers, held replies and in-flight AI replies started again on the new owner."""

from __future__ import annotations

from typing import Any

from turinglab.game.engine import Game
from turinglab.game.events import INTERROGATOR, Event
from turinglab.server.live import protocol as proto
from turinglab.server.live.host import Host, SeatInfo
from turinglab.server.live.session import GameSession
from turinglab.witnesses import timing


class ResumedSession(GameSession):
    """A game taken over from a dead worker. Its acknowledgements died with that worker, so a
    resent message that is already the sender's last message in the log is acknowledged again
    instead of being refused."""

    @classmethod
    async def restore(cls, host: Host, info: Any, seats: dict[str, SeatInfo], events: list[Event],
                      seed: int) -> ResumedSession:
        """The stored game `info` (its `events`) in memory again; a game stored without events
        (its owner died before its first event) starts here."""
        s = cls(host, info.id, info.format, info.interrogator_id, seats, info.started_ms, seed)
        if events:
            s.game = Game.replay(events)
            s._rebuild(events)  # message ids; held human replies are released on time
        else:
            s.game = Game.start(info.format, host.study.rules, info.started_ms)
            await s._commit(s.game.log)
        return s

    async def resume(self) -> None:
        """Start the witnesses, the AI replies that were in flight, and the clock."""
        await self._start_witnesses()
        for name, seat in self.seats.items():
            if seat.witness is None or not self.game.chat_open:
                continue
            q = self._last_question(name)
            msgs = self.game.conversations[name].messages
            if q is not None and msgs and msgs[-1].seq == q.seq:  # its reply was in flight
                self.typing_ms[q.seq] = round(1000 * timing.typing_delay(self.rules, self.rng))
                self._spawn(self._typing(name, q))
                self._spawn(self._ai_reply(name, q))
        self._spawn(self._resume_clock())

    def _known_resend(self, pid: str, f: proto.MessageIn) -> None:
        """Under the game's lock (session.py), so a held reply being released is never seen
        half done: in the engine's log but without its public id yet."""
        seat = self.seat_of.get(pid)
        if seat is None or (pid, f.client_id) in self.acks:
            return
        conv = (f.conv or "A") if seat == INTERROGATOR else seat
        c = self.game.conversations.get(conv)
        mine = [m for m in c.messages if m.sender == seat] if c is not None else []
        if mine and mine[-1].text == f.text and not self.game.may_send(seat, conv):
            m = mine[-1]
            self.acks[(pid, f.client_id)] = (self.ids[m.seq], m.t_ms, m.text)
        elif seat != INTERROGATOR and conv in self.held and self.held[conv].text == f.text:
            h = self.held[conv]
            self.acks[(pid, f.client_id)] = (h.id, h.t_ms, h.text)

    async def _resume_clock(self) -> None:
        if self.game.state == "in_progress":
            await self._clock_task()
        else:
            await self._verdict_deadline()
