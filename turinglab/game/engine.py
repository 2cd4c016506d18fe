"""The game engine: a pure state machine for two- and three-player imitation games.

No I/O and no clock of its own: every call takes `now_ms`. `apply(action, now_ms)`
checks the action against the rules and returns the events it produced (a refused
action yields one `refused` event carrying the reason code). State changes only by
folding events (`_fold`), so `Game.replay(events)` rebuilds exactly the same state.
The engine never knows who the witnesses are: identities live in the store.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Union

from turinglab.game import events as ev
from turinglab.game.config import Format, Rules
from turinglab.game.events import INTERROGATOR, SYSTEM, WITNESS_SEATS, Event, State
from turinglab.textnorm import is_blank

MAX_REASON_CHARS = 2000
MAX_REFUSED_TEXT = 500  # characters of a refused message kept in the log (with its full length)


# ----- actions ---------------------------------------------------------------


@dataclass(frozen=True)
class Send:
    """A chat message. `conversation` is the witness seat (A/B); witnesses may omit it."""

    seat: str
    text: str
    conversation: str | None = None
    author: dict[str, Any] | None = None  # a witness's message: who wrote it (events.AUTHOR_KEYS)


@dataclass(frozen=True)
class Hold:
    """A witness reply taken now and shown at `release_ms` (the timing rule): recorded as `held`.

    Until then the witness cannot send another; its `Send` of the same text releases it. A reply
    still held when the chat closes or the game ends is recorded as refused, code `undelivered`."""

    seat: str
    text: str
    conversation: str | None = None
    release_ms: int = 0
    author: dict[str, Any] | None = None


@dataclass(frozen=True)
class Paste:
    """An attempt to paste into the message box."""

    seat: str
    length: int = 0
    conversation: str | None = None


@dataclass(frozen=True)
class Belief:
    """The interrogator's belief slider after the witness reply at log position `after_seq`
    (`value` 0-100: two-player 0 human .. 100 AI; three-player 0 "A is human" .. 100 "B is human")."""

    seat: str
    value: int
    after_seq: int


@dataclass(frozen=True)
class Typing:
    """The typing indicator was shown for `seat` (recorded for the log only)."""

    seat: str
    conversation: str | None = None


@dataclass(frozen=True)
class GiveVerdict:
    """Two-player choice: "human" | "ai". Three-player choice: the seat judged human, "A" | "B"."""

    seat: str
    choice: str
    confidence: int
    reason: str | None = None


@dataclass(frozen=True)
class ReportAbuse:
    seat: str
    reason: str | None = None
    conversation: str | None = None


@dataclass(frozen=True)
class Leave:
    seat: str


@dataclass(frozen=True)
class Disconnect:
    seat: str


@dataclass(frozen=True)
class Reconnect:
    seat: str


@dataclass(frozen=True)
class Tick:
    """Nothing but the passing of time (lets the time limit fire)."""


@dataclass(frozen=True)
class End:
    """The system ends the game (e.g. `stdin_closed`, `server_shutdown`, `aborted`); `flag`: the
    payload of a `flag` event logged with the end (a researcher ended it: flag, value, reason, by)."""

    reason: str
    flag: dict[str, Any] | None = None


Action = Union[Send, Hold, Paste, Typing, Belief, GiveVerdict, ReportAbuse, Leave, Disconnect, Reconnect, Tick, End]


@dataclass(frozen=True)
class Outcome:
    ok: bool
    code: str | None  # reason code when refused (see turinglab.game.events)
    events: list[Event]
    detail: str | None = None  # a human-readable explanation of the refusal


@dataclass(frozen=True)
class Message:
    seq: int
    t_ms: int
    sender: str  # "interrogator" or the witness seat
    text: str


@dataclass
class _Conversation:
    messages: list[Message] = field(default_factory=list)
    turn: str | None = INTERROGATOR  # who may send next: "interrogator" | "witness" | None (anyone)
    sent: dict[str, int] = field(default_factory=lambda: {"interrogator": 0, "witness": 0})
    held: int | None = None  # seq of the witness's `held` reply not yet shown


# ----- the game ----------------------------------------------------------------


class GameError(ValueError):
    """A log that cannot be replayed (corrupt or out of order)."""


class Game:
    def __init__(self) -> None:
        # use Game.start(...) or Game.replay(...)
        self.format: Format = "two-player"
        self.rules: Rules = Rules()
        self.started_ms = 0
        self.state: State = "in_progress"
        self.conversations: dict[str, _Conversation] = {}
        self.log: list[Event] = []
        self.verdict: dict[str, Any] | None = None
        self.end_reason: str | None = None
        self.ended_ms: int | None = None
        self.flags: dict[str, bool] = {}
        self.connected: dict[str, bool] = {}
        self.closed_ms: int | None = None  # when the chat closed (time up / witness left)
        self.pastes: dict[str, int] = {}
        self.refusals = 0
        self.belief: dict[str, int] | None = None  # the last belief move: {value, after_seq, seq}

    # --- construction ---

    @classmethod
    def start(cls, format: Format, rules: Rules, now_ms: int,
              personas: dict[str, dict[str, Any]] | None = None) -> "Game":
        """A new game whose log begins with `game_started` at `now_ms`; `personas` (seat -> the
        persona drawn for its AI witness) is stored in that event for analyses, never shown."""
        if format not in ("two-player", "three-player"):
            raise ValueError(f"format must be 'two-player' or 'three-player', got {format!r}")
        game = cls()
        game._emit(
            ev.GAME_STARTED,
            SYSTEM,
            now_ms,
            payload={"format": format, "rules": rules.model_dump(mode="json"),
                     **({"personas": personas} if personas else {})},
        )
        return game

    @classmethod
    def replay(cls, events: list[Event]) -> "Game":
        """Rebuild a game from its log (the result equals the game that wrote it)."""
        game = cls()
        for i, e in enumerate(events):
            if e.seq != i:
                raise GameError(f"event seq {e.seq} at position {i}: the log has a gap or is out of order")
            if i == 0 and e.type != ev.GAME_STARTED:
                raise GameError(f"a game log starts with {ev.GAME_STARTED!r}, not {e.type!r}")
            try:
                game._fold(e)
            except (KeyError, TypeError, ValueError) as exc:
                raise GameError(f"event seq {e.seq} ({e.type}) cannot be applied: {exc!r}") from None
            game.log.append(e)
        if not game.log:
            raise GameError("an empty log cannot be replayed")
        return game

    # --- queries a UI needs ---

    @property
    def seats(self) -> tuple[str, ...]:
        return ev.WITNESS_SEATS[: 1 if self.format == "two-player" else 2]

    @property
    def deadline_ms(self) -> int:
        return self.started_ms + round(self.rules.time_limit_s * 1000)

    @property
    def chat_open(self) -> bool:
        return self.state == "in_progress"

    def time_left_ms(self, now_ms: int) -> int:
        return max(0, self.deadline_ms - now_ms) if self.state == "in_progress" else 0

    def whose_turn(self, conversation: str = "A") -> str | None:
        """"interrogator", "witness", or None (chat closed, or anyone may write)."""
        if not self.chat_open or conversation not in self.conversations:
            return None
        return self.conversations[conversation].turn

    def may_send(self, seat: str, conversation: str | None = None) -> bool:
        conv = seat if seat in self.seats else (conversation or self.seats[0])
        return self.chat_open and conv in self.conversations and self.whose_turn(conv) in (None, _role(seat))

    def state_dict(self) -> dict[str, Any]:
        """Everything that defines the game's state (used to compare a game with its replay)."""
        return {
            "format": self.format,
            "rules": self.rules.model_dump(mode="json"),
            "started_ms": self.started_ms,
            "state": self.state,
            "conversations": {
                k: {"messages": [m.__dict__ for m in c.messages], "turn": c.turn, "sent": dict(c.sent)}
                for k, c in self.conversations.items()
            },
            "verdict": self.verdict,
            "end_reason": self.end_reason,
            "ended_ms": self.ended_ms,
            "flags": dict(self.flags),
            "connected": dict(self.connected),
            "closed_ms": self.closed_ms,
            "pastes": dict(self.pastes),
            "refusals": self.refusals,
            "n_events": len(self.log),
        }

    def snapshot(self, for_seat: str, now_ms: int) -> dict[str, Any]:
        """What one seat may see. Nothing about any witness's identity or connection.

        The interrogator sees every conversation; a witness sees only its own. A witness
        sees the verdict only once the game has ended.
        """
        if for_seat != INTERROGATOR and for_seat not in self.seats:
            raise ValueError(f"unknown seat {for_seat!r}; seats: {INTERROGATOR}, {', '.join(self.seats)}")
        convs = self.seats if for_seat == INTERROGATOR else (for_seat,)
        me = _role(for_seat)
        snap: dict[str, Any] = {
            "seat": for_seat,
            "format": self.format,
            "state": self.state,
            "chat_open": self.chat_open,
            "time_left_ms": self.time_left_ms(now_ms),
            "deadline_ms": self.deadline_ms,
            "max_chars": self.rules.max_chars,
            "block_paste": self.rules.block_paste,
            "conversations": {
                c: {
                    "your_turn": self.may_send(for_seat, c),
                    "messages": [
                        {"t_ms": m.t_ms, "from": "you" if _role(m.sender) == me else "them", "text": m.text}
                        for m in self.conversations[c].messages
                    ],
                }
                for c in convs
            },
            "can_give_verdict": for_seat == INTERROGATOR and self.state != "ended",
            "verdict": None,
        }
        if self.verdict is not None and (for_seat == INTERROGATOR or self.state == "ended"):
            snap["verdict"] = dict(self.verdict)
        return snap

    # --- actions ---

    def apply(self, action: Action, now_ms: int) -> Outcome:
        """Check `action` against the rules at time `now_ms`; record and return what happened."""
        start = len(self.log)
        if self.state == "ended":  # nothing is appended after game_ended
            return self._after_end(action)
        now_ms = max(now_ms, self.log[-1].t_ms)  # event times never go backwards
        self._check_clock(now_ms)
        code, detail = self._dispatch(action, now_ms)
        if code is not None:
            self._emit(ev.REFUSED, _actor(action), now_ms, _conversation_of(action),
                       {"action": type(action).__name__, "code": code, "detail": detail, **_attempt(action)})
        return Outcome(ok=code is None, code=code, events=self.log[start:], detail=detail)

    def refuse(self, action: Action, code: str, detail: str, now_ms: int) -> Outcome:
        """Record that `action` was refused by a check outside the engine (e.g. a content filter).

        Nothing else changes: the log gets one `refused` event, with the same payload as the
        engine's own refusals (`action`, `code`, `detail`, the attempted text), so replay
        rebuilds the same state. The clock is checked first, as in `apply` (a `time_up` due by
        `now_ms` comes before the refusal, so event times never go backwards).
        """
        if not isinstance(code, str) or not code:
            raise ValueError(f"a refusal needs a non-empty code, got {code!r}")
        if self.state == "ended":
            return self._after_end(action)
        start = len(self.log)
        now_ms = max(now_ms, self.log[-1].t_ms)
        self._check_clock(now_ms)
        self._emit(ev.REFUSED, _actor(action), now_ms, _conversation_of(action),
                   {"action": type(action).__name__, "code": code, "detail": _clip(str(detail)), **_attempt(action)})
        return Outcome(ok=False, code=code, events=self.log[start:], detail=detail)

    def _after_end(self, action: Action) -> Outcome:
        """An action after the game ended: refused and not recorded (the log ends with game_ended)."""
        if isinstance(action, GiveVerdict) and self.verdict is not None:
            return Outcome(False, ev.ALREADY_DECIDED, [], "the verdict has already been given")
        return Outcome(False, ev.GAME_OVER, [], f"the game has ended ({self.end_reason})")

    def _check_clock(self, now_ms: int) -> None:
        """Fire the time limit, and the verdict deadline, when `now_ms` has passed them."""
        if self.state == "in_progress" and now_ms >= self.deadline_ms:
            self._emit(ev.TIME_UP, SYSTEM, self.deadline_ms, payload={"noticed_ms": now_ms})
        grace = self.rules.verdict_grace_s
        if self.state == "awaiting_verdict" and grace is not None and self.closed_ms is not None:
            due = self.closed_ms + round(grace * 1000)
            if now_ms >= due:
                self._emit(ev.GAME_ENDED, SYSTEM, max(due, self.log[-1].t_ms), payload={"reason": "verdict_timeout"})

    def _dispatch(self, a: Action, now: int) -> tuple[str | None, str | None]:
        if isinstance(a, Tick):
            return None, None
        if isinstance(a, End):
            if self.state == "ended":
                return ev.GAME_OVER, "the game has already ended"
            self._emit(ev.GAME_ENDED, SYSTEM, now, payload={"reason": a.reason})
            if a.flag is not None:
                self._emit(ev.FLAG, ev.RESEARCHER, now, payload=dict(a.flag))
            return None, None
        seat_problem = self._check_seat(a.seat)
        if seat_problem:
            return ev.UNKNOWN_SEAT, seat_problem
        if isinstance(a, (Disconnect, Reconnect)):
            self._emit(ev.DISCONNECTED if isinstance(a, Disconnect) else ev.RECONNECTED, a.seat, now)
            return None, None
        if self.state == "ended":
            return ev.GAME_OVER, f"the game has ended ({self.end_reason})"
        if isinstance(a, Send):
            return self._send(a, now)
        if isinstance(a, Hold):
            return self._send(a, now, hold=True)
        if isinstance(a, Paste):
            conv, problem = self._conversation_for(a.seat, a.conversation)
            if problem:
                return problem
            self._emit(ev.PASTE, a.seat, now, conv, {"length": int(a.length), "blocked": self.rules.block_paste})
            if self.rules.block_paste:
                return ev.PASTE_BLOCKED, "pasting is not allowed in this study: type your message"
            return None, None
        if isinstance(a, Typing):
            conv, problem = self._conversation_for(a.seat, a.conversation)
            if problem:
                return problem
            if not self.chat_open:
                return self._closed_code()
            self._emit(ev.TYPING, a.seat, now, conv)
            return None, None
        if isinstance(a, GiveVerdict):
            return self._verdict(a, now)
        if isinstance(a, Belief):
            return self._belief(a, now)
        if isinstance(a, ReportAbuse):
            conv = a.conversation if a.conversation in self.seats else (a.seat if a.seat in self.seats else None)
            self._emit(ev.ABUSE_REPORT, a.seat, now, conv, {"reason": _clip(a.reason)})
            self._emit(ev.GAME_ENDED, SYSTEM, now, payload={"reason": "abuse_report"})
            return None, None
        if isinstance(a, Leave):
            self._emit(ev.LEFT, a.seat, now)
            if a.seat == INTERROGATOR:
                self._emit(ev.GAME_ENDED, SYSTEM, now, payload={"reason": "interrogator_left"})
            return None, None
        raise TypeError(f"not a game action: {a!r}")

    def _check_seat(self, seat: str) -> str | None:
        if seat == INTERROGATOR or seat in self.seats:
            return None
        return f"unknown seat {seat!r}; this {self.format} game has: {INTERROGATOR}, {', '.join(self.seats)}"

    def _conversation_for(self, seat: str, conversation: str | None) -> tuple[str, Any]:
        if seat != INTERROGATOR:
            if conversation not in (None, seat):
                return seat, (ev.UNKNOWN_CONVERSATION, f"witness {seat} can only write in conversation {seat}")
            return seat, None
        if conversation is None and self.format == "two-player":
            return "A", None
        if conversation not in self.seats:
            return "", (
                ev.UNKNOWN_CONVERSATION,
                f"conversation must be one of {', '.join(self.seats)}, got {conversation!r}",
            )
        return conversation, None

    def _closed_code(self) -> tuple[str, str]:
        if self.state == "awaiting_verdict" and self.closed_ms == self.deadline_ms:
            return ev.TIME_IS_UP, "time is up: the chat is closed, the interrogator gives the verdict"
        return ev.CHAT_CLOSED, "the chat is closed: the interrogator gives the verdict"

    def _send(self, a: Send | Hold, now: int, hold: bool = False) -> tuple[str | None, str | None]:
        conv, problem = self._conversation_for(a.seat, a.conversation)
        if problem:
            return problem
        if not self.chat_open:
            return self._closed_code()
        text = a.text if isinstance(a.text, str) else ""
        held = self.conversations[conv].held
        if not _visible(text):
            return ev.EMPTY, "the message is empty"
        if held is not None and (hold or self.log[held].payload["text"] != text):
            return ev.NOT_YOUR_TURN, f"wait until your reply in conversation {conv} is shown"
        if not text.strip():
            return ev.EMPTY, "the message is empty"
        if len(text) > self.rules.max_chars:
            return ev.TOO_LONG, f"the message has {len(text)} characters; the limit is {self.rules.max_chars}"
        role = _role(a.seat)
        c = self.conversations[conv]
        if c.turn is not None and c.turn != role:
            who = "the interrogator" if c.turn == INTERROGATOR else "the witness"
            return ev.NOT_YOUR_TURN, f"wait for {who} to write in conversation {conv}"
        limit = self.rules.max_messages
        if limit is not None and c.sent[role] >= limit:
            return ev.TOO_MANY_MESSAGES, f"each side may send {limit} messages per conversation"
        # a witness's message records who wrote it (never sent to the interrogator)
        author = ev.author_fields(a.author) if role != INTERROGATOR else {}
        if hold:
            self._emit(ev.HELD, a.seat, now, conv, {"text": text, "release_ms": int(a.release_ms), **author})  # type: ignore[union-attr]
        else:
            self._emit(ev.MESSAGE, a.seat, now, conv, {"text": text, **author})
        return None, None

    def _drop_held(self, t_ms: int) -> None:
        """Record every reply still held as undelivered (the chat closes or the game ends)."""
        for conv, c in self.conversations.items():
            if c.held is not None:
                self._emit(ev.REFUSED, self.log[c.held].actor, t_ms, conv,
                           {"action": "Send", "code": ev.UNDELIVERED, "text": self.log[c.held].payload["text"],
                            "detail": "the reply was still held when the chat closed or the game ended",
                            "held_seq": c.held})

    def _verdict(self, a: GiveVerdict, now: int) -> tuple[str | None, str | None]:
        if a.seat != INTERROGATOR:
            return ev.NOT_INTERROGATOR, "only the interrogator gives a verdict"
        choices = ("human", "ai") if self.format == "two-player" else ("A", "B")
        if a.choice not in choices:
            what = "whether the witness is" if self.format == "two-player" else "which seat is the human:"
            return ev.BAD_VERDICT, f"choice must be {what} {' or '.join(map(repr, choices))}, got {a.choice!r}"
        lo, hi = self.rules.confidence_min, self.rules.confidence_max
        if isinstance(a.confidence, bool) or not isinstance(a.confidence, int) or not lo <= a.confidence <= hi:
            return ev.BAD_VERDICT, f"confidence must be a whole number from {lo} to {hi}, got {a.confidence!r}"
        if self.rules.directional:  # the slider's side is the verdict: negative A (ai), positive B (human)
            neg, pos = choices[::-1] if self.format == "two-player" else choices
            if a.confidence == 0 or a.choice != (neg if a.confidence < 0 else pos):
                return ev.BAD_VERDICT, (f"on the {lo}..{hi} scale the confidence says the direction: below 0 for "
                                        f"{neg!r}, above 0 for {pos!r}; got {a.choice!r} with {a.confidence}")
        if a.reason is not None and (not isinstance(a.reason, str) or len(a.reason) > MAX_REASON_CHARS):
            return ev.BAD_VERDICT, f"the reason must be text of at most {MAX_REASON_CHARS} characters"
        reason = a.reason.strip() if a.reason and a.reason.strip() else None
        payload = {"choice": a.choice, "confidence": a.confidence, "reason": reason,
                   "forced": self.state == "awaiting_verdict"}
        self._emit(ev.VERDICT, INTERROGATOR, now, payload=payload)
        self._emit(ev.GAME_ENDED, SYSTEM, now, payload={"reason": "verdict"})
        return None, None

    def _belief(self, a: Belief, now: int) -> tuple[str | None, str | None]:
        """A belief move: recorded, nothing else changes (no turn, no timer, nothing for a witness)."""
        if a.seat != INTERROGATOR:
            return ev.NOT_INTERROGATOR, "only the interrogator moves the belief slider"
        if not self.rules.belief_tracking:
            return ev.BAD_BELIEF, "this study does not track beliefs"
        v = a.value
        if isinstance(v, bool) or not isinstance(v, int) or not ev.BELIEF_MIN <= v <= ev.BELIEF_MAX:
            return ev.BAD_BELIEF, f"the belief must be a whole number from {ev.BELIEF_MIN} to {ev.BELIEF_MAX}, got {v!r}"
        k = a.after_seq
        reply = self.log[k] if isinstance(k, int) and not isinstance(k, bool) and 0 <= k < len(self.log) else None
        if reply is None or reply.type != ev.MESSAGE or reply.actor not in self.seats:
            return ev.BAD_BELIEF, "a belief follows a witness reply that was shown: move the slider after a reply"
        self._emit(ev.BELIEF, INTERROGATOR, now, reply.conversation, {"value": v, "after_seq": k})
        return None, None

    # --- the log ---

    def _emit(self, type_: str, actor: str, t_ms: int, conversation: str | None = None,
              payload: dict[str, Any] | None = None) -> None:
        if type_ in (ev.TIME_UP, ev.LEFT, ev.VERDICT, ev.GAME_ENDED):
            self._drop_held(t_ms)
        e = Event(seq=len(self.log), t_ms=int(t_ms), type=type_, actor=actor,
                  conversation=conversation, payload=payload or {})
        self._fold(e)
        self.log.append(e)

    def _fold(self, e: Event) -> None:
        """Apply one event to the state. The only place state changes."""
        p = e.payload
        if e.type == ev.GAME_STARTED:
            self.format = p["format"]
            self.rules = Rules.model_validate(p["rules"])
            self.started_ms = e.t_ms
            first = INTERROGATOR if self.rules.interrogator_first else None
            self.conversations = {s: _Conversation(turn=first) for s in self.seats}
            self.connected = {s: True for s in (INTERROGATOR, *self.seats)}
        elif e.type == ev.MESSAGE:
            c = self.conversations[e.conversation or "A"]
            role = _role(e.actor)
            c.messages.append(Message(e.seq, e.t_ms, e.actor, p["text"]))
            c.sent[role] += 1
            if role != INTERROGATOR:
                c.held = None
            # strict alternation: the other side writes next; otherwise anyone, once the chat is opened
            c.turn = ("witness" if role == INTERROGATOR else INTERROGATOR) if self.rules.strict_alternation else None
        elif e.type == ev.REFUSED:
            self.refusals += 1
            if p.get("code") == ev.UNDELIVERED and e.conversation in self.conversations:
                self.conversations[e.conversation].held = None
        elif e.type == ev.HELD:
            self.conversations[e.conversation or "A"].held = e.seq
        elif e.type == ev.PASTE:
            self.pastes[e.actor] = self.pastes.get(e.actor, 0) + 1
        elif e.type == ev.TIME_UP:
            self.state = "awaiting_verdict"
            self.closed_ms = e.t_ms
        elif e.type == ev.VERDICT:
            self.verdict = {"choice": p["choice"], "confidence": p["confidence"], "reason": p.get("reason"),
                            "forced": bool(p.get("forced")), "t_ms": e.t_ms}
        elif e.type == ev.ABUSE_REPORT:
            self.flags["abuse_reported"] = True
        elif e.type == ev.LEFT:
            self.connected[e.actor] = False
            if e.actor != INTERROGATOR:
                self.flags["witness_left"] = True
                if self.state == "in_progress":
                    self.state = "awaiting_verdict"
                    self.closed_ms = e.t_ms
        elif e.type in (ev.DISCONNECTED, ev.RECONNECTED):
            self.connected[e.actor] = e.type == ev.RECONNECTED
        elif e.type == ev.GAME_ENDED:
            self.state = "ended"
            self.end_reason = p["reason"]
            self.ended_ms = e.t_ms
        elif e.type == ev.BELIEF:
            self.belief = {"value": int(p["value"]), "after_seq": int(p["after_seq"]), "seq": e.seq}
        elif e.type in (ev.TYPING, ev.FLAG):  # FLAG: a researcher's annotation, not part of play
            pass
        else:
            raise GameError(f"unknown event type {e.type!r} at seq {e.seq}")


def _visible(text: str) -> bool:
    """Whether the text shows anything (turinglab.textnorm, the content filter's normalisation):
    not only white space, format characters, variation selectors, blank glyphs (Hangul fillers,
    the Braille blank) or marks with no letter."""
    return not is_blank(text)


def _role(seat: str) -> str:
    return INTERROGATOR if seat == INTERROGATOR else "witness"


def _actor(a: Action) -> str:
    seat = getattr(a, "seat", SYSTEM)
    return seat if seat in (INTERROGATOR, *WITNESS_SEATS) else ("unknown" if hasattr(a, "seat") else SYSTEM)


def _conversation_of(a: Action) -> str | None:
    conv = getattr(a, "conversation", None)
    return conv if conv in WITNESS_SEATS else None


def _attempt(a: Action) -> dict[str, Any]:
    """The content of a refused attempt, kept for the record."""
    out: dict[str, Any] = {}
    seat = getattr(a, "seat", None)
    if seat is not None and seat not in (INTERROGATOR, *WITNESS_SEATS):
        out["seat"] = str(seat)[:50]
    conv = getattr(a, "conversation", None)
    if conv is not None and conv not in WITNESS_SEATS:
        out["conversation"] = str(conv)[:50]
    if isinstance(a, (Send, Hold)):
        text = a.text if isinstance(a.text, str) else repr(a.text)
        # a bounded prefix and the length: a flood of long refused texts cannot fill the log
        return {**out, "text": text[:MAX_REFUSED_TEXT], "length": len(text)}
    if isinstance(a, Belief):
        return {"value": a.value if isinstance(a.value, int) else str(a.value)[:50],
                "after_seq": a.after_seq if isinstance(a.after_seq, int) else None}
    if isinstance(a, GiveVerdict):
        return {"choice": str(a.choice)[:50], "confidence": a.confidence if isinstance(a.confidence, int) else
                str(a.confidence)[:50], "reason": _clip(a.reason if isinstance(a.reason, str) else None)}
    return out


def _clip(text: str | None, n: int = MAX_REASON_CHARS) -> str | None:
    return text[:n] if isinstance(text, str) else None
