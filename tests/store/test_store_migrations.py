"""Alembic migrations: up, down, up again on each database; models and migrations agree."""

from __future__ import annotations

from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from sqlalchemy import inspect

from turinglab.store import downgrade, make_engine, migrate
from turinglab.store.models import Base

TABLES = {"studies", "participants", "games", "game_seats", "events", "verdicts", "tags",
          "static_studies", "static_stimuli", "static_responses", "static_sessions", "static_trials",
          "settings",  # issue 24: the export key
          "admin_actions",  # issue 27: what researchers did from /admin or `turinglab admin`
          "withdrawals"}  # issue 38: who withdrew a participant, when and why


def tables(url: str) -> set[str]:
    engine = make_engine(url)
    try:
        return set(inspect(engine).get_table_names()) - {"alembic_version"}
    finally:
        engine.dispose()


def diff(url: str) -> list:
    engine = make_engine(url)
    try:
        with engine.connect() as conn:
            return compare_metadata(MigrationContext.configure(conn), Base.metadata)
    finally:
        engine.dispose()


def test_upgrade_downgrade_upgrade(db_url):
    assert tables(db_url) == set()
    migrate(db_url)
    assert tables(db_url) == TABLES
    assert diff(db_url) == []
    downgrade(db_url)
    assert tables(db_url) == set()
    migrate(db_url)
    assert tables(db_url) == TABLES
    migrate(db_url)  # idempotent at head
    assert diff(db_url) == []
