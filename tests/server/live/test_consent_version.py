"""Consent versions (issue 38.4): the hash of the consent text a participant agreed to is stored
with them (a changed text is a new version) and the export says which version each agreed to."""

from __future__ import annotations

import json

import pandas as pd
from typer.testing import CliRunner

from tests.server.live.test_server import ELIZA, running, study
from turinglab.analysis.demo.live import DemoSpec, generate
from turinglab.cli import app
from turinglab.game.config import consent_version
from turinglab.server.testing import WsPlayer
from turinglab.store.api import Store


async def test_consent_stores_the_version_of_the_text_shown(sqlite_url):
    for text in ("Information sheet v1: you may withdraw.", "Information sheet v2: you may withdraw at any time."):
        s = study(ratio=0.0, witnesses=(ELIZA,), consent_text=text)
        with running(s.model_copy(update={"name": s.name + str(len(text))}), sqlite_url) as base:
            p = await WsPlayer.create(base)
        with Store(sqlite_url, upgrade=False) as store:
            assert store.get_participant(p.pid).consent_hash == consent_version(text)
    assert consent_version("a") != consent_version("a ")


def test_export_says_which_consent_version_each_participant_agreed_to(sqlite_url, tmp_path):
    generate(sqlite_url, DemoSpec(n_games=30, seed=2))
    with Store(sqlite_url) as st:
        people = st.participants()
        for i, p in enumerate(people):
            st.update_participant(p.id, consent_hash=consent_version("v1" if i % 2 else "v2"))
    out = tmp_path / "x"
    r = CliRunner().invoke(app, ["export", "--db", sqlite_url, "--out", str(out)])
    assert r.exit_code == 0, r.output
    parts = pd.read_csv(out / "participants.csv", dtype=str)
    assert set(parts["consent_version"]) == {consent_version("v1")[:16], consent_version("v2")[:16]}
    cb = json.loads((out / "codebook.json").read_text())
    assert sum(cb["consent_versions"].values()) == len(parts)
    assert "consent_version" in cb["tables"]["participants"]
    assert consent_version("v1")[:16] in (out / "codebook.md").read_text()
