"""Settings kept in the database (table `settings`): values made once and then read by every
process, e.g. the export key (turinglab/analysis/export/pseudonyms.py)."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from sqlalchemy.exc import IntegrityError

from turinglab.store.models import SettingRow

if TYPE_CHECKING:
    from turinglab.store.api import Store


def setting_once(store: "Store", name: str, make: Callable[[], str]) -> str:
    """The stored value of `name`; made with `make()` and stored the first time. Two processes
    asking at once get the same value (the second insert fails and reads the first)."""
    with store._tx() as s:
        row = s.get(SettingRow, name)
        if row is not None:
            return row.value
    try:
        with store._tx() as s:
            value = make()
            s.add(SettingRow(name=name, value=value, created_ms=int(time.time() * 1000)))
            return value
    except IntegrityError:
        with store._tx() as s:
            return s.get(SettingRow, name).value


def read_setting(store: "Store", name: str) -> str | None:
    """The stored value of `name`, None when it was never set."""
    with store._tx() as s:
        row = s.get(SettingRow, name)
        return None if row is None else row.value


def set_setting(store: "Store", name: str, value: str) -> None:
    """Store `value` under `name`, replacing the value before (e.g. an account's session generation)."""
    for _ in range(3):  # two processes inserting at once: the second updates
        try:
            with store._tx() as s:
                row = s.get(SettingRow, name)
                if row is None:
                    s.add(SettingRow(name=name, value=value, created_ms=int(time.time() * 1000)))
                else:
                    row.value = value
            return
        except IntegrityError:
            continue
