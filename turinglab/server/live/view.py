"""What one participant of a live game sees (the `game` part of a state frame)."""

from __future__ import annotations

from typing import Any

from turinglab.i18n import N_
from turinglab.game import events as ev
from turinglab.game.events import INTERROGATOR

END_REASONS = {"verdict": "verdict", "abuse_report": "report", "interrogator_left": "left"}
NO_REVEAL = ("researcher",)  # ended by a researcher: no verdict was given, and nobody learns who was who


def participant_view(s: Any, pid: str, now_ms: int) -> dict[str, Any]:
    """What participant `pid` sees of session `s`: their messages (committed ones only; a human
    witness also their own held reply), whose turn it is, and after the end the verdict and reveal."""
    seat = s.seat_of[pid]
    g = s.game
    convs = list(g.seats) if seat == INTERROGATOR else [seat]
    mine = "interrogator" if seat == INTERROGATOR else "witness"
    messages = []
    for c in convs:
        for m in g.conversations[c].messages:
            if m.seq not in s.ids:  # applied, its write not yet committed: not shown yet
                continue
            frm = "you" if (m.sender == INTERROGATOR) == (mine == "interrogator") else "them"
            messages.append({"type": "message", "id": s.ids[m.seq], "conv": c, "from": frm,
                             "text": m.text, "t_ms": m.t_ms})
        h = s.held.get(c)
        if h is not None and seat != INTERROGATOR:
            messages.append({"type": "message", "id": h.id, "conv": c, "from": "you", "text": h.text,
                             "t_ms": h.t_ms})
    messages.sort(key=lambda m: m["t_ms"])
    your_turn = {c: bool(g.may_send(seat, c) and (seat == INTERROGATOR or c not in s.held)) for c in convs}
    ended = g.state == "ended"
    verdict = None
    if g.verdict is not None and ended:
        verdict = {k: g.verdict[k] for k in ("choice", "confidence", "reason")}
    reveal = None
    if ended and g.end_reason not in NO_REVEAL:
        reveal = {"seats": {k: revealed_seat(x) for k, x in s.seats.items()}, "correct": verdict_correct(s)}
    belief = None  # the interrogator's last belief move, so a reloaded page shows its slider where it was
    if seat == INTERROGATOR and s.rules.belief_tracking:
        b = g.belief
        belief = {"value": b["value"], "after": s.ids.get(b["after_seq"])} if b else {"value": None, "after": None}
    return {
        "game_id": s.id,
        "format": g.format,
        "role": "interrogator" if seat == INTERROGATOR else "witness",
        "seat": seat,
        "convs": convs,
        "messages": messages,
        "typing": sorted(s.typing_on) if seat == INTERROGATOR else [],
        "your_turn": your_turn,
        "started_ms": g.started_ms,
        "ends_ms": g.deadline_ms,
        "max_chars": s.rules.max_chars,
        "block_paste": s.rules.block_paste,
        "end_reason": END_REASONS.get(g.end_reason, g.end_reason) if ended else None,
        "verdict": verdict,
        "reveal": reveal,
        "store_away": s.store_away,
        "belief": belief,
    }


def revealed_seat(x: Any) -> dict[str, Any]:
    """A seat as the reveal shows it: its kind, and for an AI seat which witness it was (its codename)
    and what it is ("local model", "ELIZA chatbot", "language model gpt-4o-mini"). Only ever sent
    once the game has ended."""
    out: dict[str, Any] = {"kind": x.identity.kind}
    if x.identity.kind == "ai":
        spec = x.spec
        out["witness"] = x.identity.witness
        out["about"] = witness_about(spec.kind, spec.model) if spec is not None else None
    return out


def witness_about(kind: str, model: str | None) -> str:
    """What an AI witness is, in a participant's words."""
    if kind == "eliza":
        return N_("ELIZA chatbot")
    if kind == "local":  # the embedded model (its `model` may be a file path: not shown)
        return N_("local model")
    return f"language model {model}" if model else N_("language model")  # game.js translates all three


def verdict_correct(s: Any) -> bool | None:
    """Whether the interrogator's verdict of session `s` was right (None: no verdict)."""
    v = s.game.verdict
    if v is None:
        return None
    return ev.verdict_correct(s.game.format, v["choice"], {k: x.identity.kind for k, x in s.seats.items()})
