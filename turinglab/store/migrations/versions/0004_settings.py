"""Server-side settings that must not live in git, e.g. the key of the pseudonymous exports'
keyed hashes (issue 24), generated once per database.

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-26
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "settings",
        sa.Column("name", sa.String(length=100), primary_key=True),
        sa.Column("value", sa.Text(), nullable=False),
        sa.Column("created_ms", sa.BigInteger(), nullable=False),
    )


def downgrade() -> None:
    op.drop_table("settings")
