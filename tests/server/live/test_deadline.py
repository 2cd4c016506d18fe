"""Deadline-aware generation: a streamed reply stops where its next words would come later than
designed, cut where it still reads naturally; a reply with no words by the time a short reply is
due gives way to the fallback, on time. Against a real loopback server that streams tokens with set gaps (the
real local model: test_local_model.py)."""

from __future__ import annotations

import json
import sys
import threading
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parents[2]))
import loopback_model  # noqa: E402
from loopback_model import StreamHandler  # noqa: E402

from turinglab.game.config import WitnessSpec  # noqa: E402
from turinglab.server.testing import AdminLogin  # noqa: E402
from turinglab.witnesses.base import GameContext, Turn  # noqa: E402
from turinglab.witnesses.deadline import usable  # noqa: E402
from turinglab.witnesses.llm import DEADLINE_MARGIN_S, LLMWitness  # noqa: E402

T0 = datetime(2026, 11, 22, 15, 0, tzinfo=timezone.utc)
HISTORY = [Turn("interrogator", "what did you do this weekend?", 0)]


@pytest.mark.parametrize("text, final, expected", [
    ("", False, ""),
    ("lo", False, ""),  # the only word may still grow
    ("lo", True, "lo"),
    ("lol ", False, "lol"),
    ("lol what no", False, "lol what"),
    ("i went to the shops and", False, "i went to the shops"),  # no dangling "and"
    ("the", False, ""),
    ("so i ", False, ""),  # nothing but dangling words
    ("no idea tbh. i think it was, like", False, "no idea tbh."),  # the sentence keeps most of it
    ("nah. went to see my nan in leeds on sat", False, "nah. went to see my nan in leeds"),
    ("went out with friends,", False, "went out"),  # "friends," may go on; "with" dangles
    ("i went to the shops and", True, "i went to the shops and"),  # the model's own ending stays
])
def test_usable_prefix(text, final, expected):
    assert usable(text, final) == expected


class Stream:
    """Tokens the loopback server streams: [(gap_s before it, text)], and whether the client left."""

    def __init__(self, tokens):
        self.tokens = tokens
        self.bodies: list[dict] = []
        self.sent = 0
        self.client_left = threading.Event()


def serve_stream(stream: Stream):
    class Handler(StreamHandler):

        def do_POST(self):
            stream.bodies.append(json.loads(self.rfile.read(int(self.headers["Content-Length"]))))
            self.begin_stream()
            base = {"id": "c", "object": "chat.completion.chunk", "created": 0, "model": "m"}
            try:
                for gap, tok in stream.tokens:
                    time.sleep(gap)
                    self._chunk({**base, "choices": [{"index": 0, "delta": {"content": tok}, "finish_reason": None}]})
                    stream.sent += 1
                self._chunk({**base, "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]})
                self._chunk({**base, "choices": [], "usage": {"prompt_tokens": 50, "completion_tokens": stream.sent,
                                                              "total_tokens": 50 + stream.sent}})
                self._chunk("[DONE]")
                self.wfile.write(b"0\r\n\r\n")
            except (BrokenPipeError, ConnectionResetError):
                stream.client_left.set()

    return loopback_model.start(Handler)


@pytest.fixture
def streaming():
    yield from loopback_model.servers(Stream, serve_stream)


def witness(url: str, **kw) -> LLMWitness:
    spec = WitnessSpec(**{"codename": "Sierra", "kind": "llm", "model": "m", "base_url": url, "api_key_env": "X",
                          "timeout_s": 10.0, "retries": 0, "prompt": "young", "max_tokens": 60, **kw})
    return LLMWitness(spec, seed=1)


def ctx_due(base_s: float, s_per_char: float) -> tuple[GameContext, float]:
    """A context whose reply of n characters is due `base_s + s_per_char * n` after now."""
    start = time.monotonic()
    ctx = GameContext("g", T0, T0 + timedelta(seconds=5), 300, 300,
                      reply_due=lambda n: start + base_s + s_per_char * n - time.monotonic())
    return ctx, start


def words(text: str, gap: float, first_gap: float | None = None) -> list[tuple[float, str]]:
    toks = [w + " " for w in text.split()]
    toks[-1] = toks[-1].rstrip()
    return [(first_gap if i == 0 and first_gap is not None else gap, t) for i, t in enumerate(toks)]


async def test_no_pressure_gives_the_whole_reply(streaming):
    s, url = streaming(words("went to see my nan in leeds", 0.01))
    w = witness(url)
    ctx, _ = ctx_due(3.0, 0.3)
    r = await w.reply(HISTORY, ctx)
    assert r.text == "went to see my nan in leeds" and r.meta["deadline"] == "met"
    assert s.bodies[0]["stream"] is True and not r.fallback
    await w.close()


async def test_slow_words_are_cut_before_their_deadline(streaming):
    """The model writes slower than the designed delay grows (0.4 s a word against 0.01 s a
    character): the reply stops at a word boundary, before it is due, and is not empty."""
    text = "honestly not much just stayed in and watched films all weekend with my flatmate"
    s, url = streaming(words(text, 0.4, first_gap=0.05))
    w = witness(url)
    ctx, start = ctx_due(1.0, 0.01)
    r = await w.reply(HISTORY, ctx)
    took = time.monotonic() - start
    assert r.meta["deadline"] == "cut" and not r.fallback
    assert r.text and text.startswith(r.text) and len(r.text) < len(text)
    assert r.text.split()[-1] in text.split()  # whole words only
    assert took <= 1.0 + 0.01 * len(r.text) - DEADLINE_MARGIN_S + 0.15  # on time, with the margin
    assert r.meta["raw"].startswith(r.text)
    assert s.client_left.wait(5)  # the generation was stopped, not left running
    await w.close()


async def test_first_words_after_their_deadline_give_way_to_the_fallback_on_time(streaming, caplog):
    """Issue 23: a model with no words by the time a short reply is due gives up then (not after its
    `timeout_s`): the fallback answers when the designed reply would have come."""
    s, url = streaming(words("no idea", 0.01, first_gap=1.0))
    w = witness(url)
    ctx, start = ctx_due(0.2, 0.01)
    with caplog.at_level("WARNING", logger="turinglab.witnesses"):
        r = await w.reply(HISTORY, ctx)
    took = time.monotonic() - start
    assert r.fallback and r.text and r.text != "no idea"
    assert "NoWordsInTime" in caplog.text and "Sierra" in caplog.text
    assert took <= 0.2 + 0.01 * len(r.text) + 0.3, took  # on time (with slack), not 1 s or 10 s later
    await w.close()


async def test_a_late_start_catches_up_when_the_words_come_fast(streaming):
    """The first word comes after its own deadline, but the reply grows faster than its designed
    delay: the longer text is on time, so nothing is late and nothing is cut."""
    text = "lol no way, i spent the whole weekend at my mates house playing fifa"
    s, url = streaming(words(text, 0.01, first_gap=1.0))
    w = witness(url)
    # "lol" due at 1.1 s (less the margin: 0.8 s); nothing given up before a 10-character reply is
    # due (1.8 s, less the margin: 1.5 s); "lol no way," is on time until 1.6 s; the whole reply at 7.6 s
    ctx, _ = ctx_due(0.8, 0.1)
    r = await w.reply(HISTORY, ctx)
    assert r.text == text and r.meta["deadline"] == "met"
    await w.close()


async def test_the_message_limit_stops_generation(streaming):
    s, url = streaming(words("a b c d e f g h i j k l m n o p q r s t u v w x y z " * 4, 0.02))
    w = witness(url)
    ctx, _ = ctx_due(30.0, 0.3)
    ctx = GameContext(ctx.game_id, ctx.started_at, ctx.now, 300, 20, reply_due=ctx.reply_due)
    r = await w.reply(HISTORY, ctx)
    assert len(r.text) <= 20 and r.meta["deadline"] == "full"
    assert s.client_left.wait(5)
    await w.close()


async def test_a_server_game_shows_a_cut_reply_on_time_and_counts_it(streaming, sqlite_url):
    """End to end: a slow model (0.35 s a word) in a real server game. The reply is cut before
    its designed time, shown whole-worded, and the capacity estimate counts a cut, no late one."""
    import re

    import httpx

    from turinglab.game.config import Allocation, Rules, Study, Timing
    from turinglab.server.app import create_app
    from turinglab.server.testing import lone_player_in_game, serve_in_thread

    text = "honestly not much just stayed in and watched films all weekend with my flatmate and her dog"
    s, url = streaming(words(text, 0.35, first_gap=0.05))
    timing = Timing(base_s=1.0, s_per_char=0.01, gamma_shape=1.0, gamma_scale=0.01)
    spec = WitnessSpec(codename="Sierra", kind="llm", model="m", base_url=url, api_key_env="X", timeout_s=20.0,
                       retries=0, prompt="young", max_tokens=60, timing=timing)
    study = Study(name="deadline", rules=Rules(time_limit_s=60, typing_min_s=0.3, typing_jitter_s=0.1),
                  witnesses=[spec], allocation=Allocation(human_ratio=0.0, capacity={"Sierra": "auto"}))
    app = create_app(study, sqlite_url, rng_seed=2, initial_ai_wait_s=0.1, warm_up=True, admin_password="pw")
    with serve_in_thread(app) as base:
        p = await lone_player_in_game(app, base)
        await p.send({"type": "message", "conv": "A", "text": "what did you do this weekend?", "client_id": "c1"})
        ack = await p.next("ack", client_id="c1")
        t0 = time.monotonic()
        reply = await p.next("message", timeout=15)
        took = time.monotonic() - t0
        assert reply["text"] and text.startswith(reply["text"]) and len(reply["text"]) < len(text)
        assert reply["text"].split()[-1] not in ("and", "with", "my")
        # shown at its designed time: about 1 s + 0.01 s a character, far before the whole reply (7 s)
        assert took < 1.0 + 0.01 * len(reply["text"]) + 0.1 + 1.0
        est = app.state.hub.room.capacity.estimates["Sierra"]
        assert (est.replies, est.late, est.cut) == (1, 0, 1), est.to_dict()
        assert ack["t_ms"] > 0 and s.client_left.wait(5)  # the model's generation was stopped
        async with httpx.AsyncClient(base_url=base) as c:  # /admin shows the cut next to the late replies
            page = (await c.get("/admin", auth=AdminLogin("pw"))).text
        section = page[page.index("Model capacity"):]
        row = re.search(r"<tr><td>Sierra</td>.*?</tr>", section).group(0)
        assert re.findall(r"<td>([^<]*)</td>", row)[-4:] == ["1", "0", "1", "0"], row  # replies, late, cut, draws withheld
        await p.close()
