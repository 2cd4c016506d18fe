"""A participant's withdrawal (issue 38): erase what they wrote and who they are, keep the
shape of every game.

`withdraw(store, pid, reason, who)` in one transaction: the participant row is replaced by a
placeholder (`W…`, label "withdrawn", no Prolific ids, no demographics) that every game, seat,
judge session and trial now names; their events keep their place (seq, time, type, actor) but
their text is gone and the payload says `"withdrawn": true`, so every game still replays; their
verdicts lose their reason; the games they judged get the flag `withdrawn` (left out of analyses
by default) and the games they were a witness in `witness_withdrawn`. Games not yet ended get an
`end_game` request (the server running them ends them); whatever such a server writes later is
erased on the way in (`Store.plan_append` reads the game's `withdrawn_seats`). The log
`withdrawals` keeps who asked, when and why, never what was erased.
"""

from __future__ import annotations

import hashlib
import secrets
from dataclasses import dataclass
from typing import Any

from sqlalchemy import bindparam, select, update

from turinglab.game import events as ev
from turinglab.store.db import StoreError, UnknownId, now_ms
from turinglab.store.models import (
    AdminActionRow, EventRow, GameRow, GameSeatRow, JudgeSessionRow, JudgeTrialRow, ParticipantRow, StudyRow,
    VerdictRow, WithdrawalRow,
)

MARK = "withdrawn"
SEATS_FLAG = "withdrawn_seats"  # game flag: {actor: placeholder id} of the withdrawn players
KEEP_TEXT = ("choice", "code", "action")  # short codes the engine replays, never a participant's words
MAX_REASON = 500


@dataclass(frozen=True)
class Withdrawal:
    id: int
    t_ms: int
    who: str
    reason: str
    placeholder: str
    study: str | None
    games: int
    gone: str = ""


def scrub(payload: dict[str, Any]) -> dict[str, Any]:
    """An event payload of a withdrawn player: numbers, flags and replay codes stay, text is
    emptied (a verdict's reason becomes None), anything nested goes; marked withdrawn."""
    out: dict[str, Any] = {}
    for k, v in (payload or {}).items():
        if v is None or isinstance(v, (bool, int, float)):
            out[k] = v
        elif isinstance(v, str):
            out[k] = v if k in KEEP_TEXT else (None if k == "reason" else "")
    out[MARK] = True
    return out


def scrub_answers(answers: dict[str, Any]) -> dict[str, Any]:
    """A static trial's answers of a withdrawn judge: codes (short words) and numbers stay."""
    out = {k: v for k, v in (answers or {}).items()
           if v is None or isinstance(v, (bool, int, float)) or (isinstance(v, str) and len(v) <= 20 and " " not in v)}
    out[MARK] = True
    return out


def renamed(identity: dict[str, dict[str, Any]], seats: dict[str, str]) -> dict[str, dict[str, Any]]:
    """`identity` (seat -> identity) with each withdrawn seat's participant id replaced by its placeholder."""
    return {s: ({**i, "participant_id": seats[s]} if s in seats and i.get("participant_id") else i)
            for s, i in identity.items()}


def withdraw(store: Any, participant_id: str, reason: str, who: str, t_ms: int | None = None) -> Withdrawal:
    """Erase the participant `participant_id` (see the module's doc); StoreError says what was wrong."""
    reason = (reason or "").strip()
    if not reason:
        raise StoreError("a withdrawal needs a reason (--reason); it is kept in the withdrawal log")
    if len(reason) > MAX_REASON:
        raise StoreError(f"the reason has {len(reason)} characters; shorten it to at most {MAX_REASON}")
    if not who or len(who) > 64:
        raise StoreError("say who asks for the withdrawal (a researcher's name of at most 64 characters)")
    t = now_ms() if t_ms is None else int(t_ms)
    new = "W" + secrets.token_hex(8)
    with store._tx() as s:
        old = s.get(ParticipantRow, participant_id)
        if old is None:
            raise UnknownId(f"no participant with id {participant_id!r}")
        s.add(ParticipantRow(id=new, label=MARK, prolific_pid=None, prolific_study_id=None,
                             prolific_session_id=None, consent_ms=None, demographics={}, created_ms=old.created_ms,
                             study=old.study))
        s.flush()
        seat_rows = s.execute(select(GameSeatRow.game_id, GameSeatRow.seat)
                              .where(GameSeatRow.participant_id == participant_id)).all()
        game_ids = sorted({g for g, _ in seat_rows} | set(s.scalars(
            select(GameRow.id).where(GameRow.interrogator_id == participant_id))))
        games = {g.id: g for g in s.scalars(select(GameRow).where(GameRow.id.in_(game_ids))
                                            .order_by(GameRow.id).with_for_update())} if game_ids else {}
        actors: dict[str, dict[str, str]] = {g: {} for g in games}
        for g in games.values():
            if g.interrogator_id == participant_id:
                actors[g.id][ev.INTERROGATOR] = new
        for g, seat in seat_rows:
            actors[g][seat] = new
        _erase_events(s, actors)
        s.execute(update(GameSeatRow).where(GameSeatRow.participant_id == participant_id).values(participant_id=new))
        configs = dict(s.execute(select(StudyRow.id, StudyRow.config).where(
            StudyRow.id.in_({g.study_id for g in games.values()}))).all()) if games else {}
        for g in games.values():
            judged = ev.INTERROGATOR in actors[g.id]
            flags = dict(g.flags or {})
            flags[SEATS_FLAG] = {**flags.get(SEATS_FLAG, {}), **actors[g.id]}
            flags["withdrawn" if judged else "witness_withdrawn"] = True
            if ((configs.get(g.study_id) or {}).get("withdrawal") or {}).get("witness_games") == "exclude":
                flags["withdrawn"] = True  # the study leaves out their witness games too
            g.flags = flags
            if judged:
                g.interrogator_id = new
                s.execute(update(VerdictRow).where(VerdictRow.game_id == g.id).values(reason=None))
            if g.status != "ended":  # the server running it ends it (turinglab/server/live/recruitment.py)
                s.add(AdminActionRow(study_id=g.study_id, t_ms=t, researcher=who[:64], action="end_game",
                                     target=g.id, reason="a participant withdrew"))
        _erase_static(s, participant_id, new)
        s.execute(update(AdminActionRow).where(AdminActionRow.target == participant_id).values(target=new))
        s.flush()
        s.delete(old)
        row = WithdrawalRow(t_ms=t, who=who, reason=reason, placeholder=new, study=old.study, games=len(games),
                            gone=gone_hash(participant_id))
        s.add(row)
        s.flush()
        store._seat_cache.clear()
        return _info(row)


def _erase_events(s: Any, actors: dict[str, dict[str, str]]) -> None:
    """Each game's events: the withdrawn players' payloads erased, every identity renamed."""
    changes = []
    for gid, seats in actors.items():
        for rid, actor, payload, identity in s.execute(select(EventRow.id, EventRow.actor, EventRow.payload,
                                                              EventRow.identity).where(EventRow.game_id == gid)):
            new_payload = scrub(payload) if actor in seats else payload
            new_identity = renamed(identity or {}, seats)
            if new_payload != payload or new_identity != identity:
                changes.append({"rid": rid, "p": new_payload, "i": new_identity})
    if changes:
        t = EventRow.__table__
        s.connection().execute(update(t).where(t.c.id == bindparam("rid")).values(
            payload=bindparam("p"), identity=bindparam("i")), changes)


def _erase_static(s: Any, old: str, new: str) -> None:
    s.execute(update(JudgeSessionRow).where(JudgeSessionRow.judge_id == old).values(judge_id=new))
    rows = s.execute(select(JudgeTrialRow.id, JudgeTrialRow.answers).where(JudgeTrialRow.judge_id == old)).all()
    if rows:
        t = JudgeTrialRow.__table__
        s.connection().execute(update(t).where(t.c.id == bindparam("rid")).values(
            judge_id=new, answers=bindparam("a")), [{"rid": r, "a": scrub_answers(a)} for r, a in rows])


def withdrawn_judges(conn: Any, study_id: int) -> list[str]:
    """The placeholder ids of a static study's judges who withdrew (their trials keep their place)."""
    q = (select(JudgeTrialRow.judge_id).distinct()
         .where(JudgeTrialRow.study_id == study_id, JudgeTrialRow.judge_id.in_(select(WithdrawalRow.placeholder))))
    return sorted(conn.execute(q).scalars())


def kept_trials(conn: Any, study_id: int, exclude: tuple[str, ...] = (MARK,)) -> list[Any]:
    """Where-clauses that leave a static study's withdrawn judges' trials out of an analysis: the
    flag `withdrawn` in `exclude` (the default) leaves them out, `exclude=()` keeps them."""
    if MARK not in exclude:
        return []
    ids = withdrawn_judges(conn, study_id)
    return [JudgeTrialRow.judge_id.not_in(ids)] if ids else []


def gone_hash(participant_id: str) -> str:
    """What a running server compares its participants with: the erased id, hashed."""
    return hashlib.sha256(b"withdrawn:" + participant_id.encode()).hexdigest()


def withdrawals(store: Any, after_id: int = 0) -> list[Withdrawal]:
    """The withdrawal log (entries with an id above `after_id`), oldest first."""
    with store._tx() as s:
        return [_info(r) for r in s.scalars(select(WithdrawalRow).where(WithdrawalRow.id > after_id)
                                            .order_by(WithdrawalRow.id))]


def _info(r: WithdrawalRow) -> Withdrawal:
    return Withdrawal(r.id, r.t_ms, r.who, r.reason, r.placeholder, r.study, r.games, r.gone)

