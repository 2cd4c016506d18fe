"""Storage: SQLAlchemy models, Alembic migrations, the append-only event log and the Store API."""

from turinglab.store.api import (
    GameInfo,
    ParticipantInfo,
    Store,
    StoredEvent,
    StudyFrozen,
    StudyInfo,
    TagInfo,
    UnknownId,
    VerdictInfo,
)
from turinglab.store.db import StoreError, database_url, downgrade, make_engine, migrate

__all__ = [
    "GameInfo",
    "ParticipantInfo",
    "Store",
    "StoreError",
    "StoredEvent",
    "StudyFrozen",
    "StudyInfo",
    "TagInfo",
    "UnknownId",
    "VerdictInfo",
    "database_url",
    "downgrade",
    "make_engine",
    "migrate",
]
