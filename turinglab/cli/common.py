"""What the command groups share: the consoles, `fail`, option help texts and opening the store."""

from __future__ import annotations

from typing import Any, Callable, NoReturn, TypeVar

import typer
from rich.console import Console

console = Console()
err_console = Console(stderr=True)

DB_HELP = "database URL (default: $DATABASE_URL, else sqlite:///./turinglab.db)"


def fail(message: str, code: int = 2) -> NoReturn:
    """Print one clear line on stderr and exit (2 = bad input)."""
    err_console.print(f"error: {message}", markup=False, highlight=False, soft_wrap=True)
    raise typer.Exit(code)


T = TypeVar("T")


def read_study(load: Callable[..., T], *args: Any) -> T:
    """`load(*args)` of a study-file loader; a `StudyFileError` becomes its lines on stderr (exit 2)."""
    from turinglab.game.study_file import StudyFileError

    try:
        return load(*args)
    except StudyFileError as exc:
        fail(str(exc))


def database_location(db: str | None) -> str:
    """Where the data goes, for people: the absolute path of a SQLite file, else the URL without password."""
    from pathlib import Path

    from sqlalchemy.engine import make_url

    from turinglab.store.db import database_url

    url = make_url(database_url(db))
    if url.get_backend_name() == "sqlite" and url.database and url.database != ":memory:":
        return f"{Path(url.database).expanduser().resolve()} (SQLite; set DATABASE_URL or --db to change)"
    return url.render_as_string(hide_password=True)


def read_store(db: str | None):  # noqa: ANN202 - Store
    """A Store for a command that only reads: the database must exist and is not migrated
    (a mistyped path must not silently create an empty database)."""
    from turinglab.store import Store
    from turinglab.store.db import existing_database

    return Store(existing_database(db), upgrade=False)


def db_read_error(db: str | None, exc: Exception) -> str:
    from sqlalchemy.engine import make_url

    from turinglab.store import database_url

    orig = getattr(exc, "orig", None) or exc
    first = (str(orig).strip().splitlines() or [type(orig).__name__])[0]
    shown = make_url(database_url(db)).render_as_string(hide_password=True)
    return (f"cannot read the database at {shown}: {first}; is the URL right (--db or $DATABASE_URL) "
            "and the schema current (`turinglab db upgrade`)?")


def static_store(db: str | None, *, write: bool):  # noqa: ANN202 - Store
    from turinglab.store import Store, StoreError
    from turinglab.store.db import existing_database

    try:
        return Store(db) if write else Store(existing_database(db))
    except StoreError as exc:
        fail(str(exc))


def analysis_load(db: str | None, study: str | None):
    from turinglab.analysis.live.load import LoadError, load

    try:
        loaded = load(db, study)
    except LoadError as exc:
        fail(str(exc))
    if loaded.judgements.empty:
        fail(f"study {loaded.study_name!r} has no games with a verdict yet ({loaded.games_without_verdict} without)")
    return loaded


STATIC_EXCLUDE_HELP = ("Static study: exclusion flag of the trials (repeatable; 'none' for none). Default: withdrawn "
                       "(the trials of a judge who withdrew are left out).")


def static_exclude(exclude: list[str] | None) -> tuple[str, ...]:
    """A static analysis's --exclude: the trials' flags to leave out (default: withdrawn; 'none': none)."""
    from turinglab.store.withdraw import MARK

    if exclude is None:
        return (MARK,)
    flags = [e.strip() for e in exclude if e and e.strip()]
    if flags in ([], ["none"]):
        return ()
    bad = [f for f in flags if f != MARK]
    if bad:
        fail(f"a static study's trials have one exclusion flag, {MARK} (a judge who withdrew); got "
             f"{', '.join(map(repr, bad))} (--exclude none counts every trial)")
    return (MARK,)
