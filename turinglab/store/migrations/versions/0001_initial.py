"""The initial schema: studies, participants, games, seats, the append-only event log,
verdicts and tags.

Revision ID: 0001
Revises:
Create Date: 2026-11-22
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None

BigId = sa.BigInteger().with_variant(sa.Integer(), "sqlite")
GAME = sa.String(length=40)
PARTICIPANT = sa.String(length=40)

PG_APPEND_ONLY = """
CREATE FUNCTION turinglab_events_append_only() RETURNS trigger AS $$
BEGIN
    RAISE EXCEPTION 'events are append-only: % refused', TG_OP;
END;
$$ LANGUAGE plpgsql;
CREATE TRIGGER events_append_only BEFORE UPDATE OR DELETE ON events
    FOR EACH ROW EXECUTE FUNCTION turinglab_events_append_only();
"""
SQLITE_APPEND_ONLY = [
    f"CREATE TRIGGER events_no_{op_} BEFORE {op_.upper()} ON events "
    f"BEGIN SELECT RAISE(ABORT, 'events are append-only: {op_.upper()} refused'); END"
    for op_ in ("update", "delete")
]


def upgrade() -> None:
    op.create_table(
        "participants",
        sa.Column("id", PARTICIPANT, primary_key=True),
        sa.Column("label", sa.String(length=200), nullable=True),
        sa.Column("prolific_pid", sa.String(length=64), nullable=True),
        sa.Column("prolific_study_id", sa.String(length=64), nullable=True),
        sa.Column("prolific_session_id", sa.String(length=64), nullable=True),
        sa.Column("consent_ms", sa.BigInteger(), nullable=True),
        sa.Column("demographics", sa.JSON(), nullable=False),
        sa.Column("created_ms", sa.BigInteger(), nullable=False),
    )
    op.create_index("ix_participants_prolific_pid", "participants", ["prolific_pid"])

    op.create_table(
        "studies",
        sa.Column("id", BigId, primary_key=True, autoincrement=True),
        sa.Column("name", sa.String(length=200), nullable=False),
        sa.Column("version", sa.Integer(), nullable=False),
        sa.Column("config_hash", sa.String(length=64), nullable=False),
        sa.Column("config", sa.JSON(), nullable=False),
        sa.Column("created_ms", sa.BigInteger(), nullable=False),
        sa.UniqueConstraint("name", "version", name="uq_studies_name_version"),
    )
    op.create_index("ix_studies_config_hash", "studies", ["config_hash"])

    op.create_table(
        "games",
        sa.Column("id", GAME, primary_key=True),
        sa.Column("study_id", sa.BigInteger(), sa.ForeignKey("studies.id"), nullable=False),
        sa.Column("study_hash", sa.String(length=64), nullable=False),
        sa.Column("format", sa.String(length=20), nullable=False),
        sa.Column("interrogator_id", PARTICIPANT, sa.ForeignKey("participants.id"), nullable=True),
        sa.Column("status", sa.String(length=20), nullable=False),
        sa.Column("started_ms", sa.BigInteger(), nullable=False),
        sa.Column("ended_ms", sa.BigInteger(), nullable=True),
        sa.Column("end_reason", sa.String(length=100), nullable=True),
        sa.Column("flags", sa.JSON(), nullable=False),
    )
    op.create_index("ix_games_study_id", "games", ["study_id"])
    op.create_index("ix_games_interrogator_id", "games", ["interrogator_id"])

    op.create_table(
        "game_seats",
        sa.Column("game_id", GAME, sa.ForeignKey("games.id"), primary_key=True),
        sa.Column("seat", sa.String(length=8), primary_key=True),
        sa.Column("kind", sa.String(length=10), nullable=False),
        sa.Column("witness", sa.String(length=40), nullable=True),
        sa.Column("participant_id", PARTICIPANT, sa.ForeignKey("participants.id"), nullable=True),
        sa.Column("selection_prob", sa.Float(), nullable=True),
    )
    op.create_index("ix_game_seats_witness", "game_seats", ["witness"])
    op.create_index("ix_game_seats_participant_id", "game_seats", ["participant_id"])

    op.create_table(
        "events",
        sa.Column("id", BigId, primary_key=True, autoincrement=True),
        sa.Column("game_id", GAME, sa.ForeignKey("games.id"), nullable=False),
        sa.Column("seq", sa.Integer(), nullable=False),
        sa.Column("t_ms", sa.BigInteger(), nullable=False),
        sa.Column("type", sa.String(length=40), nullable=False),
        sa.Column("actor", sa.String(length=20), nullable=False),
        sa.Column("conversation", sa.String(length=8), nullable=True),
        sa.Column("payload", sa.JSON(), nullable=False),
        sa.Column("identity", sa.JSON(), nullable=False),
        sa.Column("study_hash", sa.String(length=64), nullable=False),
        sa.UniqueConstraint("game_id", "seq", name="uq_events_game_seq"),
    )
    op.create_index("ix_events_type", "events", ["type"])

    op.create_table(
        "verdicts",
        sa.Column("game_id", GAME, sa.ForeignKey("games.id"), primary_key=True),
        sa.Column("choice", sa.String(length=10), nullable=False),
        sa.Column("confidence", sa.Integer(), nullable=False),
        sa.Column("reason", sa.Text(), nullable=True),
        sa.Column("correct", sa.Boolean(), nullable=True),
        sa.Column("forced", sa.Boolean(), nullable=False),
        sa.Column("t_ms", sa.BigInteger(), nullable=False),
    )

    op.create_table(
        "tags",
        sa.Column("id", BigId, primary_key=True, autoincrement=True),
        sa.Column("game_id", GAME, sa.ForeignKey("games.id"), nullable=False),
        sa.Column("tagger", sa.String(length=100), nullable=False),
        sa.Column("taxonomy", sa.String(length=40), nullable=False),
        sa.Column("category", sa.String(length=200), nullable=False),
        sa.Column("t_ms", sa.BigInteger(), nullable=False),
        sa.UniqueConstraint("game_id", "tagger", "taxonomy", "category", name="uq_tags"),
    )
    op.create_index("ix_tags_game_id", "tags", ["game_id"])

    if op.get_bind().dialect.name == "postgresql":
        op.execute(PG_APPEND_ONLY)
    else:
        for sql in SQLITE_APPEND_ONLY:
            op.execute(sql)


def downgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        op.execute("DROP TRIGGER IF EXISTS events_append_only ON events")
        op.execute("DROP FUNCTION IF EXISTS turinglab_events_append_only()")
    for table in ("tags", "verdicts", "events", "game_seats", "games", "studies", "participants"):
        op.drop_table(table)  # indexes go with their table
