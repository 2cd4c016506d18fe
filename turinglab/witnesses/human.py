"""A human witness relayed through the same interface as AI witnesses.

The server puts the human's message with `submit`; `reply` awaits it. Timing and schema are
then the caller's business, exactly as for AI witnesses, so nothing tells them apart.
"""

from __future__ import annotations

import asyncio
import time

from turinglab.witnesses.base import GameContext, Reply, Turn, Witness


class WitnessLeft(RuntimeError):
    """The human witness left the game (or it was closed) before answering."""


class HumanRelayWitness(Witness):
    kind = "human"

    def __init__(self, participant_id: str | None = None, codename: str = "human") -> None:
        self.codename = codename
        self.participant_id = participant_id
        self._queue: asyncio.Queue[str | None] = asyncio.Queue()

    def submit(self, text: str) -> None:
        """The human's message (called by the server when it arrives)."""
        if not isinstance(text, str):
            raise TypeError(f"a relayed message must be text, not {type(text).__name__}")
        self._queue.put_nowait(text)

    def leave(self) -> None:
        """The human left: a pending or future `reply` raises `WitnessLeft`."""
        self._queue.put_nowait(None)

    async def reply(self, history: list[Turn], ctx: GameContext) -> Reply:
        t0 = time.monotonic()
        text = await self._queue.get()
        if text is None:
            self._queue.put_nowait(None)  # stay closed for later calls
            raise WitnessLeft(f"human witness {self.participant_id or self.codename} left the game")
        return Reply(text=text, latency_s=time.monotonic() - t0)

    async def close(self) -> None:
        self.leave()
