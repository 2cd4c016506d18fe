"""Issue 24 item 4: every external id in the pseudonymous exports is a keyed hash (key from
$TURINGLAB_EXPORT_KEY or generated once and kept in the database); the raw Prolific ids are only
in the separately named payment export; the codebook says which is which."""

from __future__ import annotations

import hashlib
import hmac
import io
import json

import httpx
import pandas as pd
from sqlalchemy import text
from typer.testing import CliRunner

from turinglab.analysis.demo.live import DemoSpec, generate
from turinglab.analysis.export.export import read_tables
from turinglab.cli import app
from turinglab.store import Store
from turinglab.server.testing import AdminLogin
from tests.server.live.test_server import running, study


def _with_prolific_ids(db_url) -> dict[str, tuple[str, str, str]]:
    generate(db_url, DemoSpec(n_games=12, seed=2))
    with Store(db_url) as s:
        ids = [p.id for p in s.participants()]
    raw = {pid: (f"PPID{n:04d}aa", f"STUDY{n:04d}bb", f"SESS{n:04d}cc") for n, pid in enumerate(ids)}
    with Store(db_url) as s, s.engine.begin() as conn:
        for pid, (a, b, c) in raw.items():
            conn.execute(text("UPDATE participants SET prolific_pid=:a, prolific_study_id=:b, prolific_session_id=:c "
                              "WHERE id=:i"), {"a": a, "b": b, "c": c, "i": pid})
    return raw


def _stored_key(db_url) -> str:
    with Store(db_url) as s, s.engine.connect() as conn:
        return conn.execute(text("SELECT value FROM settings WHERE name='export_key'")).scalar_one()


def _p(pid: str, key: str) -> str:
    return "P" + hmac.new(key.encode(), pid.encode(), hashlib.sha256).hexdigest()[:16]


def test_the_dataset_uses_the_database_key_and_payment_ids_are_a_separate_export(db_url, tmp_path, monkeypatch):
    monkeypatch.delenv("TURINGLAB_EXPORT_KEY", raising=False)
    raw = _with_prolific_ids(db_url)
    outs = []
    for n in range(2):
        out = tmp_path / f"export{n}"
        r = CliRunner().invoke(app, ["export", "--db", db_url, "--out", str(out)])
        assert r.exit_code == 0, r.output
        outs.append(out)
    key = _stored_key(db_url)
    assert len(key) == 64
    a, b = (read_tables(o) for o in outs)
    assert list(a["participants"]["participant_id"]) == list(b["participants"]["participant_id"])  # one key
    assert set(a["participants"]["participant_id"]) == {_p(pid, key) for pid in raw} & set(a["participants"]["participant_id"])
    dataset = "".join((outs[0] / f"{t}.csv").read_text() for t in ("judgements", "participants", "messages", "tags"))
    assert not any(x in dataset for ids in raw.values() for x in ids) and not any(pid in dataset for pid in raw)
    cb = json.loads((outs[0] / "codebook.json").read_text())
    assert "keyed hash" in cb["pseudonymisation"] and cb["raw_ids"]["file"] == "payment_ids_RAW.csv"
    assert "payment_ids_RAW.csv" in (outs[0] / "codebook.md").read_text()
    # the payment export: raw ids beside the same pseudonyms
    pay = tmp_path / "payment_ids_RAW.csv"
    r = CliRunner().invoke(app, ["export-payment-ids", "--db", db_url, "--out", str(pay)])
    assert r.exit_code == 0 and "for payment only" in r.output, r.output
    p = pd.read_csv(pay, dtype=str)
    assert set(p["participant_id"]) >= set(a["participants"]["participant_id"])
    for row in p.itertuples():
        pid = next(i for i in raw if _p(i, key) == row.participant_id)
        assert (row.prolific_pid, row.prolific_study_id, row.prolific_session_id) == raw[pid]
    r = CliRunner().invoke(app, ["export-payment-ids", "--db", db_url, "--out", str(pay)])
    assert r.exit_code == 2 and "exists" in r.output


def test_a_key_from_the_environment_wins(sqlite_url, tmp_path, monkeypatch):
    monkeypatch.setenv("TURINGLAB_EXPORT_KEY", "k" * 40)
    raw = _with_prolific_ids(sqlite_url)
    r = CliRunner().invoke(app, ["export", "--db", sqlite_url, "--out", str(tmp_path / "e")])
    assert r.exit_code == 0, r.output
    got = set(read_tables(tmp_path / "e")["participants"]["participant_id"])
    assert got and got <= {_p(pid, "k" * 40) for pid in raw}


async def test_admin_exports_hide_prolific_ids_and_offer_a_named_payment_export(db_url, monkeypatch):
    monkeypatch.delenv("TURINGLAB_EXPORT_KEY", raising=False)
    raw = _with_prolific_ids(db_url)
    with Store(db_url) as s:
        demo_study = s.studies()[0].study
    with running(demo_study, db_url, admin_password="pw") as base:
        async with httpx.AsyncClient(base_url=base, auth=AdminLogin("pw")) as c:
            page = (await c.get("/admin")).text
            assert "/admin/export/payment_ids_RAW.csv" in page
            body = {}
            for t in ("participants", "games", "verdicts", "events"):
                r = await c.get(f"/admin/export/{t}.csv")
                assert r.status_code == 200
                body[t] = r.text
            r = await c.get("/admin/export/payment_ids_RAW.csv")
            assert r.status_code == 200 and "attachment" in r.headers["content-disposition"]
            pay = pd.read_csv(io.StringIO(r.text), dtype=str)
    everything = "".join(body.values())
    assert not any(x in everything for ids in raw.values() for x in ids)
    assert not any(pid in everything for pid in raw)
    key = _stored_key(db_url)
    part = pd.read_csv(io.StringIO(body["participants"]), dtype=str)
    for row in part.itertuples():
        pid = next(i for i in raw if _p(i, key) == row.participant_id)
        kp = "X" + hmac.new(key.encode(), raw[pid][0].encode(), hashlib.sha256).hexdigest()[:16]
        assert row.prolific_pid == kp and row.prolific_study_id.startswith("S") and row.prolific_session_id.startswith("N")
    assert set(pay["prolific_pid"]) <= {ids[0] for ids in raw.values()} and len(pay) == len(part)
    assert set(pay["participant_id"]) == set(part["participant_id"])
