"""One judge session per (static study, judge): a unique index, so two server processes that deal
the same judge at once cannot both store a session (the second gets the first one's).

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-23
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    dup = op.get_bind().execute(sa.text(
        "SELECT study_id, judge_id FROM static_sessions GROUP BY study_id, judge_id HAVING COUNT(*) > 1")).first()
    if dup is not None:
        raise RuntimeError(f"static_sessions holds more than one session of judge {dup[1]!r} in static study "
                           f"{dup[0]}; keep one (the one their trials name) and run the migration again")
    op.create_index("uq_static_sessions_study_judge", "static_sessions", ["study_id", "judge_id"], unique=True)


def downgrade() -> None:
    op.drop_index("uq_static_sessions_study_judge", table_name="static_sessions")
