"""What researchers do from /admin or `turinglab admin` (issue 27): end a game, remove or block a
participant, pause and resume recruitment. One row per action, with who did it and why; the
server reads the rows to know the study's recruitment state (every worker of a cluster alike).

Revision ID: 0005
Revises: 0004
Create Date: 2026-11-26
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "admin_actions",
        sa.Column("id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), primary_key=True, autoincrement=True),
        sa.Column("study_id", sa.BigInteger(), sa.ForeignKey("studies.id"), nullable=False),
        sa.Column("t_ms", sa.BigInteger(), nullable=False),
        sa.Column("researcher", sa.String(length=64), nullable=False),
        sa.Column("action", sa.String(length=20), nullable=False),
        sa.Column("target", sa.String(length=64), nullable=True),
        sa.Column("reason", sa.Text(), nullable=True),
    )
    op.create_index("ix_admin_actions_study_id", "admin_actions", ["study_id"])


def downgrade() -> None:
    op.drop_index("ix_admin_actions_study_id", table_name="admin_actions")
    op.drop_table("admin_actions")
