"""Registering a study config, live or static: frozen once it is used, new versions on request."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pydantic import BaseModel
from sqlalchemy import func, select

from turinglab.store.db import StudyFrozen, now_ms


def register_versioned(s: Any, row_cls: Any, uses: Any, study: BaseModel, new_version: bool,
                       hash_of: Callable[[Any], str], frozen: Callable[[int, str, int], str],
                       **columns: Any) -> int:
    """The id of `study` (it has `name` and `version`) among the `row_cls` rows of its name, in the
    open session `s`: a row with the same config under any version (the asked one first); else
    the row of its version, updated in place while no `uses` row (a game, a judge trial) refers
    to it. A used row is frozen: `StudyFrozen(frozen(uses, its hash, next free version))`, or
    with `new_version` a new row at the next free version. `columns`: more columns to write."""
    rows = s.scalars(select(row_cls).where(row_cls.name == study.name)).all()
    for row in sorted(rows, key=lambda r: r.version != study.version):
        # the same config, stored under this version or (via new_version) a later one
        if row.config_hash == hash_of(study.model_copy(update={"version": row.version})):
            return row.id
    same = next((r for r in rows if r.version == study.version), None)
    if same is not None:
        n = s.scalar(select(func.count()).select_from(uses).where(uses.study_id == same.id))
        if n == 0 and not new_version:
            same.config, same.config_hash = study.model_dump(mode="json"), hash_of(study)
            for k, v in columns.items():
                setattr(same, k, v)
            return same.id
        next_free = max(r.version for r in rows) + 1
        if not new_version:
            raise StudyFrozen(frozen(n, same.config_hash, next_free))
        study = study.model_copy(update={"version": next_free})
    row = row_cls(name=study.name, version=study.version, config_hash=hash_of(study),
                  config=study.model_dump(mode="json"), created_ms=now_ms(), **columns)
    s.add(row)
    s.flush()
    return row.id
