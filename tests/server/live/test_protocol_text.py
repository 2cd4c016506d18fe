"""One validation at the boundary: the fast path refuses exactly what the full model refuses;
text no database can hold (NUL, unpaired surrogates) is refused; what is already stored exports."""

from __future__ import annotations

import json
import subprocess
import sys

import httpx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from turinglab.server.live import protocol as proto
from tests.server.live.test_server import in_game, players, running, study
from tests.server.live.test_server_integrity import said

ANY_TEXT = st.text(st.characters(codec=None, categories=None), max_size=30) | st.sampled_from(
    ["x\ud800y", "a\x00b", "\udfff", "ok", "", "A", "B", "z" * 65])
VALUE = ANY_TEXT | st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.lists(st.integers(),
                                                                                                      max_size=2)
FRAME = st.fixed_dictionaries({"type": st.just("message")}, optional={
    "text": VALUE, "client_id": VALUE, "conv": VALUE | st.sampled_from(["A", "B"]), "extra": VALUE})


def _full(data: dict):
    try:
        return proto._adapter.validate_python(data).model_dump()
    except Exception:  # noqa: BLE001 - refused
        return None


@settings(max_examples=600, deadline=None)
@given(FRAME)
def test_the_fast_path_accepts_exactly_what_the_full_model_accepts(data):
    raw = json.dumps(data)
    try:
        got = proto.parse(raw).model_dump()
    except proto.BadFrame:
        got = None
    assert got == _full(json.loads(raw))


@pytest.mark.parametrize("text", ["x\ud800y", "a\x00b", "\udc00"])
def test_text_no_database_holds_is_a_bad_frame(text):
    for frame in ({"type": "message", "text": text, "client_id": "c1"},
                  {"type": "message", "text": "hi", "client_id": text},
                  {"type": "verdict", "choice": "human", "confidence": 50, "reason": text},
                  {"type": "report", "reason": text}):
        with pytest.raises(proto.BadFrame, match="NUL character or an unpaired surrogate"):
            proto.parse(json.dumps(frame))


async def test_nul_and_surrogates_are_refused_at_the_boundary_and_the_game_goes_on(db_url):
    with running(study(), db_url) as base:
        seats = await in_game(await players(base, 2))
        i = seats["interrogator"]
        r = await said(i, "x\ud800y")
        assert r["type"] == "error" and r["code"] == "bad_frame", r  # the fast path refuses it
        await i.send({"type": "verdict", "choice": "human", "confidence": 50, "reason": "a\x00b"})
        assert (await i.next("error"))["code"] == "bad_frame"
        await i.send({"type": "verdict", "choice": "human", "confidence": 50, "reason": "ab"})
        st_ = await i.phase("reveal")
        assert st_["game"]["verdict"]["reason"] == "ab"
        async with httpx.AsyncClient(base_url=base) as c:
            r = await c.get("/?PROLIFIC_PID=%00")
            assert r.status_code == 400 and "PROLIFIC_PID" in r.text
            r = await c.get("/?PROLIFIC_PID=abc&SESSION_ID=x%00y")
            assert r.status_code == 400 and "SESSION_ID" in r.text
            assert (await c.get("/p/p%00")).status_code == 404
            c.cookies.set("turinglab_p", "p%00")
            assert (await c.get("/?PROLIFIC_PID=abc")).status_code == 200  # the Start button (issue 24)
            assert (await c.post("/start?PROLIFIC_PID=abc")).status_code == 303


def test_exports_tolerate_text_already_stored(db_url, tmp_path):
    """Text an older version stored (an unpaired surrogate in a chat message) exports."""
    from turinglab.game.config import Rules, Study
    from turinglab.game.engine import Game, GiveVerdict, Send
    from turinglab.store.api import Store

    with Store(db_url) as store:
        sid = store.register_study(Study(name="bad-text"))
        for _ in range(2):
            i, w = store.create_participant(), store.create_participant()
            g = Game.start("two-player", Rules(), 1000)
            g.apply(Send("interrogator", "x\ud800y", "A"), 2000)
            g.apply(Send("A", "fine \udfff", "A"), 3000)
            g.apply(GiveVerdict("interrogator", "human", 70, "why"), 4000)
            gid = store.create_game(sid, "two-player", {"A": {"kind": "human", "participant_id": w}}, i, 1000)
            store.append_events(gid, g.log)
    def cli(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "turinglab", *args, "--db", db_url], capture_output=True,
                              text=True, timeout=300)
    r = cli("db", "show", gid, "--json")
    assert r.returncode == 0, r.stderr
    texts = [e["payload"].get("text") for e in json.loads(r.stdout)["events"] if e["type"] == "message"]
    assert texts[0].startswith("x\ufffd") and texts[0].endswith("y")
    r = cli("export", "--out", str(tmp_path / "ds"))
    assert r.returncode == 0, r.stderr
    assert "x\ufffd" in (tmp_path / "ds" / "messages.csv").read_text(encoding="utf-8")
    r = cli("report", "--out", str(tmp_path / "r.html"))
    assert r.returncode == 0, r.stderr
