"""Keyed pseudonyms for exports (issue 24): every external id (participant tokens, Prolific
participant/study/session ids, tagger names) becomes `prefix + HMAC-SHA256(key, id)[:16]`.

The key is $TURINGLAB_EXPORT_KEY when set, else a random key generated once and kept in the
study database (table `settings`), never in git: exports of one database agree with each other
(and with /admin's), and without the key nobody can test a guessed id against a pseudonym."""

from __future__ import annotations

import hashlib
import hmac
import os
import secrets
from typing import TYPE_CHECKING

import pandas as pd

if TYPE_CHECKING:
    from turinglab.store.api import Store

ENV = "TURINGLAB_EXPORT_KEY"
SETTING = "export_key"
# the prefix of each kind of id in the pseudonymous exports
PREFIX = {"participant": "P", "prolific_pid": "X", "prolific_study_id": "S", "prolific_session_id": "N", "tagger": "T"}


def export_key(store: "Store | None" = None) -> bytes:
    """$TURINGLAB_EXPORT_KEY, else the database's own key (made on first use); with neither a
    store nor the variable, a random key (pseudonyms then link to nothing)."""
    env = os.environ.get(ENV)
    if env:
        return env.encode()
    if store is None:
        return secrets.token_bytes(32)
    from turinglab.store.settings import setting_once

    return setting_once(store, SETTING, lambda: secrets.token_hex(32)).encode()


def keyed(value: object, key: bytes, prefix: str = "P") -> str:
    return prefix + hmac.new(key, str(value).encode(), hashlib.sha256).hexdigest()[:16]


def pseudonymise(values: pd.Series, key: bytes, prefix: str = "P") -> pd.Series:
    uniq = {v: keyed(v, key, prefix) for v in pd.unique(values.dropna())}
    return values.map(uniq).astype("string")
