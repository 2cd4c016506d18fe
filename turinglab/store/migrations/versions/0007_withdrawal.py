"""Participants' withdrawal (issue 38): the `withdrawals` log (who, when, why; not what was
erased) and append-only triggers that let one kind of UPDATE through: erasing a withdrawn
participant's text, or redacting raw chat when its retention ends (`turinglab db purge`). An event
row may change only if its place (game, seq, time, type, actor, conversation, study hash) stays and
its new payload carries `"withdrawn": true` or `"redacted": true`, or its payload
stays (the hidden identity then names the withdrawn participant's placeholder id). A static trial
may change only its judge and its answers, which must carry `"withdrawn": true`. DELETE stays refused.

Revision ID: 0007
Revises: 0006
Create Date: 2026-11-28
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0007"
down_revision = "0006"
branch_labels = None
depends_on = None

BigId = sa.BigInteger().with_variant(sa.Integer(), "sqlite")
_EVENT_PLACE = ["game_id", "seq", "t_ms", "type", "actor", "conversation", "study_hash"]
_TRIAL_PLACE = ["study_id", "seq", "response_id", "answer", "t_ms", "phase", "study_hash"]

PG = """
CREATE OR REPLACE FUNCTION turinglab_{table}_withdraw_only() RETURNS trigger AS $$
BEGIN
    IF TG_OP = 'UPDATE' AND {same} AND ({allowed}) THEN
        RETURN NEW;
    END IF;
    RAISE EXCEPTION '{table} are append-only: % refused', TG_OP;
END;
$$ LANGUAGE plpgsql;
DROP TRIGGER IF EXISTS {table}_append_only ON {table};
CREATE TRIGGER {table}_append_only BEFORE UPDATE OR DELETE ON {table}
    FOR EACH ROW EXECUTE FUNCTION turinglab_{table}_withdraw_only();
"""


def _same(cols: list[str], pg: bool) -> str:
    op_ = "IS NOT DISTINCT FROM" if pg else "IS"
    return " AND ".join(f"NEW.{c} {op_} OLD.{c}" for c in cols)


def _pg_marked(col: str) -> str:
    return (f"(COALESCE(NEW.{col}::jsonb ->> 'withdrawn', '') = 'true' "
            f"OR COALESCE(NEW.{col}::jsonb ->> 'redacted', '') = 'true')")


def _sqlite_marked(col: str) -> str:
    # IS: NULL must not let a row through
    return f"(json_extract(NEW.{col}, '$.withdrawn') IS 1 OR json_extract(NEW.{col}, '$.redacted') IS 1)"


def upgrade() -> None:
    op.create_table(
        "withdrawals",
        sa.Column("id", BigId, primary_key=True, autoincrement=True),
        sa.Column("t_ms", sa.BigInteger(), nullable=False),
        sa.Column("who", sa.String(length=64), nullable=False),
        sa.Column("reason", sa.Text(), nullable=False),
        sa.Column("placeholder", sa.String(length=40), nullable=False),
        sa.Column("study", sa.String(length=210), nullable=True),
        sa.Column("games", sa.Integer(), nullable=False),
        sa.Column("gone", sa.String(length=64), nullable=False),
    )
    if op.get_bind().dialect.name == "postgresql":
        op.execute(PG.format(table="events", same=_same(_EVENT_PLACE, True),
                             allowed=f"{_pg_marked('payload')} OR NEW.payload::jsonb = OLD.payload::jsonb"))
        op.execute(PG.format(table="static_trials", same=_same(_TRIAL_PLACE, True), allowed=_pg_marked("answers")))
        op.execute("DROP FUNCTION IF EXISTS turinglab_events_append_only()")
        op.execute("DROP FUNCTION IF EXISTS turinglab_static_trials_append_only()")
        return
    for table, place, allowed in (
            ("events", _EVENT_PLACE, f"{_sqlite_marked('payload')} OR NEW.payload IS OLD.payload"),
            ("static_trials", _TRIAL_PLACE, _sqlite_marked("answers"))):
        op.execute(f"DROP TRIGGER IF EXISTS {table}_no_update")
        op.execute(f"CREATE TRIGGER {table}_no_update BEFORE UPDATE ON {table} "
                   f"WHEN NOT ({_same(place, False)} AND ({allowed})) "
                   f"BEGIN SELECT RAISE(ABORT, '{table} are append-only: UPDATE refused'); END")


def downgrade() -> None:
    op.drop_table("withdrawals")
    if op.get_bind().dialect.name == "postgresql":
        for table in ("events", "static_trials"):
            op.execute(f"""
CREATE OR REPLACE FUNCTION turinglab_{table}_append_only() RETURNS trigger AS $$
BEGIN
    RAISE EXCEPTION '{table} are append-only: % refused', TG_OP;
END;
$$ LANGUAGE plpgsql;
DROP TRIGGER IF EXISTS {table}_append_only ON {table};
CREATE TRIGGER {table}_append_only BEFORE UPDATE OR DELETE ON {table}
    FOR EACH ROW EXECUTE FUNCTION turinglab_{table}_append_only();
DROP FUNCTION IF EXISTS turinglab_{table}_withdraw_only();""")
        return
    for table in ("events", "static_trials"):
        op.execute(f"DROP TRIGGER IF EXISTS {table}_no_update")
        op.execute(f"CREATE TRIGGER {table}_no_update BEFORE UPDATE ON {table} "
                   f"BEGIN SELECT RAISE(ABORT, '{table} are append-only: UPDATE refused'); END")
