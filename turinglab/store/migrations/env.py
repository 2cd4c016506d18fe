"""Alembic environment: run programmatically by turinglab.store.db.migrate (an engine is passed in)."""

from __future__ import annotations

from alembic import context

from turinglab.store.models import Base

config = context.config
engine = config.attributes.get("engine")
if engine is None:  # pragma: no cover - plain `alembic` command line
    from turinglab.store.db import make_engine

    engine = make_engine(config.get_main_option("sqlalchemy.url"))

with engine.connect() as connection:
    context.configure(
        connection=connection,
        target_metadata=Base.metadata,
        render_as_batch=connection.dialect.name == "sqlite",
    )
    with context.begin_transaction():
        context.run_migrations()
    connection.commit()
