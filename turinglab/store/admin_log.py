"""The researchers' actions on a running study (issue 27), one row each in `admin_actions`.

The rows are the study's recruitment state too: paused or not (the last pause/resume), who is
blocked (block/unblock per participant), and the games whose end was asked for (end_game; the
server that runs the game ends it). Every worker of a cluster reads the same rows.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sqlalchemy import or_, select

from turinglab.store.counting import not_counting
from turinglab.store.db import StoreError
from turinglab.store.models import AdminActionRow, GameRow, GameSeatRow, ParticipantRow

ACTIONS = ("end_game", "remove", "block", "unblock", "pause", "resume")
MAX_REASON = 500


@dataclass(frozen=True)
class AdminAction:
    id: int
    study_id: int
    t_ms: int
    researcher: str
    action: str
    target: str | None
    reason: str | None


def record(store: Any, study_id: int, researcher: str, action: str, target: str | None,
           reason: str | None, t_ms: int) -> AdminAction:
    """Store one action; a bad one raises StoreError saying what to change."""
    if action not in ACTIONS:
        raise StoreError(f"unknown admin action {action!r}; use one of {', '.join(ACTIONS)}")
    if not researcher or len(researcher) > 64:
        raise StoreError("the researcher's account name is missing or longer than 64 characters")
    reason = (reason or "").strip() or None
    if reason is not None and len(reason) > MAX_REASON:
        raise StoreError(f"the reason has {len(reason)} characters; shorten it to at most {MAX_REASON}")
    if action in ("end_game", "remove", "block") and reason is None:
        raise StoreError(f"{action.replace('_', ' ')} needs a reason (it is kept with the action)")
    with store._tx() as s:
        row = AdminActionRow(study_id=study_id, t_ms=int(t_ms), researcher=researcher, action=action,
                             target=target, reason=reason)
        s.add(row)
        s.flush()
        return _info(row)


def actions(store: Any, study_id: int, after_id: int = 0) -> list[AdminAction]:
    """The study's actions with an id above `after_id`, oldest first."""
    with store._tx() as s:
        rows = s.scalars(select(AdminActionRow).where(AdminActionRow.study_id == study_id,
                                                      AdminActionRow.id > after_id).order_by(AdminActionRow.id))
        return [_info(r) for r in rows]


def same_prolific_id(store: Any, prolific_pid: str, study: str | None = None,
                     studies: tuple[str, ...] | None = None) -> list[str]:
    """Every participant id with this Prolific id, oldest first (a second browser is a new
    participant); `study`: of that study only (and those stored before participants had one);
    `studies`: of any of those studies."""
    q = select(ParticipantRow.id).where(ParticipantRow.prolific_pid == prolific_pid)
    if study is not None:
        q = q.where(or_(ParticipantRow.study == study, ParticipantRow.study.is_(None)))
    if studies is not None:
        q = q.where(ParticipantRow.study.in_(studies))
    with store._tx() as s:
        return list(s.scalars(q.order_by(ParticipantRow.created_ms, ParticipantRow.id)))


def belongs(participant: Any, study: str) -> bool:
    """Whether a participant may use the pages of `study` ("live:NAME"): created by its link, or
    stored before participants had a study."""
    return participant.study is None or participant.study == study


def blocked(store: Any, study_id: int) -> set[str]:
    """The participants the study's researchers blocked (and did not unblock since)."""
    out: set[str] = set()
    for r in actions(store, study_id):
        if r.action == "block" and r.target:
            out.add(r.target)
        elif r.action == "unblock" and r.target:
            out.discard(r.target)
    return out


def counts(store: Any, study_id: int, rule: tuple[int, float] = (1, 0.0)) -> tuple[int, set[str]]:
    """The study's games that count (turinglab/store/counting.py: games in progress included, bot,
    demo, researcher-ended and too short games left out) and the participants who played in them
    (any seat): what the study file's `stop_after` quotas count."""
    skip = not_counting(store, study_id, rule)
    with store._tx() as s:
        games = [(gid, flags, i) for gid, flags, i in s.execute(
            select(GameRow.id, GameRow.flags, GameRow.interrogator_id).where(GameRow.study_id == study_id))
            if gid not in skip]
        ids = {gid for gid, _, _ in games}
        people = {i for _, _, i in games if i}
        seats = s.execute(select(GameSeatRow.game_id, GameSeatRow.participant_id)
                          .join(GameRow, GameRow.id == GameSeatRow.game_id)
                          .where(GameRow.study_id == study_id, GameSeatRow.participant_id.is_not(None)))
        people |= {pid for gid, pid in seats if gid in ids}
    return len(ids), people


def _info(r: AdminActionRow) -> AdminAction:
    return AdminAction(r.id, r.study_id, r.t_ms, r.researcher, r.action, r.target, r.reason)
