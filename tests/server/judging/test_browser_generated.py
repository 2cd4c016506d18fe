"""Generated items on the judge page in Chromium (issue 26): AI-AI conversations made by
`static conversations` (a repeating model double, re-sampled) beside imported human-human ones,
judged speaker by speaker; generated word responses dealt beside human responses, from a model
double and from the real embedded local model (`static generate --task word`, offline, 20 cues)."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parents[2]))
from static_judge_data import chromium_on, submit_item  # noqa: E402

from tests.server.judging.test_browser_static import answer  # noqa: E402
from tests.statictests.generate_doubles import fake_chat, stuck_first_attempt  # noqa: E402
from turinglab.server.judging.pages import create_static_app  # noqa: E402
from turinglab.statictests import conversations as cv  # noqa: E402
from turinglab.game.static_config import Session, preset_study  # noqa: E402
from turinglab.statictests.failures import Rules  # noqa: E402
from turinglab.analysis.static.speakers import speaker_report  # noqa: E402
from turinglab.store.api import Store  # noqa: E402
from turinglab.store.static import ResponseIn, StimulusIn  # noqa: E402

pytestmark = pytest.mark.browser


async def judge_all(browser, base: str, task: str, pages: list[str] | None = None) -> tuple[str, list[list[str]]]:
    """A judge's whole session in a new page: the judge's id and what each item showed (a word
    item: its cue and response; a conversation: its lines); each item's HTML into `pages`."""
    page = await (await browser.new_context(viewport={"width": 1280, "height": 900})).new_page()
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    await page.goto(base + "/")
    await page.click("text=Start")
    await page.check("input[name=agree]")
    await page.click("text=Continue")
    shown = []
    while True:
        await page.wait_for_selector("#answer-form, #survey-form")
        if await page.is_visible("#survey-form"):
            break
        sel = "#transcript li" if task == "conversation" else "#cue, #response"
        shown.append(await page.eval_on_selector_all(sel, "es => es.map(e => e.textContent)"))
        if pages is not None:
            pages.append(await page.content())
        await answer(page, task)
        await page.wait_for_selector("#btn-submit:not([disabled])")
        await submit_item(page)
    assert errors == []
    return page.url.rstrip("/").rsplit("/", 1)[1], shown


async def test_generated_conversations_play_with_per_speaker_truth(chromium_path, sqlite_url, tmp_path, monkeypatch):
    monkeypatch.setenv("TURINGLAB_CACHE_DIR", str(tmp_path / "cache"))
    out = await asyncio.to_thread(cv.generate, [("fake", "fake")], 2, 3, Rules(min_exchanges=3),
                                  make_witness=stuck_first_attempt(), configs={"fake": {}})
    assert len(out.log) == 2 and len(out.made) == 2  # each first attempt repeated itself and was re-sampled
    hh = tmp_path / "hh.jsonl"
    hh.write_text("".join(json.dumps({"conversation": c, "speaker": "ab"[k % 2], "text": f"<b>{c} says {k}</b>"}) + "\n"
                          for c in ("x", "y") for k in range(6)))
    stimuli, items, short = cv.chunk(cv.read_human_jsonl(hh) + out.made, (3,))
    assert short == 0 and len(items) == 4
    cfg = preset_study("gen", "conversation").model_copy(
        update={"conversation_lengths": (3,), "session": Session(items=2, min_rt_ms=0)})
    with Store(sqlite_url) as st:
        sid = st.import_static(cfg, stimuli, items)
        by_id = {i.id: i for i in st.items(sid)}
    app = create_static_app(cfg, sqlite_url, rng_seed=5)
    async with chromium_on(app, chromium_path) as (browser, base):
        judge, shown = await judge_all(browser, base, "conversation")
    with Store(sqlite_url) as st:
        trials = st.trials(sid, judge_id=judge)
        rep = speaker_report(st, sid)
    got = [by_id[t.response_id] for t in trials]
    assert len(got) == 2 and {i.truth for i in got} == {"human", "machine"}
    for item, lines in zip(got, shown):
        assert [ln.endswith(t["text"]) for ln, t in zip(lines, item.payload["turns"])] == [True] * 6
        assert "fake" not in " ".join(lines)  # never the agent
    assert all(t.answers["speakers"] == {"A": "human", "B": "machine"} for t in trials)
    rows = {(r["speaker"], r["truth"]): r["judged_human"] for r in rep["speakers"]}
    assert rows == {("A", "human"): 1, ("A", "machine"): 1, ("B", "human"): 0, ("B", "machine"): 0}


async def test_generated_words_are_dealt_beside_human_responses(chromium_path, sqlite_url, tmp_path, monkeypatch):
    from turinglab.statictests.generate import ModelConfig, generate_words

    monkeypatch.setenv("TURINGLAB_CACHE_DIR", str(tmp_path / "cache"))
    cues = ["come", "wing", "nepal", "synaptic"]
    cfg = preset_study("w", "word").model_copy(update={"session": Session(items=4, min_rt_ms=0), "ask_gender": False})
    with Store(sqlite_url) as st:
        sid = st.register_static_study(cfg)
        st.add_items(sid, [StimulusIn(c, text=c, fields={"index": i}) for i, c in enumerate(cues)],
                     [ResponseIn(f"{c}/h", c, "human" + c, "human", "p1") for c in cues])
        rep = await asyncio.to_thread(generate_words, st, sid, ModelConfig(), agent="fake-lm",
                                      chat=fake_chat({c: ["", c[::-1]] for c in cues}))
        assert rep.stored == 4 and rep.unusable["empty"] == 4
    app = create_static_app(cfg, sqlite_url, rng_seed=2)
    async with chromium_on(app, chromium_path) as (browser, base):
        judge, shown = await judge_all(browser, base, "word")
    with Store(sqlite_url) as st:
        items = {i.id: i for i in st.items(sid)}
        trials = st.trials(sid, judge_id=judge)
    got = [items[t.response_id] for t in trials]
    assert sorted(i.agent for i in got) == ["fake-lm", "fake-lm", "p1", "p1"]
    assert len({i.stimulus_key for i in got}) == 4
    for i in got:
        assert (i.text == i.stimulus_key[::-1]) == (i.agent == "fake-lm")


ROOT = Path(__file__).resolve().parents[3]
WORD = ROOT / "turinglab" / "statictests" / "zhang2023" / "word.json"


def offline(*args: str, env: dict) -> tuple[subprocess.CompletedProcess, float]:
    """`python -m turinglab ARGS` with no network but loopback (unshare -n), and its seconds."""
    cmd = ["unshare", "-n", "sh", "-c", 'ip link set lo up; exec "$0" "$@"', sys.executable, "-m", "turinglab", *args]
    t0 = time.monotonic()
    r = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=900)
    assert r.returncode == 0, r.stderr + r.stdout
    return r, time.monotonic() - t0


@pytest.mark.localmodel
async def test_local_model_words_for_20_cues_are_judged_beside_human_responses(chromium_path, tmp_path):
    """The issue's check: offline, the real local model answers 20 cues of Zhang's word data, its
    words are stored as an agent, and a judge in Chromium is dealt them beside human responses."""
    data = json.loads(WORD.read_text())
    cues = list(data)[:20]
    rows = tmp_path / "human.jsonl"
    rows.write_text("".join(json.dumps({"stimulus_id": c, "task": "word", "text": c, "response": r["response"],
                                        "truth": "human", "agent": "human"}) + "\n"
                            for c in cues for r in data[c] if r["groundtruth"] == "human"))
    study = tmp_path / "study.yaml"
    study.write_text("preset: zhang-2023\nname: zw20\ntask: word\nsession: {items: 10, min_rt_ms: 0}\n"
                     "ask_gender: false\n")
    db = f"sqlite:///{tmp_path / 't.db'}"
    env = {**os.environ, "PYTHONPATH": str(ROOT), "TURINGLAB_CACHE_DIR": str(tmp_path / "cache"),
           "TURINGLAB_LOCAL_THREADS": "1"}
    offline("static", "import", "--format", "plain", "--task", "word", "--responses", str(rows), "--study", "zw20",
            "--study-file", str(study), "--db", db, env=env)
    r, seconds = offline("static", "generate", "--study", "zw20", "--task", "word", "--limit", "20", "--db", db,
                         "--report", str(tmp_path / "rep.json"), env=env)
    rep = json.loads((tmp_path / "rep.json").read_text())
    print(f"\nlocal model, 20 cues, offline, 1 thread: {seconds:.1f} s for the command; report: "
          f"{json.dumps({k: rep[k] for k in ('stored', 'model_calls', 'unusable_answers', 'seconds')})}")
    agent = "qwen2.5-coder-1.5b-instruct-q4_k_m"
    assert f"responses stored as agent {agent!r} (20 cues asked" in r.stdout
    assert rep["asked"] == 20 and rep["stored"] + len(rep["failed_stimuli"]) == 20 and rep["stored"] >= 15
    assert rep["model_calls"] == rep["stored"] + sum(rep["unusable_answers"].values())  # no answer uncounted
    with Store(db) as st:
        info = st.static_study("zw20")
        gen = {i.stimulus_key: i for i in st.items(info.id) if i.agent == agent}
    assert len(gen) == rep["stored"] and set(gen) <= set(cues)
    for i in gen.values():
        assert i.truth == "machine" and len(i.text.split()) == 1 and i.text.lower() != i.stimulus_key.lower()
        assert i.payload["settings"]["model"] == "local" and i.payload["raw"].strip()

    app = create_static_app(info.study, db, rng_seed=3)
    async with chromium_on(app, chromium_path) as (browser, base):
        html: list[str] = []
        judge, shown = await judge_all(browser, base, "word", html)
    with Store(db) as st:
        items = {i.id: i for i in st.items(info.id)}
        trials = st.trials(info.id, judge_id=judge)
    got = [items[t.response_id] for t in trials]
    assert sorted(i.agent for i in got) == ["human"] * 5 + [agent] * 5  # half human, half the local model
    assert [(i.stimulus_key, i.text) for i in got] == [(c.strip(), w.strip()) for c, w in shown]
    assert not any("qwen" in h.lower() for h in html)  # the agent never reaches the page
