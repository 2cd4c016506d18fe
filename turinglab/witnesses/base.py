"""The witness interface: given the game so far, produce the next message.

Every witness (human relay, ELIZA, LLM, local model) implements `Witness.reply`.
Timing (when the reply is shown) is not the witness's business: the caller holds the
reply back until its designed delay (see `turinglab.witnesses.timing`).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Callable, Literal


@dataclass(frozen=True)
class Turn:
    """One message of a conversation, seen from the witness's side."""

    role: Literal["interrogator", "witness"]
    text: str
    t_ms: int


@dataclass(frozen=True)
class GameContext:
    """What a witness may know about the game it is in."""

    game_id: str
    started_at: datetime  # aware datetime (UTC)
    now: datetime  # aware datetime (UTC)
    time_limit_s: float
    max_chars: int
    seat: str = "A"
    # seconds left until a reply of n characters is due (its designed delay ends; negative:
    # past). Set by the server for AI replies so that a streaming witness can stop in time
    # (deadline-aware generation); None: no deadline.
    reply_due: Callable[[int], float] | None = None
    # the study's language (BCP 47): an LLM/local witness is told to chat in it; ELIZA stays English
    language: str = "en"


@dataclass(frozen=True)
class Reply:
    text: str
    latency_s: float = 0.0  # how long the witness took to produce it
    tokens: int | None = None
    cost: float | None = None
    fallback: bool = False  # True when the configured fallback answered because the model failed
    error: str | None = None  # what went wrong, for the log only (never shown to the interrogator)
    meta: dict[str, Any] = field(default_factory=dict)


class Witness(ABC):
    """An AI or relayed-human witness."""

    codename: str
    kind: str  # "human" | "eliza" | "llm" | "local"

    async def start(self, ctx: GameContext) -> None:  # noqa: B027 - optional hook
        """Called once when a game starts (e.g. to fill a persona prompt)."""

    @abstractmethod
    async def reply(self, history: list[Turn], ctx: GameContext) -> Reply:
        """The witness's next message, given the conversation so far (last turn: interrogator)."""

    async def regenerate(self, history: list[Turn], ctx: GameContext) -> Reply:
        """Another reply, after the persona guard or the content filter refused the last one
        (an LLM witness steers it back into persona; others simply answer again)."""
        return await self.reply(history, ctx)

    async def answer_task(self, history: list[Turn], ctx: GameContext) -> Reply:
        """The reply to a message only a machine would obey (code, a poem on command, an
        injection) or an accusation (guard/task.py): an LLM witness is steered to brush it off;
        others simply answer."""
        return await self.reply(history, ctx)

    async def close(self) -> None:  # noqa: B027 - optional hook
        """Release resources."""
