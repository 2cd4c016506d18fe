"""Events of a game: the append-only record from which every state is rebuilt.

An event is what happened, never what was intended: a refused action is an event too
(`refused`, with the reason code), so the log holds every attempt.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Literal

# Seats (docs/architecture.md): the interrogator and the witness seats A / B.
INTERROGATOR = "interrogator"
WITNESS_SEATS = ("A", "B")
SYSTEM = "system"  # actor of events nobody caused (time up, game ended by the server)
RESEARCHER = "researcher"  # actor of annotations made after the fact (`turinglab flag set|unset`)

# Event types.
GAME_STARTED = "game_started"
MESSAGE = "message"
REFUSED = "refused"
PASTE = "paste"  # a paste attempt (blocked or not: payload["blocked"])
TYPING = "typing"
TIME_UP = "time_up"
VERDICT = "verdict"
ABUSE_REPORT = "abuse_report"
LEFT = "left"
DISCONNECTED = "disconnected"
RECONNECTED = "reconnected"
GAME_ENDED = "game_ended"
HELD = "held"  # a witness reply stored and acknowledged, shown at its release time (payload: text, release_ms)
BELIEF = "belief"  # the interrogator's belief slider moved (payload: value 0-100, after_seq: the witness reply it follows)
FLAG = "flag"  # a researcher's exclusion flag (payload: flag, value true|false, reason, origin "hand"); no effect on play

EVENT_TYPES = (
    GAME_STARTED,
    MESSAGE,
    REFUSED,
    PASTE,
    TYPING,
    TIME_UP,
    VERDICT,
    ABUSE_REPORT,
    LEFT,
    DISCONNECTED,
    RECONNECTED,
    GAME_ENDED,
    HELD,
    FLAG,
    BELIEF,
)

# Reason codes of refused actions.
NOT_YOUR_TURN = "not_your_turn"
TOO_LONG = "too_long"
EMPTY = "empty"
TIME_IS_UP = "time_up"
GAME_OVER = "game_over"
NOT_INTERROGATOR = "not_interrogator"
BAD_VERDICT = "bad_verdict"
UNKNOWN_CONVERSATION = "unknown_conversation"
UNKNOWN_SEAT = "unknown_seat"
TOO_MANY_MESSAGES = "too_many_messages"
CHAT_CLOSED = "chat_closed"
PASTE_BLOCKED = "paste_blocked"
ALREADY_DECIDED = "already_decided"  # a verdict after the game's verdict (not recorded: the log has ended)
BAD_BELIEF = "bad_belief"  # a belief move the study does not track, or not after a witness reply shown
UNDELIVERED = "undelivered"  # a held reply never shown: the chat closed or the game ended first

REFUSAL_CODES = (
    NOT_YOUR_TURN,
    TOO_LONG,
    EMPTY,
    TIME_IS_UP,
    GAME_OVER,
    NOT_INTERROGATOR,
    BAD_VERDICT,
    UNKNOWN_CONVERSATION,
    UNKNOWN_SEAT,
    TOO_MANY_MESSAGES,
    CHAT_CLOSED,
    PASTE_BLOCKED,
    UNDELIVERED,
    ALREADY_DECIDED,
    BAD_BELIEF,
)

BELIEF_MIN, BELIEF_MAX = 0, 100  # two-player: 0 sure human, 100 sure AI; three-player: 0 A is human, 100 B is human

# Who wrote a witness's message (payload of its `message` and `held` events): `source` is "human"
# for a person, for an AI witness one of witnesses/ai_seat.SOURCES; an AI reply adds the model,
# its calls and latency. Messages logged before sources were recorded have none and read as
# `source_of` says (the log is append-only: old events are not rewritten).
AUTHOR_KEYS = ("source", "model", "tries", "latency_ms")
SOURCES = ("human", "model", "regenerated", "brush_off", "fallback", "last_resort", "unknown")


def author_fields(author: dict[str, Any] | None) -> dict[str, Any]:
    """The author keys of a witness message's payload (nothing when none is known)."""
    out = {k: author[k] for k in AUTHOR_KEYS if author and author.get(k) is not None}
    if out and out.get("source") not in SOURCES:
        raise ValueError(f"message source must be one of {', '.join(SOURCES)}, got {out.get('source')!r}")
    return out


def source_of(payload: dict[str, Any], seat_kind: str | None) -> str:
    """Who wrote a witness message: its recorded source, else "human" for a person's seat and
    "unknown" for an AI's (a message from before sources were recorded: never a guess)."""
    return payload.get("source") or ("human" if seat_kind == "human" else "unknown")


State = Literal["in_progress", "awaiting_verdict", "ended"]


@dataclass(frozen=True)
class Event:
    """One entry of a game's log. `seq` counts from 0 within the game."""

    seq: int
    t_ms: int
    type: str
    actor: str
    conversation: str | None = None
    payload: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "Event":
        return cls(
            seq=int(d["seq"]),
            t_ms=int(d["t_ms"]),
            type=str(d["type"]),
            actor=str(d["actor"]),
            conversation=d.get("conversation"),
            payload=dict(d.get("payload") or {}),
        )


@dataclass(frozen=True)
class Identity:
    """The hidden identity of a witness seat. Never sent to the interrogator before the verdict."""

    kind: Literal["human", "ai"]
    witness: str | None = None  # codename of an AI witness
    participant_id: str | None = None  # the human witness
    selection_prob: float | None = None  # probability with which this witness was chosen

    def __post_init__(self) -> None:
        if self.kind not in ("human", "ai"):
            raise ValueError(f"identity kind must be 'human' or 'ai', got {self.kind!r}")
        if self.kind == "ai" and not self.witness:
            raise ValueError("an AI seat needs its witness codename (identity.witness)")
        if self.selection_prob is not None and not 0 <= self.selection_prob <= 1:
            raise ValueError(f"selection_prob must be within [0, 1], got {self.selection_prob}")

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: "Identity | dict[str, Any]") -> "Identity":
        if isinstance(d, Identity):
            return d
        unknown = set(d) - {"kind", "witness", "participant_id", "selection_prob"}
        if unknown:
            raise ValueError(f"unknown identity field(s): {', '.join(sorted(unknown))}")
        return cls(**d)


def judged_human(format: str, choice: str, seat: str) -> bool:
    """Did the verdict `choice` call the witness in `seat` human? Two-player: the choice is
    "human" or "ai" (about seat A); three-player: the choice names the seat judged human."""
    if format == "two-player":
        return choice == "human"
    return choice == seat


def verdict_correct(format: str, choice: str, kinds_by_seat: dict[str, str | None]) -> bool | None:
    """Was the verdict right, given each witness seat's kind ("human" / "ai")? Two-player: the
    choice names seat A's kind; three-player: the seat judged human is the human. None when the
    seat the verdict is about has no known kind."""
    seat = "A" if format == "two-player" else choice
    kind = kinds_by_seat.get(seat)
    if kind is None:
        return None
    return judged_human(format, choice, seat) == (kind == "human")
