"""Zhang et al.'s judge protocol in a real browser (Debian chromium via Playwright, a real server and
SQLite store), at 390 and 1280 px: colour (the whole picture, the colour named, the true/false object
question and the gender question, stored and scored), free viewing (a real fv.json scanpath with
fixations outside the 1280x1024 frame, drawn clipped at its edge; the 1-of-3 question) and a
conversation item with one truth per speaker (each speaker labelled, per-speaker truth on feedback).

Screenshots: $TURINGLAB_SCREENS (default /work/screens/zpages when /work/screens exists, else a tmp dir)."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parents[2]))
from static_judge_data import chromium_on, images, make_study, submit_item  # noqa: E402

from turinglab.server.judging.pages import create_static_app  # noqa: E402
from turinglab.game.static_config import Session, StaticStudy  # noqa: E402
from turinglab.analysis.static.speakers import speaker_report  # noqa: E402
from turinglab.store.api import Store  # noqa: E402
from turinglab.store.static import ResponseIn, StimulusIn  # noqa: E402

pytestmark = pytest.mark.browser
WIDTHS = ({"width": 390, "height": 844}, {"width": 1280, "height": 900})
FV = Path(__file__).parents[2] / "data" / "zhang2023" / "judge_pages" / "fv_excerpt.json"


@pytest.fixture(scope="module")
def shots(tmp_path_factory) -> Path:
    env = os.environ.get("TURINGLAB_SCREENS")
    d = Path(env) if env else Path("/work/screens/zpages") if Path("/work/screens").is_dir() else \
        tmp_path_factory.mktemp("zhang-shots")
    d.mkdir(parents=True, exist_ok=True)
    print(f"\nscreenshots: {d}")
    return d


async def shot(page, shots: Path, name: str) -> None:
    await page.evaluate("window.scrollTo(0, 0)")
    await page.screenshot(path=str(shots / f"{name}-{page.viewport_size['width']}.png"), full_page=True)


def fv_study(store: Store, image_dir: Path) -> int:
    pics = images(image_dir)
    study = StaticStudy(name="zhang-fv", task="fv", image_dir=str(image_dir), ask_gender=True,
                        session=Session(items=2, min_rt_ms=300), display_name="Human or machine? (eye movements)", completion_url="/healthz?cc=C0MPLETE")
    sid = store.register_static_study(study)
    stimuli, responses = [], []
    for k, (key, records) in enumerate(json.loads(FV.read_text()).items()):
        stimuli.append(StimulusIn(key, image=pics[k], fields={
            "control_choices": ["a person", "a bicycle", "a kitchen"], "control_answer": "a person",
            "control_question": "What do you see in the presented clip?"}))
        for j, r in enumerate(records):
            responses.append(ResponseIn(f"{key}/{j}", key, None, r["groundtruth"],
                                        r["machine_groundtruth"] or r["human_groundtruth"],
                                        payload={"scanpath": r["response"], "frame": [1280, 1024]}))
    store.add_items(sid, stimuli, responses)
    return sid


PAIRS = {"HH": {"A": "human", "B": "human"}, "HAI": {"A": "human", "B": "GPT-4o"},
         "AIH": {"A": "ELIZA", "B": "human"}, "AIAI": {"A": "GPT-4o", "B": "ELIZA"}}
LINES = ["Did you catch the match on Sunday?", "Only the second half, what a comeback!",
         "I still can't believe that last goal.", "Me neither. Do you play football yourself?",
         "Just five-a-side with friends on Thursdays.", "Nice, that sounds like fun."]


def conversation_study(store: Store) -> int:
    study = StaticStudy(name="zhang-conv", task="conversation", ask_gender=True,
                        session=Session(items=2, feedback_items=1, min_rt_ms=300),
                        display_name="Human or machine? (conversations)", completion_url="/healthz?cc=C0MPLETE")
    sid = store.register_static_study(study)
    stimuli, responses = [], []
    for cls, speakers in PAIRS.items():
        for rep in range(2):
            key = f"{cls}-{rep}"
            turns = [{"speaker": "AB"[k % 2], "text": t} for k, t in enumerate(LINES)]
            machine = [a for a in speakers.values() if a != "human"]
            stimuli.append(StimulusIn(key, fields={"topic_choices": ["sports", "music", "movies", "science", "fashion"],
                                                   "control_answer": "sports"}))
            responses.append(ResponseIn(key, key, "\n".join(f"{t['speaker']}: {t['text']}" for t in turns),
                                        "machine" if machine else "human", machine[0] if machine else "human",
                                        payload={"turns": turns, "speakers": speakers, "length": 3, "class": cls}))
    store.add_items(sid, stimuli, responses)
    return sid


async def judge_through(browser, base: str, vp: dict, task: str, shots: Path) -> str:
    ctx = await browser.new_context(viewport=vp)
    page = await ctx.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    await page.goto(base + "/")
    await page.click("text=Start")
    await page.wait_for_selector("text=Consent")
    judge = page.url.rstrip("/").rsplit("/", 1)[1]
    await page.check("input[name=agree]")
    await page.click("text=Continue")
    n = 0
    while True:
        await page.wait_for_selector("#answer-form, #feedback, #survey-form")
        if await page.is_visible("#feedback"):
            await shot(page, shots, f"{task}-feedback")
            rows = await page.locator("table tr, li").all_text_contents()
            text = " ".join(rows) + await page.text_content("body")
            assert "GPT-4o" not in text and "ELIZA" not in text  # truth per speaker, never the agent
            await page.click("#btn-next")
            continue
        if await page.is_visible("#survey-form"):
            break
        await check_and_answer(page, task)
        await page.wait_for_selector("#btn-submit:not([disabled])", timeout=30000)
        if n == 0:
            await shot(page, shots, f"{task}-item")
        await submit_item(page)
        n += 1
    await shot(page, shots, f"{task}-survey")
    await page.fill("input[name=age]", "38")
    await page.fill("input[name=native_language]", "English")
    await page.fill("input[name=country]", "Ireland")
    await page.click("text=Save and finish")
    await page.wait_for_selector("#done-countdown", state="attached")  # time to withdraw before the study site: the link goes on now
    await page.click("a.button")
    await page.wait_for_url("**/healthz?cc=C0MPLETE")
    assert errors == []
    await ctx.close()
    return judge


async def check_and_answer(page, task: str) -> None:
    vw = page.viewport_size["width"]
    if task in ("color", "fv"):
        await page.wait_for_function("document.getElementById('picture').naturalWidth > 0")
        box = await page.evaluate("(() => { const i = document.getElementById('picture'); const r = i.getBoundingClientRect();"
                                  " return [r.left, r.right, r.width, r.height, i.naturalWidth, i.naturalHeight]; })()")
        left, right, w, h, nw, nh = box
        assert left >= 0 and right <= vw + 0.5  # the whole picture is on the page, not cropped sideways
    if task == "color":
        assert abs(w / h - nw / nh) < 0.02  # drawn whole, its proportions kept
        assert await page.locator("#overlay *").count() == 0  # no marked point
        assert "Main colour named for this picture" in await page.text_content("#response")
        await page.check("input[name=answer][value=human]")
        await page.check("input[name=gender][value=female]")
        await page.check("input[name=object][value=yes]")
    elif task == "fv":
        item = json.loads(await page.text_content("#item-data"))
        pts = item["scanpath"][:15]
        await page.wait_for_function(f"document.querySelectorAll('#overlay circle.fixation').length === {len(pts)}",
                                     timeout=20000)
        outside = sum(1 for x, y in pts if not (0 <= x <= 1280 and 0 <= y <= 1024))
        assert await page.locator("#overlay circle.outside").count() == outside
        cs = await page.evaluate("[...document.querySelectorAll('#overlay circle.fixation')]"
                                 ".map(c => [Number(c.getAttribute('cx')), Number(c.getAttribute('cy'))])")
        assert all(0 <= x <= 1280 and 0 <= y <= 1024 for x, y in cs)  # clipped to the frame
        assert cs == [[min(max(x, 0), 1280), min(max(y, 0), 1024)] for x, y in pts]
        await page.check("input[name=answer][value=machine]")
        await page.check("input[name=gender][value=male]")
        await page.check("input[name=control][value='a person']")
    else:
        assert await page.locator("#transcript li").count() == 6
        await page.check("input[name=speaker_0][value=human]")
        await page.check("input[name=speaker_1][value=machine]")
        await page.check("input[name=gender_0][value=female]")
        await page.check("input[name=gender_1][value=male]")
        await page.check("input[name=control][value=sports]")


@pytest.mark.parametrize("task", ["color", "fv", "conversation"])
async def test_zhang_judge_session_in_chromium(task, chromium_path, sqlite_url, tmp_path, shots):
    with Store(sqlite_url) as st:
        if task == "color":
            sid = make_study(st, "color", tmp_path / "img", items=2, min_rt_ms=300, object_words=True, ask_gender=True)
        elif task == "fv":
            sid = fv_study(st, tmp_path / "img")
        else:
            sid = conversation_study(st)
        study = st.static_study(sid).study
        items = {i.id: i for i in st.items(sid)}
    app = create_static_app(study, sqlite_url, admin_password="pw", rng_seed=5)
    async with chromium_on(app, chromium_path) as (browser, base):
        judges = [await judge_through(browser, base, vp, task, shots) for vp in WIDTHS]
    with Store(sqlite_url) as st:
        trials = [t for j in judges for t in st.trials(sid, judge_id=j)]
        people = [st.get_participant(j) for j in judges]
        rep = speaker_report(st, sid) if task == "conversation" else None
    assert all(p.demographics["native_language"] == "English" and p.demographics["country"] == "Ireland"
               for p in people)
    if task == "color":
        assert len(trials) == 4
        for t in trials:
            right = "yes" if t.answers["object_word"] in items[t.response_id].stimulus_fields["object_present"] else "no"
            assert t.answers["object_answer"] == "yes" and t.answers["gender"] == "female"
            assert t.control_correct is (right == "yes")
    elif task == "fv":
        assert len(trials) == 4 and all(t.control_correct is True and t.answers["gender"] == "male" for t in trials)
        assert any(any(not 0 <= x <= 1280 for x, _ in items[t.response_id].payload["scanpath"]) for t in trials)
    else:
        assert len(trials) == 6 and all(t.answers["speakers"] == {"A": "human", "B": "machine"} for t in trials)
        test = [t for t in trials if t.phase == "test"]  # the feedback items are practice, counted apart
        assert 0 < len(test) < 6 and rep["trials"] == len(test)
        for r in rep["speakers"]:  # A always labelled human, B always machine
            assert r["judged_human"] == (r["n"] if r["speaker"] == "A" else 0)
        truth_cls = {items[t.response_id].payload["class"] for t in test}
        assert sum(rep["confusion"][c]["HAI"] for c in truth_cls) == len(test)
