"""The rows of the store's write path, shared by `Store` (synchronous) and the server's
PostgreSQL writer (`turinglab/server/live/pgwriter.py`): new games, the locked game rows an append
derives status and flags on, and inserts that take a whole batch in one statement."""

from __future__ import annotations

import functools
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import String, Table, any_, bindparam, func, insert, select, text, update
from sqlalchemy.dialects.postgresql import ARRAY
from sqlalchemy.engine import Connection
from sqlalchemy.orm import Session

from turinglab.game.events import Event, Identity
from turinglab.store.db import StoreError
from turinglab.store.models import EventRow, GameRow, GameSeatRow

FORMATS = {"two-player": ("A",), "three-player": ("A", "B")}

_GAME_COLS = (GameRow.id, GameRow.format, GameRow.study_hash, GameRow.status, GameRow.flags,
              GameRow.ended_ms, GameRow.end_reason)


def _ids_in(col: Any, pg: bool) -> Any:
    """`col IN (:ids)`: on PostgreSQL one array parameter (the same SQL for any number of ids)."""
    return col == any_(bindparam("ids", type_=ARRAY(String))) if pg else col.in_(bindparam("ids", expanding=True))


# statements of the append path, built once per backend ([False] SQLite, [True] PostgreSQL)
_GAMES_FOR_UPDATE = [select(*_GAME_COLS).where(_ids_in(GameRow.id, pg)).order_by(GameRow.id).with_for_update()
                     for pg in (False, True)]
_LAST_SEQ = [select(EventRow.game_id, func.max(EventRow.seq)).where(_ids_in(EventRow.game_id, pg))
             .group_by(EventRow.game_id) for pg in (False, True)]
_SEATS = [select(GameSeatRow).where(_ids_in(GameSeatRow.game_id, pg)) for pg in (False, True)]
_UPDATE_GAME = update(GameRow.__table__).where(GameRow.__table__.c.id == bindparam("gid"))  # SET: the row's keys


@dataclass
class GameState:
    """A game's row while its events are appended (what `Store._derive` reads and changes)."""

    id: str
    format: str
    study_hash: str
    status: str
    flags: dict[str, Any]
    ended_ms: int | None
    end_reason: str | None

    def __post_init__(self) -> None:
        self._was = (self.status, self.flags, self.ended_ms, self.end_reason)

    def changed(self) -> bool:
        return (self.status, self.flags, self.ended_ms, self.end_reason) != self._was

    def row(self) -> dict[str, Any]:
        return {"gid": self.id, "status": self.status, "flags": self.flags, "ended_ms": self.ended_ms,
                "end_reason": self.end_reason}


def group_batches(batches: Iterable[tuple[str, Iterable[Event]]]) -> dict[str, list[Event]]:
    """`(game_id, events)` batches as each game's events in order (games in first-seen order)."""
    per_game: dict[str, list[Event]] = {}
    for game_id, events in batches:
        per_game.setdefault(game_id, []).extend(events)
    return {g: evs for g, evs in per_game.items() if evs}


def duplicate_error(ids: list[str], orig: Any) -> StoreError:
    which = ", ".join(ids[:5]) + (" …" if len(ids) > 5 else "")
    return StoreError(f"game {which}: events could not be stored ({orig}); was the same event appended twice?")


def insert_rows(s: Session, table: Table, rows: list[dict[str, Any]]) -> None:
    """Insert `rows` (dicts with the same keys) in one statement. On PostgreSQL the rows travel as
    one JSON document (`json_populate_recordset` gives each value its column's type; the driver's
    executemany would send every row as a statement of its own); elsewhere the driver's executemany."""
    if not rows:
        return
    conn = s if isinstance(s, Connection) else s.connection()
    if conn.dialect.name != "postgresql":
        conn.execute(insert(table), rows)
        return
    doc = json.dumps(rows, ensure_ascii=False)
    try:
        doc.encode("utf-8")
    except UnicodeEncodeError:  # an unpaired surrogate (text an older version stored): PostgreSQL's
        conn.execute(insert(table), rows)  # JSON functions refuse it; its json column keeps it as sent
        return
    conn.execute(_json_insert(table, tuple(rows[0])), {"rows": doc})


@functools.cache
def _json_insert(table: Table, names: tuple[str, ...]) -> Any:
    cols = ", ".join(f'"{table.c[n].name}"' for n in names)
    return text(f'INSERT INTO "{table.name}" ({cols}) SELECT {cols} '
                f'FROM json_populate_recordset(NULL::"{table.name}", CAST(:rows AS json))')


def _chunks(ids: list[str], n: int = 500) -> Iterable[list[str]]:
    return (ids[i:i + n] for i in range(0, len(ids), n))


@dataclass(frozen=True)
class NewGame:
    """A game to create (`Store.create_in`): the arguments of `Store.create_game`."""

    study_id: int
    format: str
    seats: Mapping[str, Any]
    interrogator_id: str | None
    t_ms: int
    game_id: str | None = None
    flags: dict[str, Any] = field(default_factory=dict)


def _check_seats(format: str, seats: Mapping[str, Identity | Mapping[str, Any]]) -> dict[str, Identity]:
    if format not in FORMATS:
        raise StoreError(f"format must be one of {', '.join(FORMATS)}, got {format!r}")
    if sorted(seats) != list(FORMATS[format]):
        raise StoreError(f"a {format} game has witness seats {', '.join(FORMATS[format])}; got {sorted(seats)}")
    try:
        ids = {seat: Identity.from_dict(dict(v) if not isinstance(v, Identity) else v) for seat, v in seats.items()}
    except (TypeError, ValueError) as exc:
        raise StoreError(f"bad seat identity: {exc}") from None
    if format == "three-player" and sorted(i.kind for i in ids.values()) != ["ai", "human"]:
        raise StoreError("a three-player game has one human and one AI witness (a forced choice)")
    return ids
