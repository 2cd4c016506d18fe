"""Load a study's stored games into the tidy tables of `schema` (plus messages and tags)."""

from __future__ import annotations

from contextlib import contextmanager
from dataclasses import dataclass

import numpy as np
import pandas as pd

from turinglab.analysis.live.flags import flag_table, hand_flags
from turinglab.analysis.live.sources import add_reply_columns
from turinglab.game import survey
from turinglab.game.events import judged_human
from turinglab.analysis.live.schema import (
    FLAG_PREFIX, JUDGEMENT_COLUMNS, PARTICIPANT_COLUMNS, TAG_COLUMNS, coerce, empty, validate_judgements,
)



@dataclass
class Loaded:
    study_id: int
    study_name: str
    format: str
    exclusions: tuple[str, ...]  # the study's configured default exclusions
    judgements: pd.DataFrame
    participants: pd.DataFrame
    messages: pd.DataFrame
    tags: pd.DataFrame
    games_without_verdict: int
    games: pd.DataFrame  # one row per stored game (with or without a verdict), flags as stored
    verdicts: pd.DataFrame  # one row per verdict, as given (choice, confidence, reason, correct, forced)
    witness_specs: tuple = ()  # the study file's AI witnesses (codename, kind, model), played or not
    pass_decisions: str = "holm"  # the study file's pass_decisions (see analysis.passes)
    beliefs: pd.DataFrame | None = None  # the interrogators' belief moves (issue 29; analysis.belief.BELIEF_COLUMNS)
    language: str = "en"  # the study's language (issue 39): its pages, its LLM witnesses' chat
    personas: dict | None = None  # game_id -> the words of its witnesses' drawn personas (name, city, state)
    closed_criterion: bool = True  # the study file's criteria.closed (three-player pass criterion)


class LoadError(ValueError):
    pass


def pick_study(store, study: str | int | None):
    studies = store.studies()
    if not studies:
        raise LoadError("the database has no studies; run a study first or try `turinglab demo-data`")
    listing = "; ".join(f"{s.id} ({s.name} v{s.version})" for s in studies)
    if study is None:
        with_games = [s for s in studies if store.has_games(s.id)]
        if len(with_games) == 1:
            return with_games[0]
        raise LoadError(f"several studies in the database; choose one with --study ID: {listing}")
    for s in studies:
        if str(s.id) == str(study):
            return s
    named = [s for s in studies if s.name == str(study)]
    if named:
        return max(named, key=lambda s: s.version)
    raise LoadError(f"no study {study!r} in the database; studies: {listing}")


def _messages(store, game_ids: list[str], kinds: dict[tuple[str, str], str] | None = None) -> pd.DataFrame:
    """The games' messages; `source` who wrote each (events.source_of; `kinds`: (game, seat) -> the
    seat's kind, for messages stored before sources were recorded; 'interrogator' for theirs)."""
    from sqlalchemy import select

    from turinglab.game.events import source_of
    from turinglab.store.api import readable
    from turinglab.store.models import EventRow

    kinds = kinds or {}

    rows = []
    with store.engine.connect() as conn:
        for i in range(0, len(game_ids), 500):
            chunk = game_ids[i:i + 500]
            q = select(EventRow.game_id, EventRow.seq, EventRow.t_ms, EventRow.actor, EventRow.conversation,
                       EventRow.payload).where(EventRow.type == "message", EventRow.game_id.in_(chunk))
            rows += [(g, s, t, a, c or "A", readable((p or {}).get("text", "")),
                      "interrogator" if a == "interrogator" else source_of(p or {}, kinds.get((g, a))))
                     for g, s, t, a, c, p in conn.execute(q)]
    return pd.DataFrame(rows, columns=["game_id", "seq", "t_ms", "actor", "conversation", "text", "source"]).sort_values(
        ["game_id", "seq"], kind="stable").reset_index(drop=True)


def _personas(store, game_ids: list[str]) -> dict[str, tuple[str, ...]]:
    """The drawn personas' words of each game (from `game_started`): not personal data, kept by `--redact`."""
    from sqlalchemy import select

    from turinglab.store.models import EventRow

    out: dict[str, tuple[str, ...]] = {}
    with store.engine.connect() as conn:
        for i in range(0, len(game_ids), 500):
            q = select(EventRow.game_id, EventRow.payload).where(EventRow.type == "game_started",
                                                                 EventRow.game_id.in_(game_ids[i:i + 500]))
            for g, p in conn.execute(q):
                words = []
                for persona in ((p or {}).get("personas") or {}).values():
                    if isinstance(persona, dict):
                        words += [str(persona.get("name") or "")] + [w.strip() for w in str(persona.get("city") or "").split(",")]
                if any(words):
                    out[g] = tuple(w for w in words if w)
    return out


def _beliefs(store, game_ids: list[str]) -> pd.DataFrame:
    """The `belief` events of these games (study setting rules.belief_tracking), one row per move."""
    from sqlalchemy import select

    from turinglab.analysis.live.belief import BELIEF_COLUMNS
    from turinglab.store.models import EventRow

    rows = []
    with store.engine.connect() as conn:
        for i in range(0, len(game_ids), 500):
            q = select(EventRow.game_id, EventRow.seq, EventRow.t_ms, EventRow.conversation, EventRow.payload).where(
                EventRow.type == "belief", EventRow.game_id.in_(game_ids[i:i + 500]))
            rows += [(g, s, t, c or "A", int(p["value"]), int(p["after_seq"])) for g, s, t, c, p in conn.execute(q)]
    return pd.DataFrame(rows, columns=list(BELIEF_COLUMNS)).astype(
        {c: t for c, (t, _) in BELIEF_COLUMNS.items()}).sort_values(["game_id", "seq"], kind="stable").reset_index(drop=True)


def participants_table(infos) -> pd.DataFrame:
    rows = []
    for p in infos:
        d = p.demographics or {}
        chat = d.get("chatbot_use", d.get("chatbot_freq"))
        know = d.get("llm_knowledge")
        rows.append({
            "participant_id": p.id,
            "age": int(d["age"]) if d.get("age") is not None else np.nan,  # exported as an integer
            "gender": d.get("gender"),
            "education": d.get("education"),
            "chatbot_freq": survey.ordinal(chat, survey.CHATBOT_USE),
            "llm_knowledge": survey.ordinal(know, survey.LLM_KNOWLEDGE),
            "prior_visits": survey.ordinal(d.get("prior_visits"), survey.PRIOR_VISITS),
            # the consent text agreed to (issue 38.4): its SHA-256, first 16 hex digits
            "consent_version": (getattr(p, "consent_hash", None) or "")[:16] or None,
        })
    if not rows:
        return empty(PARTICIPANT_COLUMNS)
    return coerce(pd.DataFrame(rows), PARTICIPANT_COLUMNS, "participants")


@contextmanager
def read_study(url: str | None, study: str | int | None):  # noqa: ANN201 - Iterator[(Store, StudyInfo)]
    """The store at `url`, opened for reading only (a database that does not exist is a LoadError,
    never created or migrated), and the chosen study; the store is closed on leaving."""
    from turinglab.store import Store, StoreError
    from turinglab.store.db import existing_database

    try:
        store = Store(existing_database(url), upgrade=False)
    except StoreError as exc:
        raise LoadError(str(exc)) from None
    try:
        yield store, pick_study(store, study)
    finally:
        store.close()


def is_demo(flags: dict | None) -> bool:
    """A game of `turinglab serve --demo`: left out of every analysis and export."""
    return bool((flags or {}).get("demo"))


def load(url: str | None = None, study: str | int | None = None, *, include_bots: bool = True) -> Loaded:
    """Read one study from the database at `url` (default: $DATABASE_URL / ./turinglab.db).
    Bot games (flags["bot"], played by `turinglab bots`) come with their flag (column flag_bot): the
    analysis leaves them out of everything but the leaderboard unless asked (`Options.include_bots`);
    `include_bots=False` leaves them out here already. Demo games (flags["demo"], `serve --demo`)
    are never read: they are no study's data.

    Only reads: a database that does not exist is a `LoadError`, never created or migrated."""
    with read_study(url, study) as (store, info):
        games = [g for g in store.games(info.id) if not is_demo(g.flags)
                 and (include_bots or not (g.flags or {}).get("bot"))]
        msgs = _messages(store, [g.id for g in games],
                         {(g.id, seat): ident.kind for g in games for seat, ident in g.seats.items()})
        beliefs = _beliefs(store, [g.id for g in games])
        n_msg = msgs.groupby(["game_id", "conversation"]).size().to_dict() if len(msgs) else {}
        rows, stored_flags = [], []
        no_verdict = 0
        game_rows = [{"game_id": g.id, "study_hash": g.study_hash, "format": g.format,
                      "interrogator_id": g.interrogator_id, "status": g.status, "started_ms": g.started_ms,
                      "ended_ms": g.ended_ms, "end_reason": g.end_reason, "flags": dict(g.flags or {}),
                      "seats": {k: v.kind for k, v in g.seats.items()}} for g in games]
        verdict_rows = [{"game_id": g.id, "choice": g.verdict.choice, "confidence": g.verdict.confidence,
                         "reason": g.verdict.reason or "", "correct": g.verdict.correct, "forced": g.verdict.forced,
                         "t_ms": g.verdict.t_ms} for g in games if g.verdict is not None]
        for g in games:
            v = g.verdict
            if v is None:
                no_verdict += 1
                continue
            for seat, ident in g.seats.items():
                judged = judged_human(g.format, v.choice, seat)
                rows.append({
                    "game_id": g.id, "study": info.name, "format": g.format,
                    "interrogator_id": g.interrogator_id, "seat": seat, "witness_kind": ident.kind,
                    "witness": ident.witness if ident.kind == "ai" else "Human",
                    "witness_participant_id": ident.participant_id, "judged_human": judged,
                    "confidence": float(v.confidence), "correct": v.correct, "reason": v.reason or "",
                    "started_ms": g.started_ms, "ended_ms": v.t_ms if g.ended_ms is None else g.ended_ms,
                    "n_messages": int(n_msg.get((g.id, seat), 0)), "selection_prob": ident.selection_prob,
                    # AI replies the content filter blocked in this game (the model was asked again
                    # or the fallback answered); counted by the store from the log
                    "ai_outputs_blocked": int((g.flags or {}).get("ai_output_blocked", 0) or 0),
                })
                stored_flags.append({FLAG_PREFIX + k: bool(val) for k, val in (g.flags or {}).items()
                                     if isinstance(val, (bool, int)) or val is None})
        if rows:
            df = pd.DataFrame(rows)
            df["duration_s"] = (df["ended_ms"] - df["started_ms"]) / 1000.0
            df = df.sort_values(["interrogator_id", "started_ms", "game_id"], kind="stable")
            first = df.drop_duplicates("game_id")
            idx = first.groupby("interrogator_id").cumcount() + 1
            df["game_index"] = df["game_id"].map(dict(zip(first["game_id"], idx)))
            fl = pd.DataFrame(stored_flags, index=pd.RangeIndex(len(rows))).reindex(df.index).fillna(False)
            stored_knows = fl.get(FLAG_PREFIX + "knows_witness")
            df = flag_table(df, stored_knows=stored_knows)
            for c in fl.columns:  # other stored flags (abuse_reported, witness_left, ...) come along
                if c not in df.columns:
                    df[c] = fl[c].astype(bool)
            df = add_reply_columns(df, msgs)  # replies by source, flag fallback_wrote_reply
            df = hand_flags(df, {g["game_id"]: g["flags"].get("origins") or {} for g in game_rows})
            df = validate_judgements(df).sort_values(["started_ms", "game_id", "seat"], kind="stable").reset_index(drop=True)
        else:
            df = empty(JUDGEMENT_COLUMNS)
        ids = set(df["interrogator_id"].dropna()) | set(df["witness_participant_id"].dropna())
        parts = participants_table([p for p in store.participants() if p.id in ids])
        game_ids = set(df["game_id"])
        tag_rows = [{"game_id": t.game_id, "taxonomy": t.taxonomy, "category": t.category, "tagger": t.tagger}
                    for t in store.tags() if t.game_id in game_ids]
        tags = coerce(pd.DataFrame(tag_rows), TAG_COLUMNS, "tags") if tag_rows else empty(TAG_COLUMNS)
        return Loaded(info.id, info.name, info.study.format, (*info.study.exclusions, "withdrawn"), df, parts, msgs,
                      tags, no_verdict, pd.DataFrame(game_rows), pd.DataFrame(verdict_rows),
                      tuple(info.study.witnesses), getattr(info.study, "pass_decisions", None) or "holm", beliefs,
                      getattr(info.study, "language", "en"), _personas(store, [g.id for g in games]),
                      getattr(getattr(info.study, "criteria", None), "closed", True))
