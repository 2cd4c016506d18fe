"""What a game session is given and works with: the process it talks to (`Host`: the hub, or a
cluster worker), its seats, a human witness's held reply, and `StoreAway`. The session never
imports the hub: it is given a `Host`."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any, Protocol

from turinglab.game.config import WitnessSpec
from turinglab.game.events import Identity
from turinglab.witnesses.base import GameContext, Turn, Witness


class StoreAway(RuntimeError):
    """The game's write failed: nothing of it was kept in memory; the action may be retried."""


@dataclass
class SeatInfo:
    identity: Identity
    witness: Witness | None = None  # AI seats
    spec: WitnessSpec | None = None
    persona: dict[str, Any] | None = None  # drawn for this game (stored, never sent to a player)


@dataclass
class Held:
    """A human witness's reply waiting for its release time."""

    id: str
    text: str
    t_ms: int
    release_ms: int


class Host(Protocol):
    """What a session needs of the process running it (the `Hub`, or a cluster worker): it is
    given one and never imports the hub."""

    study: Any  # turinglab.game.config.Study: its rules
    writer: Any  # Writer or PgWriter: append / run, in game order
    write_health: Any  # guards.WriteHealth: each commit's outcome (/healthz, /admin)
    filter: Any  # ContentFilter
    room: Any  # WaitingRoom: Thompson tallies and the AI witnesses' capacity
    human_timing: Any  # Timing | None: the human witnesses' designed delay ("equalised")
    human_relay: bool  # the study relays human witnesses' replies as typed (rules.human_witness_timing)
    confidence_scale: tuple[int, int]  # (confidence_min, confidence_max): a verdict's weight in the tallies

    def now(self) -> int: ...
    async def send(self, pid: str | None, frame: dict[str, Any]) -> None: ...
    async def send_state(self, pid: str) -> None: ...
    async def game_over(self, session: Any) -> None: ...  # a GameSession
    async def fallback_text(self, history: list[Turn], ctx: GameContext) -> str: ...


def _dt(ms: int) -> datetime:
    return datetime.fromtimestamp(ms / 1000, tz=timezone.utc)
