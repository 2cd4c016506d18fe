"""Issue 27: Prolific end to end against a real server. A participant is walked through each
outcome of the study file's `prolific.completion_codes` (completed, no consent, screened out as
a repeat, timed out waiting alone, returned while recruitment is paused); each page shows its
code and sends the browser on to the study's redirect with it. Then the bonus file."""

from __future__ import annotations

import asyncio
import hashlib
import html
import re

import httpx
from typer.testing import CliRunner

from tests.server.live.test_server import ELIZA, running, study
from turinglab.cli import app as cli
from turinglab.game.config import Allocation, Prolific
from turinglab.server.admin_actions import take
from turinglab.server.testing import WsPlayer, csrf_token
from turinglab.store.api import Store

CODES = {"completed": "C0MPLETE", "no_consent": "NOCONSENT", "screened_out": "SCREENED", "timed_out": "TIMEDOUT",
         "returned": "RETURNED"}
REDIRECT = "https://example.org/submissions/complete?cc={code}"
PROLIFIC = Prolific(completion_codes=CODES, redirect=REDIRECT, block_repeat=True, bonus_per_game=0.5,
                    bonus_per_correct=0.25)


def hexid(name: str) -> str:
    """A Prolific-shaped id (24 lowercase hex) for a short name."""
    return hashlib.sha256(name.encode()).hexdigest()[:24]


def q(pid: str) -> str:
    return f"?PROLIFIC_PID={hexid(pid)}&STUDY_ID=st1&SESSION_ID=se-{pid}"


def check_code(r: httpx.Response, outcome: str, done: bool = False) -> None:
    """The page shows the outcome's code and refreshes to the redirect carrying it (the done page,
    which offers withdrawal: after the study's countdown, issue 38)."""
    assert r.status_code == 200, (r.status_code, r.text[:300])
    code = CODES[outcome]
    shown = re.search(r'id="completion-code"[^>]*>([^<]+)<', r.text)
    assert shown and shown.group(1) == code, r.text[:600]
    refresh = re.search(r'<meta http-equiv="refresh" content="(\d+);url=([^"]+)">', r.text)
    if done:
        assert refresh is None and 'id="done-countdown" data-seconds="60" data-href="https://example.org/' in r.text and "withdraw-form" in r.text
    else:
        assert refresh and html.unescape(refresh.group(2)) == REDIRECT.format(code=code)
        assert 0 < int(refresh.group(1)) <= 5
    assert f'href="{html.escape(REDIRECT.format(code=code))}"' in r.text  # a link too, if refresh is off
    others = set(CODES.values()) - {code}
    assert not any(o in r.text for o in others)


async def test_each_outcome_shows_its_code_and_redirects(sqlite_url, tmp_path):
    s = study(ratio=0.0, witnesses=(ELIZA,), prolific=PROLIFIC).model_copy(update={
        "allocation": Allocation(human_ratio=0.0, session_rounds=1, ai_fallback_mean_s=0.2,
                                 ai_fallback_noise_sigma=0.01)})
    with running(s, sqlite_url, admin_poll_s=0.2) as base:
        # completed: one round (the study's session_rounds) against the AI, then "Finish the study"
        p = await (await WsPlayer.create(base, query=q("pA"))).connect()
        await p.phase("idle")
        await p.send({"type": "join"})
        await p.phase("game")
        await p.send({"type": "message", "conv": "A", "text": "hello there", "client_id": "c1"})
        await p.next("message")
        await p.send({"type": "verdict", "choice": "ai", "confidence": 90})
        await p.phase("reveal")
        await p.send({"type": "join"})
        done = await p.phase("done")
        assert done["participant"]["completion_url"] == REDIRECT.format(code=CODES["completed"])
        await p.close()
        async with httpx.AsyncClient(base_url=base, cookies={"turinglab_p": p.pid}) as c:
            check_code(await c.get(f"/p/{p.pid}/done"), "completed", done=True)
            # the same browser following the study link again goes back to its own page, not screened out
            r = await c.get("/" + q("pA"))
            assert r.status_code == 303 and r.headers["location"] == f"/p/{p.pid}"
        # screened out: the same Prolific id from another browser (block_repeat); nobody is created
        with Store(sqlite_url, upgrade=False) as store:
            n_before = len(store.participants())
        async with httpx.AsyncClient(base_url=base) as c:
            check_code(await c.get("/" + q("pA")), "screened_out")
            check_code(await c.post("/start" + q("pA")), "screened_out")
        with Store(sqlite_url, upgrade=False) as store:
            assert len(store.participants()) == n_before
        # no consent: "I do not agree" on the consent form
        async with httpx.AsyncClient(base_url=base) as c:
            r = await c.post("/start" + q("pB"))
            pid = r.headers["location"].rsplit("/", 1)[-1]
            token = csrf_token((await c.get(f"/p/{pid}")).text)
            check_code(await c.post(f"/p/{pid}/decline", data={"csrf": token}), "no_consent")
        # paused: a new arrival is asked to try again later with the same link, and is not handed the
        # `returned` code nor sent back to Prolific (issue 41: the page said both at once)
        with Store(sqlite_url, upgrade=False) as store:
            sid = store.games()[0].study_id
            n_before = len(store.participants())
            await asyncio.to_thread(take, store, sid, "rs", "pause", None, "piloting")
        await asyncio.sleep(0.6)  # the server reads the action
        async with httpx.AsyncClient(base_url=base) as c:
            for r in (await c.get("/" + q("pC")), await c.post("/start" + q("pC"))):
                assert r.status_code == 200 and "The study is paused" in r.text and "try again a little later" in r.text
                assert "completion-code" not in r.text and 'http-equiv="refresh"' not in r.text
                assert not set(CODES.values()) & set(re.findall(r"\w+", r.text))
                again = re.search(r'<a class="button" href="([^"]+)">Try again</a>', r.text)
                assert again and html.unescape(again.group(1)) == "/" + q("pC")
        with Store(sqlite_url, upgrade=False) as store:
            assert len(store.participants()) == n_before  # nobody was created
        # the bonus file: 0.50 per game + 0.25 per right verdict, Prolific's bulk-bonus lines
        out = tmp_path / "bonus.csv"
        r = await asyncio.to_thread(CliRunner().invoke, cli, ["admin", "bonus", str(out), "--db", sqlite_url])
        assert r.exit_code == 0, r.output
        assert out.read_text() == f"{hexid('pA')},0.75\n"


async def test_waiting_alone_times_out_with_its_code(sqlite_url):
    s = study("three-player", witnesses=(ELIZA,), prolific=PROLIFIC).model_copy(update={
        "allocation": Allocation(human_ratio=1.0, lone_wait_s=0.5, lone_then="end", ai_fallback_mean_s=0.2,
                                 ai_fallback_noise_sigma=0.01)})
    with running(s, sqlite_url) as base:
        p = await (await WsPlayer.create(base, query=q("pT"))).connect()
        await p.phase("idle")
        await p.send({"type": "join"})
        await p.phase("waiting")
        await p.phase("alone", timeout=5)
        await p.close()
        async with httpx.AsyncClient(base_url=base) as c:
            check_code(await c.get(f"/p/{p.pid}/done"), "timed_out", done=True)
