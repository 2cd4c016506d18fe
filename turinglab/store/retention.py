"""Retention (issue 38.2): what a study's `retention` settings say must go, and `purge`, which
erases it (`turinglab db purge`; a dry run unless asked, safe to run from cron: it only ever
erases what is due, and running it twice changes nothing the second time).

- `payment_ids_days`: the raw Prolific participant, study and session ids of a participant are
  erased that many days after their last game of the study (their last bonus is for that game),
  or after they arrived if they played none;
- `raw_chat_days`: the chat, verdict reasons and abuse reports of a game are redacted
  (turinglab/witnesses/redact.py: typed placeholders, the persona's drawn name and town kept)
  that many days after it ended; its events keep their place, marked `"redacted": true`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import bindparam, select, update

from turinglab.game import events as ev
from turinglab.game.config import Study
from turinglab.store.db import now_ms
from turinglab.store.models import EventRow, GameRow, GameSeatRow, ParticipantRow, StudyRow, VerdictRow

DAY_MS = 86_400_000
REDACTED = "chat redacted"  # games.flags["retention"] once a game's chat is redacted (not an exclusion flag)
_TEXT_KEYS = ("text", "reason")


@dataclass
class Due:
    study: str
    payment_ids_days: int | None
    raw_chat_days: int | None
    participants: list[str] = field(default_factory=list)  # raw Prolific ids to erase
    games: list[str] = field(default_factory=list)  # raw chat to redact
    kept_ids: int = 0  # participants whose raw ids are still kept
    kept_chat: int = 0  # ended games whose raw chat is still kept


def due(store: Any, t_ms: int | None = None) -> list[Due]:
    """What each live study's retention settings say must go by `t_ms` (default: now)."""
    t = now_ms() if t_ms is None else t_ms
    out = []
    with store._tx() as s:
        latest: dict[str, StudyRow] = {}
        for r in s.scalars(select(StudyRow).order_by(StudyRow.version)):
            latest[r.name] = r
        for name, row in latest.items():
            ret = Study.model_validate(row.config).retention
            if ret is None or (ret.payment_ids_days is None and ret.raw_chat_days is None):
                continue
            ids = [i for (i,) in s.execute(select(StudyRow.id).where(StudyRow.name == name))]
            games = s.execute(select(GameRow.id, GameRow.interrogator_id, GameRow.started_ms, GameRow.ended_ms,
                                     GameRow.status, GameRow.flags).where(GameRow.study_id.in_(ids))).all()
            d = Due(name, ret.payment_ids_days, ret.raw_chat_days)
            if ret.raw_chat_days is not None:
                for g in games:
                    if g.status != "ended" or (g.flags or {}).get("retention") == REDACTED:
                        continue
                    if g.ended_ms is not None and g.ended_ms + ret.raw_chat_days * DAY_MS <= t:
                        d.games.append(g.id)
                    else:
                        d.kept_chat += 1
            if ret.payment_ids_days is not None:
                last: dict[str, int] = {}
                for g in games:
                    for pid in [g.interrogator_id]:
                        if pid:
                            last[pid] = max(last.get(pid, 0), g.ended_ms or g.started_ms)
                seats = s.execute(select(GameSeatRow.participant_id, GameRow.started_ms, GameRow.ended_ms)
                                  .join(GameRow, GameRow.id == GameSeatRow.game_id)
                                  .where(GameRow.study_id.in_(ids), GameSeatRow.participant_id.is_not(None)))
                for pid, started, ended in seats:
                    last[pid] = max(last.get(pid, 0), ended or started)
                people = s.execute(select(ParticipantRow.id, ParticipantRow.created_ms).where(
                    (ParticipantRow.study == f"live:{name}") | ParticipantRow.id.in_(list(last)),
                    (ParticipantRow.prolific_pid.is_not(None)) | (ParticipantRow.prolific_study_id.is_not(None))
                    | (ParticipantRow.prolific_session_id.is_not(None))))
                for pid, created in people:
                    if last.get(pid, created) + ret.payment_ids_days * DAY_MS <= t:
                        d.participants.append(pid)
                    else:
                        d.kept_ids += 1
            out.append(d)
    return out


def purge(store: Any, plan: list[Due]) -> tuple[int, int]:
    """Erase what `plan` lists: (participants whose raw ids went, games whose chat was redacted)."""
    n_ids = n_games = 0
    for d in plan:
        with store._tx() as s:
            if d.participants:
                n_ids += s.execute(update(ParticipantRow).where(ParticipantRow.id.in_(d.participants)).values(
                    prolific_pid=None, prolific_study_id=None, prolific_session_id=None)).rowcount or 0
        for gid in d.games:
            with store._tx() as s:
                n_games += _redact_game(s, gid)
    return n_ids, n_games


def _redact_game(s: Any, gid: str) -> int:
    from turinglab.witnesses.redact import redact

    game = s.scalars(select(GameRow).where(GameRow.id == gid).with_for_update()).one()
    if (game.flags or {}).get("retention") == REDACTED:
        return 0
    rows = s.execute(select(EventRow.id, EventRow.type, EventRow.payload).where(EventRow.game_id == gid)
                     .order_by(EventRow.seq)).all()
    keep: tuple[str, ...] = ()
    changes = []
    for rid, type_, payload in rows:
        p = dict(payload or {})
        if type_ == ev.GAME_STARTED:
            for persona in (p.get("personas") or {}).values():
                keep += (str(persona.get("name") or ""), *[w.strip() for w in str(persona.get("city") or "").split(",")])
            continue
        if type_ == ev.GAME_ENDED or not any(isinstance(p.get(k), str) and p.get(k) for k in _TEXT_KEYS):
            continue
        for k in _TEXT_KEYS:
            if isinstance(p.get(k), str) and p[k]:
                p[k] = redact(p[k], keep)
        p["redacted"] = True
        changes.append({"rid": rid, "p": p})
    if changes:
        t = EventRow.__table__
        s.connection().execute(update(t).where(t.c.id == bindparam("rid")).values(payload=bindparam("p")), changes)
    v = s.get(VerdictRow, gid)
    if v is not None and v.reason:
        v.reason = redact(v.reason, keep)
    game.flags = {**(game.flags or {}), "retention": REDACTED}
    return 1
