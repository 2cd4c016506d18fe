"""Frames of the browser <-> server websocket (docs/protocol.md), validated with pydantic."""

from __future__ import annotations

import json
from typing import Annotated, Any, Literal, Union

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, PrivateAttr, TypeAdapter, ValidationError

from turinglab.i18n import N_
from turinglab.textnorm import Seen, see

Conv = Literal["A", "B"]
MAX_FRAME_TEXT = 20_000  # anything larger is not a chat message (the study limit is far lower)


def storable(s: str) -> bool:
    """Text every database can hold: no NUL character, no unpaired surrogate (not UTF-8)."""
    if "\x00" in s:
        return False
    try:
        s.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


NOT_STORABLE = "the text contains a NUL character or an unpaired surrogate, which cannot be stored"


def _storable(s: str) -> str:
    if not storable(s):
        raise ValueError(NOT_STORABLE)
    return s


Text = Annotated[str, AfterValidator(_storable)]  # every text field of every frame


class _In(BaseModel):
    # strict: confidence "50" or true is not 50 or 1; text is a JSON string, nothing else
    model_config = ConfigDict(extra="forbid", strict=True)


class JoinIn(_In):
    type: Literal["join"]


class LeaveQueueIn(_In):
    type: Literal["leave_queue"]


class MessageIn(_In):
    type: Literal["message"]
    conv: Conv | None = None
    text: Annotated[Text, Field(max_length=MAX_FRAME_TEXT)]
    client_id: Annotated[Text, Field(min_length=1, max_length=64)]
    _seen: Seen | None = PrivateAttr(default=None)

    @property
    def seen(self) -> Seen:
        """What a reader sees of the text (textnorm), computed once at the boundary by `parse`."""
        if self._seen is None:
            self._seen = see(self.text)
        return self._seen


class PasteIn(_In):
    type: Literal["paste"]
    conv: Conv | None = None
    length: Annotated[int, Field(ge=0, le=10**7)] = 0


class VerdictIn(_In):
    type: Literal["verdict"]
    choice: Annotated[Text, Field(max_length=20)]
    confidence: Annotated[int, Field(ge=-10**6, le=10**6)]  # the study's range is checked by the engine
    reason: Annotated[Text | None, Field(max_length=2000)] = None


class BeliefIn(_In):
    """The belief slider (a study with `rules.belief_tracking`): `after` is the id of the witness
    reply the move follows, as in its `message` frame."""

    type: Literal["belief"]
    value: Annotated[int, Field(ge=0, le=100)]
    after: Annotated[Text, Field(min_length=1, max_length=64)]


class ReportIn(_In):
    type: Literal["report"]
    reason: Annotated[Text | None, Field(max_length=2000)] = None


class PingIn(_In):
    type: Literal["ping"]


Inbound = Annotated[
    Union[JoinIn, LeaveQueueIn, MessageIn, PasteIn, VerdictIn, BeliefIn, ReportIn, PingIn], Field(discriminator="type")
]
_adapter: TypeAdapter[Any] = TypeAdapter(Inbound)
TYPES = ("join", "leave_queue", "message", "paste", "verdict", "belief", "report", "ping")
_PING = PingIn(type="ping")


class BadFrame(ValueError):
    """A frame that is not valid JSON or does not match the protocol; the text says why.
    `client_id`: the frame's own, when it had a usable one (the browser puts the text back)."""

    def __init__(self, message: str, client_id: str | None = None, code: str = "bad_frame") -> None:
        super().__init__(message)
        self.client_id = client_id
        self.code = code  # the error frame's code: bad_frame, or bad_verdict for a verdict's fields


_MESSAGE_KEYS = frozenset({"type", "conv", "text", "client_id"})


def _fast_message(data: dict) -> MessageIn | None:
    """A well-formed chat message without pydantic's machinery (the hot path), or None to validate
    it in full. Accepts exactly what `MessageIn` accepts (anything unusual takes the full path)."""
    if not data.keys() <= _MESSAGE_KEYS:
        return None
    text, cid, conv = data.get("text"), data.get("client_id"), data.get("conv")
    if (type(text) is str and len(text) <= MAX_FRAME_TEXT and type(cid) is str and 1 <= len(cid) <= 64
            and conv in (None, "A", "B") and storable(text) and storable(cid)):
        return MessageIn.model_construct(type="message", conv=conv, text=text, client_id=cid)
    return None


def parse(raw: str) -> BaseModel:
    """The validated frame, or BadFrame with a short explanation for the sender."""
    try:
        data = json.loads(raw)
    except (json.JSONDecodeError, TypeError):
        raise BadFrame("the frame is not valid JSON") from None
    except (ValueError, RecursionError):  # an integer of thousands of digits; nesting too deep
        raise BadFrame("the frame is not a protocol frame (a number too long or nesting too deep)") from None
    if type(data) is dict:
        t = data.get("type")
        if t == "message":
            fast = _fast_message(data)
            if fast is not None:
                fast._seen = see(fast.text)
                return fast
        elif t == "ping" and len(data) == 1:
            return _PING
    if not isinstance(data, dict) or data.get("type") not in TYPES:
        got = data.get("type") if isinstance(data, dict) else type(data).__name__
        raise BadFrame(f"unknown frame type {str(got)[:40]!r}; expected one of: {', '.join(TYPES)}")
    try:
        frame = _adapter.validate_python(data)
    except ValidationError as exc:
        parts = []
        for err in exc.errors()[:3]:
            loc = ".".join(str(x) for x in err["loc"][1:]) or "frame"
            parts.append(f"{loc}: {err['msg']}")
        cid = data.get("client_id")
        cid = cid if type(cid) is str and 1 <= len(cid) <= 64 and storable(cid) else None
        # a verdict whose choice or confidence is not a usable answer is a bad verdict (text no
        # database can hold, or a field of another frame, stays a bad frame)
        fields = {str(e["loc"][1]) if len(e["loc"]) > 1 else "" for e in exc.errors()}
        answer = fields <= {"choice", "confidence"} and not any(NOT_STORABLE in e["msg"] for e in exc.errors())
        code = "bad_verdict" if data["type"] == "verdict" and answer else "bad_frame"
        if data["type"] == "belief" and fields <= {"value", "after"} and not any(NOT_STORABLE in e["msg"] for e in exc.errors()):
            code = "bad_belief"
        raise BadFrame(f"bad {data['type']!r} frame: " + "; ".join(parts), cid, code) from None
    if isinstance(frame, MessageIn):
        frame._seen = see(frame.text)  # the same normalisation as the fast path
    return frame


def client_id_of(raw: str) -> str | None:
    """The usable `client_id` of a frame that could not be handled (rate limit, server error), so
    the browser puts the message back in its box instead of showing it pending for good."""
    try:
        data = json.loads(raw)
    except (ValueError, TypeError, RecursionError):
        return None
    cid = data.get("client_id") if type(data) is dict else None
    return cid if type(cid) is str and 1 <= len(cid) <= 64 and storable(cid) else None


def error(code: str, message: str, client_id: str | None = None) -> dict[str, Any]:
    return {"type": "error", "code": code, "message": message, "client_id": client_id}


# Texts of the errors this server writes itself. Engine refusals carry the engine's detail.
TEXTS = {
    "not_in_game": N_("You are not in a game right now."),
    "no_consent": N_("Please read and accept the consent form first: reload the page."),
    "blocked": N_("This message was blocked by the content filter and was not sent. Please rephrase."),
    "not_your_turn": N_("Wait for the reply before sending another message."),
    "in_game": N_("You are already in a game."),
    "store_unavailable": N_("The study's database is not responding, so nothing can be saved just now. "
                            "Your last action was not saved: please wait a moment and try again."),
    "client_id_reused": N_("This message id was already used for another message: reload the page and send it again."),
    "start_failed": N_("The game could not be started. Please press \"Find a game\" again."),
    "busy": N_("busy, retrying: the server is catching up. Wait a moment; a message comes back to its box to send again."),
}


class Busy(Exception):
    """The server cannot take this connection now (its Redis pool is exhausted, Redis is away, or the
    worker is still joining its cluster): the client gets `error/busy` and a close it retries."""
