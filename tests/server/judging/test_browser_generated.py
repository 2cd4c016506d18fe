"""Generated items on the judge page in Chromium (issue 26): AI-AI conversations made by
`static conversations` (a repeating model double, re-sampled) beside imported human-human ones,
judged speaker by speaker; and generated word responses dealt beside human responses."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parents[2]))
from static_judge_data import chromium_on, submit_item  # noqa: E402

from tests.server.judging.test_browser_static import answer  # noqa: E402
from tests.statictests.generate_doubles import fake_chat, stuck_first_attempt  # noqa: E402
from turinglab.server.judging.pages import create_static_app  # noqa: E402
from turinglab.statictests import conversations as cv  # noqa: E402
from turinglab.statictests.config import Session, preset_study  # noqa: E402
from turinglab.statictests.failures import Rules  # noqa: E402
from turinglab.statictests.speakers import speaker_report  # noqa: E402
from turinglab.store.api import Store  # noqa: E402
from turinglab.store.static import ResponseIn, StimulusIn  # noqa: E402

pytestmark = pytest.mark.browser


async def judge_all(browser, base: str, task: str) -> tuple[str, list[list[str]]]:
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
        sel = "#transcript li" if task == "conversation" else "#cue"
        shown.append(await page.eval_on_selector_all(sel, "es => es.map(e => e.textContent)"))
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
