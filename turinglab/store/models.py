"""SQLAlchemy 2 models. The schema is made by the Alembic migrations (store/migrations);
a test checks that these models and the migrations agree.

Times are integer milliseconds since the Unix epoch (`*_ms`).
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import JSON, BigInteger, Boolean, Float, ForeignKey, Integer, String, Text, UniqueConstraint
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column

# SQLite only autoincrements INTEGER PRIMARY KEY columns.
BigId = BigInteger().with_variant(Integer(), "sqlite")


class Base(DeclarativeBase):
    type_annotation_map = {dict[str, Any]: JSON, int: BigInteger}


class StudyRow(Base):
    __tablename__ = "studies"
    __table_args__ = (UniqueConstraint("name", "version", name="uq_studies_name_version"),)

    id: Mapped[int] = mapped_column(BigId, primary_key=True, autoincrement=True)
    name: Mapped[str] = mapped_column(String(200))
    version: Mapped[int] = mapped_column(Integer)
    config_hash: Mapped[str] = mapped_column(String(64), index=True)
    config: Mapped[dict[str, Any]] = mapped_column(JSON)
    created_ms: Mapped[int] = mapped_column(BigInteger)


class ParticipantRow(Base):
    __tablename__ = "participants"

    id: Mapped[str] = mapped_column(String(40), primary_key=True)  # pseudonymous
    label: Mapped[str | None] = mapped_column(String(200))
    prolific_pid: Mapped[str | None] = mapped_column(String(64), index=True)
    prolific_study_id: Mapped[str | None] = mapped_column(String(64))
    prolific_session_id: Mapped[str | None] = mapped_column(String(64))
    consent_ms: Mapped[int | None] = mapped_column(BigInteger)
    demographics: Mapped[dict[str, Any]] = mapped_column(JSON)
    created_ms: Mapped[int] = mapped_column(BigInteger)


class GameRow(Base):
    __tablename__ = "games"

    id: Mapped[str] = mapped_column(String(40), primary_key=True)
    study_id: Mapped[int] = mapped_column(BigInteger, ForeignKey("studies.id"), index=True)
    study_hash: Mapped[str] = mapped_column(String(64))
    format: Mapped[str] = mapped_column(String(20))
    interrogator_id: Mapped[str | None] = mapped_column(String(40), ForeignKey("participants.id"), index=True)
    status: Mapped[str] = mapped_column(String(20))  # in_progress | awaiting_verdict | ended
    started_ms: Mapped[int] = mapped_column(BigInteger)
    ended_ms: Mapped[int | None] = mapped_column(BigInteger)
    end_reason: Mapped[str | None] = mapped_column(String(100))
    flags: Mapped[dict[str, Any]] = mapped_column(JSON)


class GameSeatRow(Base):
    __tablename__ = "game_seats"

    game_id: Mapped[str] = mapped_column(String(40), ForeignKey("games.id"), primary_key=True)
    seat: Mapped[str] = mapped_column(String(8), primary_key=True)  # A | B
    kind: Mapped[str] = mapped_column(String(10))  # human | ai
    witness: Mapped[str | None] = mapped_column(String(40), index=True)  # AI codename
    participant_id: Mapped[str | None] = mapped_column(String(40), ForeignKey("participants.id"), index=True)
    selection_prob: Mapped[float | None] = mapped_column(Float)


class EventRow(Base):
    """Append-only: the migrations add triggers that refuse UPDATE and DELETE."""

    __tablename__ = "events"
    __table_args__ = (UniqueConstraint("game_id", "seq", name="uq_events_game_seq"),)

    id: Mapped[int] = mapped_column(BigId, primary_key=True, autoincrement=True)
    game_id: Mapped[str] = mapped_column(String(40), ForeignKey("games.id"))
    seq: Mapped[int] = mapped_column(Integer)
    t_ms: Mapped[int] = mapped_column(BigInteger)
    type: Mapped[str] = mapped_column(String(40), index=True)
    actor: Mapped[str] = mapped_column(String(20))
    conversation: Mapped[str | None] = mapped_column(String(8))
    payload: Mapped[dict[str, Any]] = mapped_column(JSON)
    identity: Mapped[dict[str, Any]] = mapped_column(JSON)  # seat -> hidden identity
    study_hash: Mapped[str] = mapped_column(String(64))


class VerdictRow(Base):
    """Derived from the `verdict` event, written in the same transaction."""

    __tablename__ = "verdicts"

    game_id: Mapped[str] = mapped_column(String(40), ForeignKey("games.id"), primary_key=True)
    choice: Mapped[str] = mapped_column(String(10))
    confidence: Mapped[int] = mapped_column(Integer)
    reason: Mapped[str | None] = mapped_column(Text)
    correct: Mapped[bool | None] = mapped_column(Boolean)
    forced: Mapped[bool] = mapped_column(Boolean)
    t_ms: Mapped[int] = mapped_column(BigInteger)


class TagRow(Base):
    __tablename__ = "tags"
    __table_args__ = (UniqueConstraint("game_id", "tagger", "taxonomy", "category", name="uq_tags"),)

    id: Mapped[int] = mapped_column(BigId, primary_key=True, autoincrement=True)
    game_id: Mapped[str] = mapped_column(String(40), ForeignKey("games.id"), index=True)
    tagger: Mapped[str] = mapped_column(String(100))
    taxonomy: Mapped[str] = mapped_column(String(40))  # e.g. "reasons" (App. G) | "strategies" (App. H)
    category: Mapped[str] = mapped_column(String(200))
    t_ms: Mapped[int] = mapped_column(BigInteger)
