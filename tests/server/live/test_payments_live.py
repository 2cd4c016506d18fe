"""Issue 36.1 against a real server: links whose PROLIFIC_PID holds a comma, a line break or a
formula are let in, kept as unverified ids (flagged in the admin export) and never reach the bonus
file; `/admin/bonus.csv` and `turinglab admin bonus` parse as Prolific's two columns whose sum is
the total they state; the games table beside it says which games each line pays for."""

from __future__ import annotations

import asyncio
import csv
import io
import re
from decimal import Decimal
from urllib.parse import quote

import httpx
from typer.testing import CliRunner

from tests.server.live.test_server import ELIZA, running, study
from turinglab.cli import app as cli
from turinglab.game.config import Allocation, Prolific
from turinglab.server.testing import AdminLogin, WsPlayer

GOOD = "5f0c1a2b3c4d5e6f70819a2b"
EVIL = [f"{GOOD},99.99", f"x\n{GOOD},50", '=HYPERLINK("http://e.x","y")']


def q(pid: str) -> str:
    return f"?PROLIFIC_PID={quote(pid, safe='')}&STUDY_ID=st1&SESSION_ID=se1"


async def one_game(base: str, pid: str) -> str:
    """A participant from a link with `pid` plays one game against the AI and decides, right."""
    p = await (await WsPlayer.create(base, query=q(pid))).connect()
    await p.phase("idle")
    await p.send({"type": "join"})
    gid = (await p.phase("game"))["game"]["game_id"]
    await p.send({"type": "message", "conv": "A", "text": "hello there", "client_id": "c1"})
    await p.next("message")
    await p.send({"type": "verdict", "choice": "ai", "confidence": 90})
    await p.phase("reveal")
    await p.close()
    return gid


def two_columns(text: str) -> dict[str, Decimal]:
    rows = list(csv.reader(io.StringIO(text)))
    assert all(len(r) == 2 for r in rows), rows
    return {a: Decimal(b) for a, b in rows}


async def test_forged_ids_are_flagged_and_never_paid(sqlite_url, tmp_path):
    s = study(ratio=0.0, witnesses=(ELIZA,), prolific=Prolific(bonus_per_game=0.5, bonus_per_correct=0.25))
    s = s.model_copy(update={"allocation": Allocation(human_ratio=0.0, session_rounds=3, ai_fallback_mean_s=0.2,
                                                      ai_fallback_noise_sigma=0.01)})
    with running(s, sqlite_url, admin_password="pw") as base:
        good_game = await one_game(base, GOOD)
        for e in EVIL:
            await one_game(base, e)
        async with httpx.AsyncClient(base_url=base) as c:
            auth = AdminLogin("pw")
            r = await c.get("/admin/bonus.csv", auth=auth)
            assert r.status_code == 200, r.text[:300]
            paid = two_columns(r.text)
            assert paid == {GOOD: Decimal("0.75")}
            assert str(sum(paid.values())) == r.headers["x-bonus-total"] == "0.75"
            assert "99.99" not in r.text and "HYPERLINK" not in r.text and r.text.count("\n") == 1
            table = list(csv.DictReader(io.StringIO((await c.get("/admin/bonus_games.csv", auth=auth)).text)))
            assert [(x["prolific_pid"], x["status"], x["game_ids"]) for x in table if x["status"] == "paid"] == \
                [(GOOD, "paid", good_game)]
            flagged = [x for x in table if x["status"] == "not paid: unverified Prolific id"]
            assert len(flagged) == 3 and all(not x["prolific_pid"].startswith("=") for x in flagged)
            # the raw participants export flags the ids
            raw = (await c.get("/admin/export/participants.csv", auth=auth))
            assert raw.status_code == 200
            rows = list(csv.DictReader(io.StringIO(raw.text)))
            assert sorted(x["prolific_pid_unverified"] for x in rows) == ["False", "True", "True", "True"]
    out = tmp_path / "bonus.csv"
    r = await asyncio.to_thread(CliRunner().invoke, cli, ["admin", "bonus", str(out), "--db", sqlite_url])
    assert r.exit_code == 0, r.output
    said = re.search(r"(\d+) bonuses, ([0-9.]+) in total", r.output)
    cli_paid = two_columns(out.read_text())
    assert cli_paid == {GOOD: Decimal("0.75")} and said.group(1) == "1"
    assert Decimal(said.group(2)) == sum(cli_paid.values())
    assert "3 lines not paid" in r.output
