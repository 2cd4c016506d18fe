"""LLM witness against real loopback HTTP servers: requests, errors, fallback, Retry-After.

The servers here are tiny real HTTP servers speaking the OpenAI chat-completions shape; the
real local model is exercised in test_local_model.py.
"""

from __future__ import annotations

import json
import sys
import socket
import time
from datetime import datetime, timedelta, timezone
from http.server import BaseHTTPRequestHandler
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parents[1]))
import loopback_model  # noqa: E402

from turinglab.game.config import Postprocess, WitnessSpec  # noqa: E402
from turinglab.witnesses.base import GameContext, Turn  # noqa: E402
from turinglab.witnesses.llm import LLMWitness, WitnessConfigError, to_messages  # noqa: E402

T0 = datetime(2026, 11, 22, 15, 0, tzinfo=timezone.utc)
CTX = GameContext(game_id="g1", started_at=T0, now=T0 + timedelta(seconds=20), time_limit_s=300, max_chars=300)
HISTORY = [Turn("interrogator", "hi", 0), Turn("witness", "hey", 1), Turn("interrogator", "where are you from?", 2)]


def completion(text: str) -> dict:
    return {
        "id": "c1", "object": "chat.completion", "created": 0, "model": "m",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 12, "completion_tokens": 5, "total_tokens": 17, "cost": 0.0001},
    }


class Script:
    """What the loopback server answers, request by request: (status, headers, body, sleep_s)."""

    def __init__(self, steps):
        self.steps = list(steps)
        self.requests: list[tuple[float, dict]] = []


def serve(script: Script):
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *a):  # quiet
            pass

        def do_POST(self):
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            script.requests.append((time.monotonic(), body))
            status, headers, payload, sleep_s = script.steps.pop(0) if len(script.steps) > 1 else script.steps[0]
            if sleep_s:
                time.sleep(sleep_s)
            data = json.dumps(payload).encode()
            try:
                self.send_response(status)
                for k, v in headers.items():
                    self.send_header(k, v)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)
            except (BrokenPipeError, ConnectionResetError):
                pass

    return loopback_model.start(Handler)


@pytest.fixture
def loopback():
    yield from loopback_model.servers(lambda *steps: Script(steps), serve)


def spec(url: str, **kw) -> WitnessSpec:
    base = dict(codename="Sierra", kind="llm", model="test-model", base_url=url, api_key_env="TL_TEST_KEY",
                timeout_s=2.0, retries=0, prompt="young", temperature=0.7, max_tokens=33, stop=("\n\n",))
    return WitnessSpec(**{**base, **kw})


async def test_request_carries_the_spec_and_the_conversation(loopback, monkeypatch):
    monkeypatch.setenv("TL_TEST_KEY", "sk-secret")
    script, url = loopback((200, {}, completion("**manchester**, you?"), 0))
    w = LLMWitness(spec(url, persona={"name": "Robin", "city": "Leeds"}), seed=5)
    await w.start(CTX)
    r = await w.reply(HISTORY, CTX)
    assert r.text == "manchester, you?"  # markdown stripped by the default post-processing
    assert r.meta["raw"] == "**manchester**, you?"
    assert (r.fallback, r.error, r.tokens, r.cost) == (False, None, 5, 0.0001)
    body = script.requests[0][1]
    assert body["model"] == "test-model" and body["temperature"] == 0.7 and body["max_tokens"] == 33
    assert body["stop"] == ["\n\n"] and body["seed"] == 6
    roles = [m["role"] for m in body["messages"]]  # the young prompt's example chat comes before the game
    assert roles[0] == "system" and roles[-4:] == ["system", "user", "assistant", "user"] and roles.count("system") == 2
    after = body["messages"][-4]["content"]  # the persona follows the fixed part and the examples (prompt cache)
    assert "Robin" in after and "Leeds" in after and "Robin" not in body["messages"][0]["content"]
    assert body["messages"][-1]["content"] == "where are you from?"
    await w.close()


async def test_http_500_falls_back_to_eliza_and_logs(loopback, caplog):
    script, url = loopback((500, {}, {"error": {"message": "boom"}}, 0))
    w = LLMWitness(spec(url, retries=1), seed=1)
    await w.start(CTX)
    with caplog.at_level("WARNING", logger="turinglab.witnesses"):
        r = await w.reply([Turn("interrogator", "I am unhappy.", 0)], CTX)
    assert r.fallback is True and "500" in r.error
    assert r.text and r.text == r.text.strip()
    assert len(script.requests) == 2  # one retry, then the fallback
    assert "fallback" in caplog.text and "Sierra" in caplog.text
    await w.close()


async def test_fixed_text_fallback_on_timeout(loopback):
    script, url = loopback((200, {}, completion("too late"), 3.0))
    w = LLMWitness(spec(url, timeout_s=0.5, fallback="sorry, my wifi is dying"), seed=1)
    t0 = time.monotonic()
    r = await w.reply(HISTORY, CTX)
    assert time.monotonic() - t0 < 2.5
    assert r.fallback and r.text == "sorry, my wifi is dying" and "Timeout" in r.error
    await w.close()


async def test_stopped_server_falls_back(monkeypatch):
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    sock.close()  # nothing listens there now
    w = LLMWitness(spec(f"http://127.0.0.1:{port}/v1", fallback="eliza"), seed=1)
    r = await w.reply([Turn("interrogator", "My mother hates me.", 0)], CTX)
    assert r.fallback and "Connection" in r.error
    assert len(r.text) > 0
    await w.close()


async def test_retry_after_is_honoured(loopback):
    script, url = loopback(
        (429, {"Retry-After": "1"}, {"error": {"message": "slow down"}}, 0),
        (200, {}, completion("ok fine"), 0),
    )
    w = LLMWitness(spec(url, retries=2), seed=1)
    r = await w.reply(HISTORY, CTX)
    assert r.text == "ok fine" and not r.fallback
    (t1, _), (t2, _) = script.requests
    assert t2 - t1 >= 0.95  # waited as told, not the client's default sub-second backoff


async def test_empty_answer_uses_fallback(loopback):
    script, url = loopback((200, {}, completion("   "), 0))
    w = LLMWitness(spec(url, fallback="hm?"), seed=1)
    r = await w.reply(HISTORY, CTX)
    assert r.fallback and r.text == "hm?" and "EmptyReply" in r.error


async def test_postprocess_applies_to_model_text(loopback):
    long = "Honestly " + "really " * 80 + "tired"
    script, url = loopback((200, {}, completion(long), 0))
    w = LLMWitness(spec(url, postprocess=Postprocess(lowercase=True)), seed=1)
    ctx = GameContext(game_id="g", started_at=T0, now=T0, time_limit_s=300, max_chars=40)
    r = await w.reply(HISTORY, ctx)
    assert len(r.text) <= 40 and r.text.startswith("honestly really") and not r.text.endswith(" ")


def test_missing_key_is_a_clear_error(monkeypatch):
    monkeypatch.delenv("TL_NO_SUCH_KEY", raising=False)
    with pytest.raises(WitnessConfigError, match="TL_NO_SUCH_KEY"):
        LLMWitness(WitnessSpec(codename="X", kind="llm", model="gpt-4o-mini", api_key_env="TL_NO_SUCH_KEY"))


def test_roles_map_interrogator_to_user():
    msgs = to_messages("sys", HISTORY)
    assert msgs[0] == {"role": "system", "content": "sys"}
    assert [m["role"] for m in msgs[1:]] == ["user", "assistant", "user"]


async def test_retries_stop_at_the_overall_budget(loopback):
    """A model that keeps failing slowly is given up on after timeout_s, whatever `retries` says."""
    script, url = loopback((503, {"Retry-After": "1"}, {"error": {"message": "busy"}}, 0.3))
    w = LLMWitness(spec(url, timeout_s=1.5, retries=5, fallback="one sec"), seed=1)
    t0 = time.monotonic()
    r = await w.reply(HISTORY, CTX)
    assert r.fallback and r.text == "one sec"
    assert 1.4 < time.monotonic() - t0 < 2.5
    assert 1 <= len(script.requests) <= 2


async def test_budget_never_runs_past_the_game_end(loopback):
    script, url = loopback((200, {}, completion("late"), 3.0))
    w = LLMWitness(spec(url, timeout_s=30.0, fallback="hm"), seed=1)
    near_end = GameContext(game_id="g", started_at=T0, now=T0 + timedelta(seconds=298.5), time_limit_s=300,
                           max_chars=300)
    t0 = time.monotonic()
    r = await w.reply(HISTORY, near_end)
    assert r.fallback and time.monotonic() - t0 < 2.0  # 1.5 s left, floored at 1 s


async def test_witnesses_share_one_client_and_close_leaves_it_open(loopback, monkeypatch):
    monkeypatch.setenv("TL_TEST_KEY", "sk-secret")
    script, url = loopback((200, {}, completion("fine thanks"), 0))
    w1, w2 = LLMWitness(spec(url)), LLMWitness(spec(url))
    c1, c2 = await w1.client(), await w2.client()
    assert c1 is c2  # one client (and connection pool) for the same settings
    assert await LLMWitness(spec(url, timeout_s=3.0)).client() is not c1  # other settings: another client
    await w1.start(CTX)
    assert (await w1.reply(HISTORY, CTX)).fallback is False
    await w1.close()
    assert not c1.is_closed()  # another witness still uses it
    await w2.start(CTX)
    r = await w2.reply(HISTORY, CTX)
    assert (r.text, r.fallback) == ("fine thanks", False)
    await w2.close()
    assert len(script.requests) == 2


async def test_a_machine_task_is_answered_with_a_steer_to_brush_it_off(loopback, monkeypatch):
    """`answer_task` (guard/task.py's questions) sends the task steer as a last system message,
    with three brush-offs drawn per reply as examples: two replies rarely show the same three."""
    from turinglab.witnesses.llm import BRUSH_OFFS, STEER_TASK

    monkeypatch.setenv("TL_TEST_KEY", "k")
    script, url = loopback(*[(200, {}, completion("do it urself"), 0)] * 4)
    w = LLMWitness(spec(url), seed=1)
    await w.start(CTX)
    said = [(await w.answer_task(HISTORY, CTX)).text for _ in range(4)]
    assert said == ["do it urself"] * 4
    steers = [b["messages"][-1] for _, b in script.requests]
    assert all(m["role"] == "system" and m["content"].startswith(STEER_TASK.split("{")[0]) for m in steers)
    shown = [frozenset(x for x in BRUSH_OFFS if f'"{x}"' in m["content"]) for m in steers]
    assert all(len(x) == 3 for x in shown) and len(set(shown)) >= 2
    assert script.requests[-1][1]["messages"][:-1] == script.requests[0][1]["messages"][:-1]  # the conversation unchanged
    await w.close()


async def test_a_brush_off_already_said_is_not_offered_again(loopback, monkeypatch):
    """The model copies the steer's examples: one the witness has said in this conversation is not
    among them again (the same brush-off twice is a tell)."""
    from turinglab.witnesses.base import Turn
    from turinglab.witnesses.llm import BRUSH_OFFS

    monkeypatch.setenv("TL_TEST_KEY", "k")
    script, url = loopback(*[(200, {}, completion("bruh"), 0)] * 12)
    w = LLMWitness(spec(url), seed=2)
    await w.start(CTX)
    used = list(BRUSH_OFFS[:6])
    history = [t for x in used for t in (Turn("interrogator", "write me code", 0), Turn("witness", x, 0))]
    for _ in range(12):
        await w.answer_task(history + [Turn("interrogator", "are you a bot", 0)], CTX)
    offered = {x for _, b in script.requests for x in BRUSH_OFFS if f'"{x}"' in b["messages"][-1]["content"]}
    assert offered and not offered & set(used)
    await w.close()


async def test_a_regenerated_reply_is_steered_back_into_persona(loopback, monkeypatch):
    """The guard's second ask carries the steer as a last system message; a first ask does not."""
    from turinglab.witnesses.llm import STEER

    monkeypatch.setenv("TL_TEST_KEY", "k")
    script, url = loopback((200, {}, completion("i'm just a program"), 0), (200, {}, completion("lol no"), 0))
    w = LLMWitness(spec(url), seed=1)
    await w.start(CTX)
    first, again = await w.reply(HISTORY, CTX), await w.regenerate(HISTORY, CTX)
    assert (first.text, again.text) == ("i'm just a program", "lol no")
    plain, steered = (b["messages"] for _, b in script.requests)
    assert plain[-1] == {"role": "user", "content": "where are you from?"}
    assert steered[:-1] == plain and steered[-1] == {"role": "system", "content": STEER}
    assert again.meta["steered"] and not first.meta["steered"]
    await w.close()


async def test_a_prompts_example_chat_is_sent_as_earlier_turns(loopback, monkeypatch, tmp_path):
    monkeypatch.setenv("TL_TEST_KEY", "k")
    tpl = tmp_path / "shots.j2"
    tpl.write_text("You are {{ persona.name }}.\n<example-chat>\nthem: r u a bot\nyou: lol no\n"
                   "them: pets?\nyou: a cat\n</example-chat>\nIt is {{ now_time }}.\n", encoding="utf-8")
    other = CTX.__class__(**{**CTX.__dict__, "started_at": T0 + timedelta(hours=3), "now": T0 + timedelta(hours=3)})
    script, url = loopback((200, {}, completion("leeds"), 0))
    w = LLMWitness(spec(url, prompt=str(tpl), persona={"name": "Robin"}), seed=1)
    await w.start(CTX)
    await w.reply(HISTORY, CTX)
    msgs = [b for _, b in script.requests][-1]["messages"]
    assert msgs[0] == {"role": "system", "content": "You are Robin."}
    assert [(m["role"], m["content"]) for m in msgs[1:5]] == [("user", "r u a bot"), ("assistant", "lol no"),
                                                               ("user", "pets?"), ("assistant", "a cat")]
    assert msgs[5]["role"] == "system" and msgs[5]["content"].startswith("It is ")  # the times, after the examples
    assert msgs[6:] == to_messages("", HISTORY)[1:]
    # another game: only the part after the examples changes (the prompt cache keeps the rest)
    w2 = LLMWitness(spec(url, prompt=str(tpl), persona={"name": "Robin"}), seed=1)
    await w2.start(other)
    await w2.reply(HISTORY, other)
    msgs2 = script.requests[-1][1]["messages"]
    assert msgs2[:5] == msgs[:5] and msgs2[5] != msgs[5]
    await w.close()
    await w2.close()


def test_a_broken_example_chat_names_the_line():
    from turinglab.witnesses.persona import PersonaError, split_examples

    with pytest.raises(PersonaError, match="'me: hi'"):
        split_examples("x\n<example-chat>\nthem: hey\nme: hi\n</example-chat>\n")
    assert split_examples("no block") == ("no block", [], "")


class _LoopbackLocal:
    """Stands in for the embedded model's server process: the same HTTP API on loopback."""

    def __init__(self, url: str) -> None:
        self.url = url

    async def astart(self) -> str:
        return self.url


async def test_a_timed_out_first_reply_does_not_cancel_the_shared_prompt_pre_read(loopback):
    """Issue 23: the first reply's budget ran out while it waited for the pre-read; wait_for cancelled
    the shared pre-read task, and every later reply raised CancelledError (not an Exception)."""
    import asyncio as _asyncio

    script, url = loopback(
        (200, {}, completion("x"), 4.0),          # the pre-read (max_tokens 1) stalls past the first budget
        (200, {}, completion("im from leeds"), 0),
    )
    w = LLMWitness(spec(None, kind="local", model=None, base_url=None, timeout_s=2.0, fallback="hold on a sec"),
                   seed=1, local_server=_LoopbackLocal(url))
    await w.start(CTX)
    warm = w._warm
    first = await w.reply(HISTORY, CTX)  # gives up after 2 s, still waiting for the pre-read
    assert first.fallback and first.text == "hold on a sec"
    assert not warm.cancelled()  # the pre-read was shielded, not cancelled
    await _asyncio.wait_for(_asyncio.shield(warm), 10)  # and it finishes on its own
    assert not warm.cancelled()
    second = await w.reply(HISTORY, CTX)
    assert not second.fallback and second.text == "im from leeds"
    assert [b["max_tokens"] for _, b in script.requests] == [1, 33]  # the pre-read, then one real request
    await w.close()


async def test_a_cancelled_pre_read_gives_the_fallback_not_a_cancelled_error(loopback):
    """A pre-read cancelled by someone else (a shutdown, another game's close) only costs the prompt
    cache: the reply that waited on it is asked for as usual, and no CancelledError comes out."""
    script, url = loopback((200, {}, completion("x"), 3.0), (200, {}, completion("hey"), 0))
    w = LLMWitness(spec(None, kind="local", model=None, base_url=None, timeout_s=10.0, fallback="one sec"),
                   seed=1, local_server=_LoopbackLocal(url))
    await w.start(CTX)
    import asyncio as _asyncio

    loop = _asyncio.get_running_loop()
    loop.call_later(0.3, w._warm.cancel)
    r = await w.reply(HISTORY, CTX)
    assert r.text == "hey" and not r.fallback  # the reply goes on without the pre-read; no CancelledError
    await w.close()
