"""Static Turing tests (Zhang et al.): static studies, stimuli, responses (items), judge sessions
and the append-only judge trials. Judges are rows of `participants`.

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-23
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None

BigId = sa.BigInteger().with_variant(sa.Integer(), "sqlite")
PARTICIPANT = sa.String(length=40)

PG_APPEND_ONLY = """
CREATE FUNCTION turinglab_static_trials_append_only() RETURNS trigger AS $$
BEGIN
    RAISE EXCEPTION 'static_trials are append-only: % refused', TG_OP;
END;
$$ LANGUAGE plpgsql;
CREATE TRIGGER static_trials_append_only BEFORE UPDATE OR DELETE ON static_trials
    FOR EACH ROW EXECUTE FUNCTION turinglab_static_trials_append_only();
"""
SQLITE_APPEND_ONLY = [
    f"CREATE TRIGGER static_trials_no_{op_} BEFORE {op_.upper()} ON static_trials "
    f"BEGIN SELECT RAISE(ABORT, 'static_trials are append-only: {op_.upper()} refused'); END"
    for op_ in ("update", "delete")
]


def upgrade() -> None:
    op.create_table(
        "static_studies",
        sa.Column("id", BigId, primary_key=True, autoincrement=True),
        sa.Column("name", sa.String(length=200), nullable=False),
        sa.Column("version", sa.Integer(), nullable=False),
        sa.Column("task", sa.String(length=20), nullable=False),
        sa.Column("config_hash", sa.String(length=64), nullable=False),
        sa.Column("config", sa.JSON(), nullable=False),
        sa.Column("created_ms", sa.BigInteger(), nullable=False),
        sa.UniqueConstraint("name", "version", name="uq_static_studies_name_version"),
    )
    op.create_index("ix_static_studies_config_hash", "static_studies", ["config_hash"])

    op.create_table(
        "static_stimuli",
        sa.Column("id", BigId, primary_key=True, autoincrement=True),
        sa.Column("study_id", sa.BigInteger(), sa.ForeignKey("static_studies.id"), nullable=False),
        sa.Column("key", sa.String(length=200), nullable=False),
        sa.Column("text", sa.Text(), nullable=True),
        sa.Column("image", sa.String(length=500), nullable=True),
        sa.Column("fields", sa.JSON(), nullable=False),
        sa.UniqueConstraint("study_id", "key", name="uq_static_stimuli_study_key"),
    )
    op.create_index("ix_static_stimuli_study_id", "static_stimuli", ["study_id"])

    op.create_table(
        "static_responses",
        sa.Column("id", BigId, primary_key=True, autoincrement=True),
        sa.Column("study_id", sa.BigInteger(), sa.ForeignKey("static_studies.id"), nullable=False),
        sa.Column("stimulus_id", sa.BigInteger(), sa.ForeignKey("static_stimuli.id"), nullable=False),
        sa.Column("key", sa.String(length=200), nullable=False),
        sa.Column("text", sa.Text(), nullable=True),
        sa.Column("payload", sa.JSON(), nullable=False),
        sa.Column("truth", sa.String(length=10), nullable=False),
        sa.Column("agent", sa.String(length=200), nullable=False),
        sa.Column("control", sa.Boolean(), nullable=False),
        sa.UniqueConstraint("study_id", "key", name="uq_static_responses_study_key"),
    )
    op.create_index("ix_static_responses_study_id", "static_responses", ["study_id"])
    op.create_index("ix_static_responses_stimulus_id", "static_responses", ["stimulus_id"])
    op.create_index("ix_static_responses_agent", "static_responses", ["agent"])

    op.create_table(
        "static_sessions",
        sa.Column("id", sa.String(length=40), primary_key=True),
        sa.Column("study_id", sa.BigInteger(), sa.ForeignKey("static_studies.id"), nullable=False),
        sa.Column("judge_id", PARTICIPANT, sa.ForeignKey("participants.id"), nullable=False),
        sa.Column("plan", sa.JSON(), nullable=False),
        sa.Column("created_ms", sa.BigInteger(), nullable=False),
        sa.Column("completed_ms", sa.BigInteger(), nullable=True),
    )
    op.create_index("ix_static_sessions_study_id", "static_sessions", ["study_id"])
    op.create_index("ix_static_sessions_judge_id", "static_sessions", ["judge_id"])

    op.create_table(
        "static_trials",
        sa.Column("id", BigId, primary_key=True, autoincrement=True),
        sa.Column("study_id", sa.BigInteger(), sa.ForeignKey("static_studies.id"), nullable=False),
        sa.Column("judge_id", PARTICIPANT, sa.ForeignKey("participants.id"), nullable=False),
        sa.Column("session_id", sa.String(length=40), nullable=True),
        sa.Column("response_id", sa.BigInteger(), sa.ForeignKey("static_responses.id"), nullable=False),
        sa.Column("seq", sa.Integer(), nullable=False),
        sa.Column("phase", sa.String(length=20), nullable=False),
        sa.Column("answer", sa.String(length=10), nullable=False),
        sa.Column("answers", sa.JSON(), nullable=False),
        sa.Column("rt_ms", sa.Integer(), nullable=True),
        sa.Column("feedback_shown", sa.Boolean(), nullable=False),
        sa.Column("control_correct", sa.Boolean(), nullable=True),
        sa.Column("t_ms", sa.BigInteger(), nullable=False),
        sa.Column("study_hash", sa.String(length=64), nullable=False),
        sa.UniqueConstraint("study_id", "judge_id", "seq", name="uq_static_trials_judge_seq"),
    )
    op.create_index("ix_static_trials_study_response_answer", "static_trials", ["study_id", "response_id", "answer"])
    op.create_index("ix_static_trials_judge_id", "static_trials", ["judge_id"])
    op.create_index("ix_static_trials_response_id", "static_trials", ["response_id"])

    if op.get_bind().dialect.name == "postgresql":
        op.execute(PG_APPEND_ONLY)
    else:
        for sql in SQLITE_APPEND_ONLY:
            op.execute(sql)


def downgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        op.execute("DROP TRIGGER IF EXISTS static_trials_append_only ON static_trials")
        op.execute("DROP FUNCTION IF EXISTS turinglab_static_trials_append_only()")
    for table in ("static_trials", "static_sessions", "static_responses", "static_stimuli", "static_studies"):
        op.drop_table(table)  # indexes and SQLite triggers go with their table
