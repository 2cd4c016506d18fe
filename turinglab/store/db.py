"""Where the database is and how to connect to it: the one place that resolves the URL."""

from __future__ import annotations

import os
import time
from typing import Any
from pathlib import Path

from sqlalchemy import Engine, create_engine, event
from sqlalchemy.engine import make_url

DEFAULT_URL = "sqlite:///./turinglab.db"
MIGRATIONS = Path(__file__).parent / "migrations"


class StoreError(RuntimeError):
    """A storage problem the user can act on (bad URL, unknown game, frozen study...)."""


class StudyFrozen(StoreError):
    """The study already has games (or judge trials) under another config: make a new version instead."""


class UnknownId(StoreError, KeyError):
    """No study / participant / game / item with that id."""

    def __str__(self) -> str:  # KeyError would quote the message
        return str(self.args[0])


def now_ms() -> int:
    return time.time_ns() // 1_000_000


def database_url(explicit: str | None = None) -> str:
    """`explicit` if given, else `$DATABASE_URL`, else SQLite at ./turinglab.db.

    Plain `postgresql://` URLs are read as psycopg 3 (`postgresql+psycopg://`).
    """
    url = explicit or os.environ.get("DATABASE_URL") or DEFAULT_URL
    try:
        parsed = make_url(url)
    except Exception as exc:  # noqa: BLE001 - sqlalchemy raises ArgumentError and friends
        raise StoreError(
            f"cannot read database URL {url!r} ({exc}); use e.g. sqlite:///./turinglab.db "
            "or postgresql+psycopg://user@127.0.0.1:5432/dbname"
        ) from None
    if parsed.drivername in ("postgresql", "postgres"):
        parsed = parsed.set(drivername="postgresql+psycopg")
    if parsed.get_backend_name() not in ("sqlite", "postgresql"):
        raise StoreError(f"unsupported database {parsed.get_backend_name()!r}: use SQLite or PostgreSQL")
    return parsed.render_as_string(hide_password=False)


def existing_database(url: str | None = None) -> str:
    """`database_url(url)` for a command that only reads: a SQLite file that does not exist is a
    `StoreError` (opening it would silently create an empty database, e.g. for a mistyped path)."""
    url = database_url(url)
    parsed = make_url(url)
    db = parsed.database if parsed.get_backend_name() == "sqlite" else None
    if db and db != ":memory:" and not db.startswith("file:"):
        path = Path(db).expanduser().resolve()
        if not path.is_file():
            raise StoreError(f"no database at {path}; run `turinglab db upgrade --db {url}` or check the path")
        if path.stat().st_size == 0:  # opening it would write a header into it (WAL mode)
            raise StoreError(f"the file {path} is empty, not a turinglab database; "
                             f"run `turinglab db upgrade --db {url}` or check the path")
    return url


def make_engine(url: str | None = None) -> Engine:
    """An engine with the durability settings turinglab relies on."""
    url = database_url(url)
    if make_url(url).get_backend_name() == "sqlite":
        return _sqlite_engine(url)
    return create_engine(url, pool_pre_ping=True)


def _sqlite_engine(url: str) -> Engine:
    db = make_url(url).database
    if db and db != ":memory:":
        parent = Path(db).expanduser().resolve().parent
        if not parent.is_dir():
            raise StoreError(f"the folder of the SQLite database does not exist: {parent}; create it first")
    # how long a write waits for another process's lock before it fails (tests shorten it)
    busy_s = float(os.environ.get("TURINGLAB_SQLITE_BUSY_S", "30"))
    engine = create_engine(url, connect_args={"timeout": busy_s})

    @event.listens_for(engine, "connect")
    def _pragmas(dbapi_conn, _record) -> None:  # noqa: ANN001 - DB-API connection
        dbapi_conn.isolation_level = None  # we issue BEGIN ourselves (below)
        cur = dbapi_conn.cursor()
        cur.execute("PRAGMA journal_mode=WAL")
        cur.execute("PRAGMA synchronous=FULL")  # a commit is on disk before it returns
        cur.execute("PRAGMA foreign_keys=ON")
        cur.execute(f"PRAGMA busy_timeout={round(busy_s * 1000)}")
        cur.close()

    @event.listens_for(engine, "begin")
    def _begin(conn) -> None:  # noqa: ANN001
        # take the write lock at the start, so concurrent writers wait instead of failing
        conn.exec_driver_sql("BEGIN IMMEDIATE")

    return engine


def migrate(url: str | None = None, revision: str = "head") -> None:
    """Upgrade the database schema to `revision` (creates every table on an empty database)."""
    _alembic("upgrade", url, revision)


def downgrade(url: str | None = None, revision: str = "base") -> None:
    _alembic("downgrade", url, revision)


def alembic_config(engine: Engine | None = None):  # noqa: ANN201 - alembic.config.Config
    from alembic.config import Config

    cfg = Config()
    cfg.set_main_option("script_location", str(MIGRATIONS))
    cfg.attributes["engine"] = engine
    return cfg


def _alembic(cmd: str, url: str | None, revision: str) -> None:
    from alembic import command
    from sqlalchemy.exc import OperationalError

    engine = make_engine(url)
    try:
        getattr(command, cmd)(alembic_config(engine), revision)
    except OperationalError as exc:
        shown = engine.url.render_as_string(hide_password=True)
        raise StoreError(f"cannot use the database at {shown}: {str(exc.orig).strip().splitlines()[0]}; "
                         "is the server running and the URL right? (--db or $DATABASE_URL)") from None
    finally:
        engine.dispose()


def raw_rows(conn: Any, stmt: Any) -> list[tuple]:
    """Rows as plain tuples straight from the DB-API cursor (SQLAlchemy rows cost ~10x more to
    turn into a DataFrame). Literals are inlined (literal_binds): integers, the code's own constants, and
    agent names that the dialect's string literal quoting escapes."""
    sql = str(stmt.compile(dialect=conn.dialect, compile_kwargs={"literal_binds": True}))
    cur = conn.connection.dbapi_connection.cursor()
    try:
        cur.execute(sql)
        return cur.fetchall()
    finally:
        cur.close()
