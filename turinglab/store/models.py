"""SQLAlchemy 2 models. The schema is made by the Alembic migrations (store/migrations);
a test checks that these models and the migrations agree.

Times are integer milliseconds since the Unix epoch (`*_ms`).
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import JSON, BigInteger, Boolean, Float, ForeignKey, Index, Integer, String, Text, UniqueConstraint
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
    # the study whose link created them: "live:NAME" / "static:NAME" (migration 0006; NULL: any)
    study: Mapped[str | None] = mapped_column(String(210), index=True)
    consent_hash: Mapped[str | None] = mapped_column(String(64))  # SHA-256 of the consent text agreed to (0008)


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


# --- static Turing tests (Zhang et al.): migration 0002; API in store/static.py ---


class StaticStudyRow(Base):
    """A static study: one task, its frozen config (game/static_config.py) and its hash."""

    __tablename__ = "static_studies"
    __table_args__ = (UniqueConstraint("name", "version", name="uq_static_studies_name_version"),)

    id: Mapped[int] = mapped_column(BigId, primary_key=True, autoincrement=True)
    name: Mapped[str] = mapped_column(String(200))
    version: Mapped[int] = mapped_column(Integer)
    task: Mapped[str] = mapped_column(String(20))  # word | caption | object | color | fv | conversation
    config_hash: Mapped[str] = mapped_column(String(64), index=True)
    config: Mapped[dict[str, Any]] = mapped_column(JSON)
    created_ms: Mapped[int] = mapped_column(BigInteger)


class StimulusRow(Base):
    """What a judge sees first: a cue word, an image, or a conversation's source."""

    __tablename__ = "static_stimuli"
    __table_args__ = (UniqueConstraint("study_id", "key", name="uq_static_stimuli_study_key"),)

    id: Mapped[int] = mapped_column(BigId, primary_key=True, autoincrement=True)
    study_id: Mapped[int] = mapped_column(BigInteger, ForeignKey("static_studies.id"), index=True)
    key: Mapped[str] = mapped_column(String(200))  # the source's id: cue word, image id, transcript name
    text: Mapped[str | None] = mapped_column(Text)
    image: Mapped[str | None] = mapped_column(String(500))  # a file path (relative to the study's image dir)
    fields: Mapped[dict[str, Any]] = mapped_column(JSON)  # task fields: queried point, cue index, ...


class ResponseRow(Base):
    """One item a judge rates: a response to a stimulus, with its ground truth and agent."""

    __tablename__ = "static_responses"
    __table_args__ = (UniqueConstraint("study_id", "key", name="uq_static_responses_study_key"),)

    id: Mapped[int] = mapped_column(BigId, primary_key=True, autoincrement=True)
    study_id: Mapped[int] = mapped_column(BigInteger, ForeignKey("static_studies.id"), index=True)
    stimulus_id: Mapped[int] = mapped_column(BigInteger, ForeignKey("static_stimuli.id"), index=True)
    key: Mapped[str] = mapped_column(String(200))  # unique in the study, e.g. Zhang's page name "78_e_0"
    text: Mapped[str | None] = mapped_column(Text)
    payload: Mapped[dict[str, Any]] = mapped_column(JSON)  # structured answers: labels, boxes, scanpath, speakers
    truth: Mapped[str] = mapped_column(String(10))  # human | machine
    agent: Mapped[str] = mapped_column(String(200), index=True)  # participant label or model name
    control: Mapped[bool] = mapped_column(Boolean)  # a vigilance item with a known answer


class JudgeSessionRow(Base):
    """The balanced sample one judge was dealt (resumable: the plan is fixed when created)."""

    __tablename__ = "static_sessions"
    __table_args__ = (Index("uq_static_sessions_study_judge", "study_id", "judge_id", unique=True),)  # 0003

    id: Mapped[str] = mapped_column(String(40), primary_key=True)
    study_id: Mapped[int] = mapped_column(BigInteger, ForeignKey("static_studies.id"), index=True)
    judge_id: Mapped[str] = mapped_column(String(40), ForeignKey("participants.id"), index=True)
    plan: Mapped[dict[str, Any]] = mapped_column(JSON)  # {"items": [{"response_id", "phase", "feedback"}...]}
    created_ms: Mapped[int] = mapped_column(BigInteger)
    completed_ms: Mapped[int | None] = mapped_column(BigInteger)


class JudgeTrialRow(Base):
    """Append-only: the migration adds triggers that refuse UPDATE and DELETE."""

    __tablename__ = "static_trials"
    __table_args__ = (
        UniqueConstraint("study_id", "judge_id", "seq", name="uq_static_trials_judge_seq"),
        # covering index of `static summary`: counts per item and answer without a sort
        Index("ix_static_trials_study_response_answer", "study_id", "response_id", "answer"),
    )

    id: Mapped[int] = mapped_column(BigId, primary_key=True, autoincrement=True)
    study_id: Mapped[int] = mapped_column(BigInteger, ForeignKey("static_studies.id"))
    judge_id: Mapped[str] = mapped_column(String(40), ForeignKey("participants.id"), index=True)
    session_id: Mapped[str | None] = mapped_column(String(40))
    response_id: Mapped[int] = mapped_column(BigInteger, ForeignKey("static_responses.id"), index=True)
    seq: Mapped[int] = mapped_column(Integer)  # the judge's trial number, from 0
    phase: Mapped[str] = mapped_column(String(20))  # e.g. feedback | test
    answer: Mapped[str] = mapped_column(String(10))  # human | machine (conversation: the judged speaker)
    answers: Mapped[dict[str, Any]] = mapped_column(JSON)  # per speaker, gender, topic, ...
    rt_ms: Mapped[int | None] = mapped_column(Integer)
    feedback_shown: Mapped[bool] = mapped_column(Boolean)
    control_correct: Mapped[bool | None] = mapped_column(Boolean)  # None: not a control trial
    t_ms: Mapped[int] = mapped_column(BigInteger)
    study_hash: Mapped[str] = mapped_column(String(64))


class SettingRow(Base):
    """Server-side settings kept out of git (issue 24): e.g. the export key."""

    __tablename__ = "settings"

    name: Mapped[str] = mapped_column(String(100), primary_key=True)
    value: Mapped[str] = mapped_column(Text)
    created_ms: Mapped[int] = mapped_column(BigInteger)


class AdminActionRow(Base):
    """A researcher's action on a running study (issue 27): who, what, on which game or participant, why."""

    __tablename__ = "admin_actions"

    id: Mapped[int] = mapped_column(BigId, primary_key=True, autoincrement=True)
    study_id: Mapped[int] = mapped_column(BigInteger, ForeignKey("studies.id"), index=True)
    t_ms: Mapped[int] = mapped_column(BigInteger)
    researcher: Mapped[str] = mapped_column(String(64))
    action: Mapped[str] = mapped_column(String(20))  # see turinglab/store/admin_log.py ACTIONS
    target: Mapped[str | None] = mapped_column(String(64))  # a game id or participant id
    reason: Mapped[str | None] = mapped_column(Text)


class WithdrawalRow(Base):
    """A participant's withdrawal (issue 38, migration 0007): who asked, when and why, and the
    placeholder id their games now name; never what was erased."""

    __tablename__ = "withdrawals"

    id: Mapped[int] = mapped_column(BigId, primary_key=True, autoincrement=True)
    t_ms: Mapped[int] = mapped_column(BigInteger)
    who: Mapped[str] = mapped_column(String(64))  # a researcher's account, or "participant" (the done page)
    reason: Mapped[str] = mapped_column(Text)
    placeholder: Mapped[str] = mapped_column(String(40))
    study: Mapped[str | None] = mapped_column(String(210))
    games: Mapped[int] = mapped_column(Integer)
    # SHA-256 of the erased id: a running server forgets that participant (their link opens nothing)
    gone: Mapped[str] = mapped_column(String(64))
