"""The store API: a small synchronous facade over the database (see docs/architecture.md, "Store API").

Every method runs in its own transaction and returns plain frozen dataclasses, so callers
(the web server from a worker thread, the analysis, the CLI) never hold ORM objects.
"""

from __future__ import annotations

import re
import secrets
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from sqlalchemy import delete, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session, sessionmaker

from turinglab.game import events as ev
from turinglab.game.config import Study, config_hash
from turinglab.game.events import Event, Identity, verdict_correct
from turinglab.store.db import StudyFrozen  # noqa: F401 - re-exported
from turinglab.store.db import StoreError, UnknownId, database_url, make_engine, migrate, now_ms
from turinglab.store.rows import (
    FORMATS,  # noqa: F401 - re-exported
    GameState,
    NewGame,
    _GAMES_FOR_UPDATE,
    _LAST_SEQ,
    _SEATS,
    _UPDATE_GAME,
    _check_seats,
    _chunks,
    duplicate_error,
    group_batches,
    insert_rows,
)
from turinglab.store import withdraw as withdrawn
from turinglab.store.static import StaticMixin
from turinglab.store.versions import register_versioned
from turinglab.store.models import (
    EventRow,
    GameRow,
    GameSeatRow,
    ParticipantRow,
    StudyRow,
    TagRow,
    VerdictRow,
)

FLAG_NAME = re.compile(r"[a-z][a-z0-9_]{0,39}")  # a researcher's flag name (`turinglab flag set`)

_PARTICIPANT_FIELDS = ("label", "prolific_pid", "prolific_study_id", "prolific_session_id", "consent_ms", "consent_hash")


def readable(value: Any) -> Any:
    """`value` (a stored payload) with text no file can hold made safe: an unpaired surrogate or a
    NUL character becomes U+FFFD. The server refuses such text at its boundary; this is for
    whatever an older version stored, so exports, reports and `db show` never fail on it."""
    if isinstance(value, str):
        if "\x00" in value:
            value = value.replace("\x00", "\ufffd")
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            value = value.encode("utf-8", "surrogatepass").decode("utf-8", "replace")
        return value
    if isinstance(value, dict):
        return {k: readable(v) for k, v in value.items()}
    if isinstance(value, list):
        return [readable(v) for v in value]
    return value


@dataclass(frozen=True)
class StudyInfo:
    id: int
    name: str
    version: int
    config_hash: str
    study: Study
    created_ms: int


@dataclass(frozen=True)
class ParticipantInfo:
    id: str
    label: str | None
    prolific_pid: str | None
    prolific_study_id: str | None
    prolific_session_id: str | None
    consent_ms: int | None
    demographics: dict[str, Any]
    created_ms: int
    study: str | None = None  # "live:NAME" / "static:NAME": the study whose link created them (None: any)
    consent_hash: str | None = None  # SHA-256 of the consent text they agreed to (game.config.consent_version)


@dataclass(frozen=True)
class VerdictInfo:
    choice: str
    confidence: int
    reason: str | None
    correct: bool | None
    forced: bool
    t_ms: int


@dataclass(frozen=True)
class GameInfo:
    id: str
    study_id: int
    study_hash: str
    format: str
    interrogator_id: str | None
    status: str
    started_ms: int
    ended_ms: int | None
    end_reason: str | None
    flags: dict[str, Any]
    seats: dict[str, Identity]
    verdict: VerdictInfo | None = None


@dataclass(frozen=True)
class StoredEvent:
    """An event as stored: the engine's event plus the hidden identities and the study hash."""

    game_id: str
    event: Event
    identity: dict[str, dict[str, Any]] = field(default_factory=dict)
    study_hash: str = ""


@dataclass(frozen=True)
class TagInfo:
    id: int
    game_id: str
    tagger: str
    taxonomy: str
    category: str
    t_ms: int


# statements of the append path, built once (building and caching them anew costs more than running them)
class Store(StaticMixin):
    """`Store(url)` opens (and by default migrates) the database named by `database_url(url)`.

    Static Turing tests (judge items and trials) are the methods of `StaticMixin` (store/static.py)."""

    def __init__(self, url: str | None = None, *, upgrade: bool = True) -> None:
        self.url = database_url(url)
        if upgrade:
            migrate(self.url)
        self.engine = make_engine(self.url)
        self._sessions = sessionmaker(self.engine, expire_on_commit=False)
        self._seat_cache: dict[str, tuple[dict[str, dict[str, Any]], str]] = {}

    def close(self) -> None:
        self.engine.dispose()

    def __enter__(self) -> "Store":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _tx(self) -> Any:
        return self._sessions.begin()

    # --- studies ---

    def register_study(self, study: Study, *, new_version: bool = False) -> int:
        """The id of `study`: an existing row if one has the same name and config (its version
        number aside, so re-running a file whose config was stored with `new_version` finds it).

        If the same name and version is stored under another hash: updated in place while it
        has no games; with games, `StudyFrozen` (or, with `new_version=True`, a new row with
        the next free version number).
        """
        try:
            return self._register_study(study, new_version)
        except IntegrityError:  # another process registered the same name and version just now
            return self._register_study(study, new_version)

    def _register_study(self, study: Study, new_version: bool) -> int:
        def frozen(n_games: int, stored: str, next_free: int) -> str:
            return (f"study {study.name!r} version {study.version} already has {n_games} game(s) under "
                    f"config {stored[:12]}; its config can no longer change. Raise `version:` "
                    f"in the study file (next free: {next_free}) or pass new_version=True (--new-version).")

        with self._tx() as s:
            return register_versioned(s, StudyRow, GameRow, study, new_version, config_hash, frozen)

    def get_study(self, study_id: int) -> StudyInfo:
        with self._tx() as s:
            row = s.get(StudyRow, study_id)
            if row is None:
                raise UnknownId(f"no study with id {study_id}")
            return _study_info(row)

    def studies(self) -> list[StudyInfo]:
        with self._tx() as s:
            return [_study_info(r) for r in s.scalars(select(StudyRow).order_by(StudyRow.id))]

    # --- participants ---

    def create_participant(self, *, label: str | None = None, prolific_pid: str | None = None,
                           prolific_study_id: str | None = None, prolific_session_id: str | None = None,
                           consent_ms: int | None = None, demographics: Mapping[str, Any] | None = None,
                           t_ms: int | None = None, study: str | None = None) -> str:
        """A new pseudonymous participant id (`study`: the study whose link created them)."""
        pid = "p" + secrets.token_hex(8)
        with self._tx() as s:
            s.add(ParticipantRow(id=pid, label=label, prolific_pid=prolific_pid,
                                 prolific_study_id=prolific_study_id, prolific_session_id=prolific_session_id,
                                 consent_ms=consent_ms, demographics=dict(demographics or {}),
                                 created_ms=t_ms if t_ms is not None else now_ms(), study=study))
        return pid

    def get_participant(self, participant_id: str) -> ParticipantInfo:
        with self._tx() as s:
            return _participant_info(self._participant(s, participant_id))

    def get_participants(self, ids: Iterable[str]) -> list[ParticipantInfo]:
        """The participants with these ids (unknown ids are left out), one query per 500."""
        out: list[ParticipantInfo] = []
        with self._tx() as s:
            for chunk in _chunks(sorted(set(ids))):
                out += [_participant_info(r) for r in s.scalars(select(ParticipantRow).where(ParticipantRow.id.in_(chunk)))]
        return out

    def find_participant(self, *, prolific_pid: str | None = None, label: str | None = None) -> ParticipantInfo | None:
        """The earliest participant with this Prolific id (or label), if any."""
        if (prolific_pid is None) == (label is None):
            raise StoreError("find_participant needs exactly one of prolific_pid= or label=")
        col, value = (ParticipantRow.prolific_pid, prolific_pid) if label is None else (ParticipantRow.label, label)
        with self._tx() as s:
            row = s.scalars(select(ParticipantRow).where(col == value)
                            .order_by(ParticipantRow.created_ms, ParticipantRow.id)).first()
            return _participant_info(row) if row else None

    def participants(self) -> list[ParticipantInfo]:
        """Every participant, oldest first (demographics for the analysis)."""
        with self._tx() as s:
            rows = s.scalars(select(ParticipantRow).order_by(ParticipantRow.created_ms, ParticipantRow.id))
            return [_participant_info(r) for r in rows]

    def update_participant(self, participant_id: str, *, demographics: Mapping[str, Any] | None = None,
                           **fields: Any) -> ParticipantInfo:
        """Set `consent_ms`, `label` or Prolific ids; `demographics` is merged into what is there."""
        unknown = set(fields) - set(_PARTICIPANT_FIELDS)
        if unknown:
            raise StoreError(f"cannot update participant field(s) {sorted(unknown)}; "
                             f"updatable: demographics, {', '.join(_PARTICIPANT_FIELDS)}")
        with self._tx() as s:
            row = self._participant(s, participant_id)
            for k, v in fields.items():
                setattr(row, k, v)
            if demographics is not None:
                row.demographics = {**row.demographics, **dict(demographics)}
            return _participant_info(row)

    @staticmethod
    def _participant(s: Session, participant_id: str) -> ParticipantRow:
        row = s.get(ParticipantRow, participant_id)
        if row is None:
            raise UnknownId(f"no participant with id {participant_id!r}")
        return row

    # --- games ---

    def create_game(self, study_id: int, format: str, seats: Mapping[str, Identity | Mapping[str, Any]],
                    interrogator_id: str | None, t_ms: int, *, game_id: str | None = None,
                    flags: Mapping[str, Any] | None = None) -> str:
        """Create a game with the hidden identity of each witness seat; returns its id."""
        return self.create_in_own(NewGame(study_id, format, seats, interrogator_id, t_ms, game_id, dict(flags or {})))

    def create_in_own(self, game: "NewGame") -> str:
        """`create_game` from a `NewGame`, in its own transaction."""
        with self._tx() as s:
            return self.create_in(s, [game])[0]

    def create_in(self, s: Session, specs: list["NewGame"]) -> list[str]:
        """Create several games inside the open transaction `s` (a few statements for all of
        them, however many); returns their ids. The server's writers batch game starts with it."""
        rows, seat_rows, studies, pids = [], [], {}, set()
        for g in specs:
            ids = _check_seats(g.format, g.seats)
            gid = g.game_id or "g" + secrets.token_hex(8)
            rows.append((g, gid, ids))
            seat_rows += [{"game_id": gid, "seat": seat, "kind": i.kind, "witness": i.witness,
                           "participant_id": i.participant_id, "selection_prob": i.selection_prob}
                          for seat, i in ids.items()]
            studies[g.study_id] = None
            pids |= {p for p in [g.interrogator_id, *(i.participant_id for i in ids.values())] if p is not None}
        for row in s.execute(select(StudyRow.id, StudyRow.name, StudyRow.config_hash, StudyRow.config)
                             .where(StudyRow.id.in_(list(studies)))):
            studies[row.id] = row
        found: set[str] = set()
        for chunk in _chunks(sorted(pids)):
            found.update(s.scalars(select(ParticipantRow.id).where(ParticipantRow.id.in_(chunk))))
        games = []
        for g, gid, ids in rows:
            study = studies[g.study_id]
            if study is None:
                raise UnknownId(f"no study with id {g.study_id}; register it first (Store.register_study)")
            if study.config.get("format") != g.format:
                raise StoreError(f"study {study.name!r} is {study.config.get('format')}, not {g.format}")
            for pid in [g.interrogator_id, *(i.participant_id for i in ids.values())]:
                if pid is not None and pid not in found:
                    raise UnknownId(f"no participant with id {pid!r}")
            games.append({"id": gid, "study_id": g.study_id, "study_hash": study.config_hash, "format": g.format,
                          "interrogator_id": g.interrogator_id, "status": "in_progress", "started_ms": g.t_ms,
                          "ended_ms": None, "end_reason": None, "flags": g.flags})
        try:
            insert_rows(s, GameRow.__table__, games)
            insert_rows(s, GameSeatRow.__table__, seat_rows)
        except IntegrityError as exc:
            raise StoreError(f"games could not be created ({str(exc.orig).strip().splitlines()[0]}); "
                             "is a game id used twice?") from None
        for g, gid, ids in rows:  # seats never change: the first appends need not read them back
            self._cache_seats(gid, {seat: i.to_dict() for seat, i in ids.items()}, studies[g.study_id].config_hash)
        return [gid for _, gid, _ in rows]

    def append_events(self, game_id: str, events: Iterable[Event]) -> None:
        """Append events atomically and in order (seq must continue the game's log).

        When this returns, the events are committed to disk. Verdict, status and flag rows
        derived from the events are written in the same transaction.
        """
        self.append_many([(game_id, events)])

    def append_many(self, batches: Iterable[tuple[str, Iterable[Event]]]) -> None:
        """Append the events of several games in one transaction (group commit).

        `batches` is a list of `(game_id, events)`; a game may appear more than once, and its
        batches are appended in the order given (together they must continue its log). The
        checks and derived rows are those of `append_events`. All or nothing: if any batch
        cannot be stored (unknown game, sequence gap, duplicate) nothing is stored and the
        error names the game. Committed (fsync'd) on return.
        """
        with self._tx() as s:
            self.append_in(s, batches)

    def append_in(self, s: Session, batches: Iterable[tuple[str, Iterable[Event]]]) -> None:
        """`append_many` inside the open transaction `s` (the caller commits). A few statements
        for the whole batch, however many games: lock, last seq, seats (uncached), insert, and
        the derived rows of the games whose status, flags or verdict changed."""
        per_game = group_batches(batches)
        if not per_game:
            return
        ids = sorted(per_game)  # lock game rows in one order (no deadlock between writers)
        pg = s.connection().dialect.name == "postgresql"
        games: dict[str, GameState] = {}
        last: dict[str, int] = {}
        for chunk in ([ids] if pg else _chunks(ids)):
            key = {"ids": chunk}
            games.update((r.id, GameState(*r)) for r in s.execute(_GAMES_FOR_UPDATE[pg], key))
            last.update(s.execute(_LAST_SEQ[pg], key).all())
        self._load_identities(s, [games[g] for g in ids if g in games])
        rows, verdicts = self.plan_append(per_game, games, last)
        try:
            insert_rows(s, EventRow.__table__, rows)  # one statement, no ORM objects (the hot path)
        except IntegrityError as exc:
            raise duplicate_error(ids, exc.orig) from None
        changed = [g.row() for g in games.values() if g.changed()]
        if changed:
            s.connection().execute(_UPDATE_GAME, changed)
        if verdicts:  # a verdict replaces the game's verdict row, if it had one
            s.connection().execute(delete(VerdictRow.__table__).where(VerdictRow.game_id.in_([v["game_id"] for v in verdicts])))
            insert_rows(s, VerdictRow.__table__, verdicts)

    def plan_append(self, per_game: dict[str, list[Event]], games: dict[str, "GameState"],
                    last: dict[str, int]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        """The checks and rows of an append (no I/O): the event rows to insert and the verdict rows;
        `games` (locked rows, their identities in the seat cache) are changed in place. `last`: the
        last stored seq of each game that has events."""
        rows: list[dict[str, Any]] = []
        verdicts: dict[str, dict[str, Any]] = {}
        for game_id in per_game:  # in the order the games were given
            game = games.get(game_id)
            if game is None:
                raise UnknownId(f"no game with id {game_id!r}")
            identity, study_hash = self._seat_cache.get(game_id) or ({}, game.study_hash)
            gone = (game.flags or {}).get(withdrawn.SEATS_FLAG)  # a withdrawn player's text never comes back
            if gone:
                identity = withdrawn.renamed(identity, gone)
            expected = last[game_id] + 1 if last.get(game_id) is not None else 0
            for i, e in enumerate(per_game[game_id]):
                if e.seq != expected + i:
                    raise StoreError(f"game {game_id}: event seq {e.seq} does not continue the log "
                                     f"(expected {expected + i}); nothing was stored")
                if gone and e.actor in gone:
                    e = replace(e, payload=withdrawn.scrub(e.payload))
                rows.append({"game_id": game_id, "seq": e.seq, "t_ms": e.t_ms, "type": e.type,
                             "actor": e.actor, "conversation": e.conversation, "payload": e.payload,
                             "identity": identity, "study_hash": study_hash})
                if (v := self._derive(game, e, identity)) is not None:
                    verdicts[game_id] = v
        return rows, list(verdicts.values())

    def uncached_seats(self, ids: Iterable[str]) -> list[str]:
        """The games among `ids` whose seats are not in the cache."""
        return [g for g in ids if g not in self._seat_cache]

    def cache_seat_rows(self, rows: Iterable[Any], games: dict[str, "GameState"]) -> None:
        """Fill the seat cache from `game_seats` rows (game_id, seat, kind, witness, participant_id,
        selection_prob) of these games."""
        found: dict[str, dict[str, dict[str, Any]]] = {}
        for r in rows:
            found.setdefault(r[0], {})[r[1]] = Identity(r[2], r[3], r[4], r[5]).to_dict()
        for gid, seats in found.items():
            self._cache_seats(gid, seats, games[gid].study_hash)

    def _load_identities(self, s: Session, games: list[Any]) -> None:
        """Fill the seat cache for these games (rows with `id` and `study_hash`): one query
        (per 500 games on SQLite)."""
        missing = {g.id: g for g in games if g.id not in self._seat_cache}
        ids = list(missing)
        pg = s.connection().dialect.name == "postgresql"
        for chunk in ([ids] if pg and ids else _chunks(ids)):
            found: dict[str, dict[str, dict[str, Any]]] = {g: {} for g in chunk}
            for r in s.scalars(_SEATS[pg], {"ids": chunk}):
                found[r.game_id][r.seat] = _identity(r).to_dict()
            for gid, seats in found.items():
                self._cache_seats(gid, seats, missing[gid].study_hash)

    def _cache_seats(self, game_id: str, seats: dict[str, dict[str, Any]], study_hash: str) -> None:
        while len(self._seat_cache) >= 10_000:  # seats never change; keep the newest games only
            self._seat_cache.pop(next(iter(self._seat_cache)))
        self._seat_cache[game_id] = (seats, study_hash)

    def _identity(self, s: Session, game: Any) -> tuple[dict[str, dict[str, Any]], str]:
        if game.id not in self._seat_cache:
            seats = s.scalars(select(GameSeatRow).where(GameSeatRow.game_id == game.id)).all()
            self._cache_seats(game.id, {r.seat: _identity(r).to_dict() for r in seats}, game.study_hash)
        return self._seat_cache[game.id]

    @staticmethod
    def _derive(game: "GameState", e: Event, identity: dict[str, dict[str, Any]]) -> dict[str, Any] | None:
        """Apply event `e` to the game's status and flags; the verdicts row of a verdict event."""
        p = e.payload
        if e.type == ev.VERDICT:
            return {"game_id": game.id, "choice": p["choice"], "confidence": p["confidence"],
                    "reason": p.get("reason"), "correct": _correct(game.format, p["choice"], identity),
                    "forced": bool(p.get("forced")), "t_ms": e.t_ms}
        if e.type == ev.GAME_ENDED:
            game.status, game.ended_ms, game.end_reason = "ended", e.t_ms, p.get("reason")
        elif e.type == ev.TIME_UP or (e.type == ev.LEFT and e.actor != ev.INTERROGATOR):
            if game.status == "in_progress":
                game.status = "awaiting_verdict"
            if e.type == ev.LEFT:
                game.flags = {**game.flags, "witness_left": True}
        elif e.type == ev.ABUSE_REPORT:
            game.flags = {**game.flags, "abuse_reported": True}
        elif e.type == ev.FLAG:  # a researcher's decision: the value, and where it came from
            origins = {**game.flags.get("origins", {}),
                       p["flag"]: {"origin": p.get("origin", "hand"), "value": bool(p["value"]),
                                   "reason": p.get("reason"), "t_ms": e.t_ms}}
            game.flags = {**game.flags, p["flag"]: bool(p["value"]), "origins": origins}
        elif (e.type == ev.REFUSED and p.get("code") == "blocked"
              and identity.get(e.actor or "", {}).get("kind") == "ai"):  # AI outputs the filter blocked
            game.flags = {**game.flags, "ai_output_blocked": int(game.flags.get("ai_output_blocked", 0)) + 1}
        elif (e.type == ev.REFUSED and p.get("code") == "persona_break"
              and identity.get(e.actor or "", {}).get("kind") == "ai"):  # replies the persona guard regenerated
            game.flags = {**game.flags, "persona_break_regenerated":
                          int(game.flags.get("persona_break_regenerated", 0)) + 1}
        return None

    def record_verdict(self, game_id: str, choice: str, confidence: int, reason: str | None,
                       t_ms: int, *, forced: bool = False) -> VerdictInfo:
        """Write the verdict row directly (for imported data; live games get it from the `verdict` event)."""
        with self._tx() as s:
            game = s.get(GameRow, game_id)
            if game is None:
                raise UnknownId(f"no game with id {game_id!r}")
            identity, _ = self._identity(s, game)
            row = s.merge(VerdictRow(game_id=game_id, choice=choice, confidence=confidence, reason=reason,
                                     correct=_correct(game.format, choice, identity), forced=forced, t_ms=t_ms))
            return _verdict_info(row)

    def set_flag(self, game_id: str, flag: str, value: Any = True) -> dict[str, Any]:
        """Set (or with value=None, remove) a flag the system computed; games are flagged, never
        deleted. A researcher's decision goes through `flag_game` instead (it is logged)."""
        with self._tx() as s:
            game = s.get(GameRow, game_id, with_for_update=True)
            if game is None:
                raise UnknownId(f"no game with id {game_id!r}")
            flags = dict(game.flags)
            if value is None:
                flags.pop(flag, None)
            else:
                flags[flag] = value
            game.flags = flags
            return flags

    def flag_game(self, game_id: str, flag: str, value: bool, reason: str | None, t_ms: int) -> dict[str, Any]:
        """A researcher sets (value=True) or clears (False) an exclusion flag by hand: appended to the
        game's log as a `flag` event, and the game's flags follow; a hand decision overrides the rule
        that computes the same flag (e.g. knows_witness). Returns the game's flags."""
        if not FLAG_NAME.fullmatch(flag or "") or flag == "origins":
            raise StoreError(f"flag name {flag!r}: use lower-case letters, digits and _ (e.g. knows_witness)")
        if reason is not None and len(reason) > 500:
            raise StoreError("--reason is longer than 500 characters; shorten it")
        if self.game(game_id).status != "ended":
            raise StoreError(f"game {game_id} is still being played; flag it after it has ended")
        for _ in range(3):  # another writer may append to the same log at the same moment
            rows = self.event_rows(game_id)
            e = Event(seq=rows[-1].event.seq + 1, t_ms=int(t_ms), type=ev.FLAG, actor=ev.RESEARCHER,
                      payload={"flag": flag, "value": bool(value), "reason": reason, "origin": "hand"})
            try:
                self.append_events(game_id, [e])
                break
            except StoreError as exc:
                if "does not continue" not in str(exc):
                    raise
        else:
            raise StoreError(f"game {game_id}: its log kept changing; try again")
        return self.game(game_id).flags

    def events(self, game_id: str) -> list[Event]:
        """The game's log, ready for `Game.replay`."""
        return [r.event for r in self.event_rows(game_id)]

    def event_rows(self, game_id: str) -> list[StoredEvent]:
        """The game's log with the hidden identities and the study hash of every event."""
        with self._tx() as s:
            if s.get(GameRow, game_id) is None:
                raise UnknownId(f"no game with id {game_id!r}")
            rows = s.scalars(select(EventRow).where(EventRow.game_id == game_id).order_by(EventRow.seq))
            return [StoredEvent(game_id, Event(r.seq, r.t_ms, r.type, r.actor, r.conversation, readable(dict(r.payload))),
                                dict(r.identity), r.study_hash) for r in rows]

    def game(self, game_id: str) -> GameInfo:
        with self._tx() as s:
            row = s.get(GameRow, game_id)
            if row is None:
                raise UnknownId(f"no game with id {game_id!r}")
            return self._game_infos(s, [row])[0]

    def open_game_ids(self, study_id: int) -> list[str]:
        """The ids of the study's games still open (in progress or awaiting the verdict)."""
        with self._tx() as s:
            return list(s.scalars(select(GameRow.id).where(GameRow.study_id == study_id, GameRow.status != "ended")
                                  .order_by(GameRow.started_ms, GameRow.id)))

    def open_game_of(self, study_id: int, participant_id: str, since_ms: int | None = None) -> str | None:
        """The game the participant is still playing (in progress, or awaiting their own verdict), or with
        `since_ms` any game of theirs started since then: what the store says when a cluster's shared
        routes are lost (an emptied Redis)."""
        seated = select(GameSeatRow.game_id).where(GameSeatRow.participant_id == participant_id)
        theirs = GameRow.id.in_(seated) | (GameRow.interrogator_id == participant_id)
        found = ((GameRow.status == "in_progress") & theirs) | (
            (GameRow.status == "awaiting_verdict") & (GameRow.interrogator_id == participant_id))
        if since_ms is not None:
            found = found | ((GameRow.started_ms >= since_ms) & theirs)
        with self._tx() as s:
            return s.scalars(select(GameRow.id).where(GameRow.study_id == study_id, found).limit(1)).first()

    def games(self, study_id: int | None = None, *, interrogator_id: str | None = None,
              status: str | None = None) -> list[GameInfo]:
        """Games in start order, with seats and verdicts."""
        q = select(GameRow).order_by(GameRow.started_ms, GameRow.id)
        if study_id is not None:
            q = q.where(GameRow.study_id == study_id)
        if interrogator_id is not None:
            q = q.where(GameRow.interrogator_id == interrogator_id)
        if status is not None:
            q = q.where(GameRow.status == status)
        with self._tx() as s:
            return self._game_infos(s, list(s.scalars(q)))

    def has_games(self, study_id: int) -> bool:
        """Whether the study has any game (one indexed row read)."""
        with self._tx() as s:
            return s.execute(select(GameRow.id).where(GameRow.study_id == study_id).limit(1)).first() is not None

    @staticmethod
    def _game_infos(s: Session, rows: list[GameRow]) -> list[GameInfo]:
        ids = [r.id for r in rows]
        seats: dict[str, dict[str, Identity]] = {i: {} for i in ids}
        verdicts: dict[str, VerdictInfo] = {}
        for chunk in (ids[i:i + 500] for i in range(0, len(ids), 500)):
            for seat in s.scalars(select(GameSeatRow).where(GameSeatRow.game_id.in_(chunk))):
                seats[seat.game_id][seat.seat] = _identity(seat)
            for v in s.scalars(select(VerdictRow).where(VerdictRow.game_id.in_(chunk))):
                verdicts[v.game_id] = _verdict_info(v)
        return [GameInfo(r.id, r.study_id, r.study_hash, r.format, r.interrogator_id, r.status, r.started_ms,
                         r.ended_ms, r.end_reason, dict(r.flags), dict(sorted(seats[r.id].items())),
                         verdicts.get(r.id)) for r in rows]

    # --- tags ---

    def add_tag(self, game_id: str, tagger: str, taxonomy: str, category: str, t_ms: int | None = None) -> int:
        """Tag a game (e.g. taxonomy "reasons", category "linguistic_style.informal"); idempotent."""
        with self._tx() as s:
            if s.get(GameRow, game_id) is None:
                raise UnknownId(f"no game with id {game_id!r}")
            q = select(TagRow.id).where(TagRow.game_id == game_id, TagRow.tagger == tagger,
                                        TagRow.taxonomy == taxonomy, TagRow.category == category)
            existing = s.scalar(q)
            if existing is not None:
                return existing
            row = TagRow(game_id=game_id, tagger=tagger, taxonomy=taxonomy, category=category,
                         t_ms=t_ms if t_ms is not None else now_ms())
            s.add(row)
            s.flush()
            return row.id

    def tags(self, game_id: str | None = None, *, taxonomy: str | None = None) -> list[TagInfo]:
        q = select(TagRow).order_by(TagRow.id)
        if game_id is not None:
            q = q.where(TagRow.game_id == game_id)
        if taxonomy is not None:
            q = q.where(TagRow.taxonomy == taxonomy)
        with self._tx() as s:
            return [TagInfo(r.id, r.game_id, r.tagger, r.taxonomy, r.category, r.t_ms) for r in s.scalars(q)]


def _correct(format: str, choice: str, identity: dict[str, dict[str, Any]]) -> bool | None:
    """Was the verdict right? The one rule: `turinglab.game.events.verdict_correct`."""
    return verdict_correct(format, choice, {seat: i.get("kind") for seat, i in identity.items()})


def _identity(r: GameSeatRow) -> Identity:
    return Identity(kind=r.kind, witness=r.witness, participant_id=r.participant_id,  # type: ignore[arg-type]
                    selection_prob=r.selection_prob)


def _study_info(r: StudyRow) -> StudyInfo:
    return StudyInfo(r.id, r.name, r.version, r.config_hash, Study.model_validate(r.config), r.created_ms)


def _participant_info(r: ParticipantRow) -> ParticipantInfo:
    return ParticipantInfo(r.id, r.label, r.prolific_pid, r.prolific_study_id, r.prolific_session_id,
                           r.consent_ms, dict(r.demographics), r.created_ms, r.study, r.consent_hash)


def _verdict_info(r: VerdictRow) -> VerdictInfo:
    return VerdictInfo(r.choice, r.confidence, r.reason, r.correct, r.forced, r.t_ms)
