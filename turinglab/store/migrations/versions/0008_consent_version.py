"""Consent versions (issue 38.4): the SHA-256 of the consent text each participant agreed to
(a changed text is a new version). Participants stored before have none.

Revision ID: 0008
Revises: 0007
Create Date: 2026-11-28
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0008"
down_revision = "0007"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("participants", sa.Column("consent_hash", sa.String(length=64), nullable=True))


def downgrade() -> None:
    # a plain ALTER TABLE (SQLite 3.35+): a batch copy of `participants` would break its foreign keys
    op.drop_column("participants", "consent_hash")
