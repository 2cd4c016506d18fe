"""Participants belong to their study (issue 35.5): the study whose link created them (`live:NAME`
or `static:NAME`), so a token of one study opens nothing of another, and consent and repeat checks
are per study. Participants stored before have none (NULL: any study, as before).

Revision ID: 0006
Revises: 0005
Create Date: 2026-11-28
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("participants") as batch:
        batch.add_column(sa.Column("study", sa.String(length=210), nullable=True))
    op.create_index("ix_participants_study", "participants", ["study"])


def downgrade() -> None:
    op.drop_index("ix_participants_study", table_name="participants")
    with op.batch_alter_table("participants") as batch:
        batch.drop_column("study")
