"""Run by test_example_plugin.py with the python of a venv in which the example plugin is installed
(not collected by pytest): a live game in Chromium against the plugin's `scripted` witness, or a
judge session in Chromium on a study of the plugin's `haiku` task. Prints one JSON object."""

from __future__ import annotations

import asyncio
import json
import sys
import time

from playwright.async_api import async_playwright

from turinglab.game.config import Allocation, Rules, Study, Timing, WitnessSpec
from turinglab.server.testing import serve_in_thread
from turinglab.store.api import Store

REPLIES = ["hey there", "not much, just got home from work", "ha, you first"]
DELAY = Timing(base_s=1.2, s_per_char=0.01, gamma_shape=2.0, gamma_scale=0.05)


async def live(db: str, chromium: str) -> dict:
    from turinglab.server.app import create_app

    spec = WitnessSpec(codename="Echo", kind="scripted", fallback=None, timing=DELAY, options={"replies": REPLIES})
    study = Study(name="plugin-live", format="two-player", witnesses=(spec,),
                  rules=Rules(time_limit_s=60, typing_min_s=0.1, typing_jitter_s=0.2),
                  allocation=Allocation(human_ratio=0.0, ai_fallback_mean_s=1.0, ai_fallback_noise_sigma=0.01))
    app = create_app(study, db, rng_seed=5, initial_ai_wait_s=0.3, admin_password="pw")
    out: dict = {"replies": [], "waits_s": []}
    with serve_in_thread(app) as base:
        async with async_playwright() as pw:
            browser = await pw.chromium.launch(executable_path=chromium, args=["--no-sandbox"])
            page = await (await browser.new_context(bypass_csp=True)).new_page()
            errors: list[str] = []
            page.on("pageerror", lambda e: errors.append(str(e)))
            frames: list[str] = []
            page.on("websocket", lambda ws: ws.on("framereceived", lambda f: frames.append(str(f))))
            await page.goto(base + "/")
            await page.click("text=Start")
            await page.wait_for_selector("text=Consent")
            await page.check("input[name=agree]")
            await page.click("text=Continue")
            await page.wait_for_selector("#s-idle:not([hidden])")
            await page.click("#btn-join")
            await page.wait_for_selector("#s-game:not([hidden])", timeout=20000)
            sel = '.conv[data-conv="A"] .msg.theirs'
            for k, question in enumerate(["hi", "what's up?"]):
                await page.wait_for_selector('.conv[data-conv="A"] button:not([disabled])')
                box = page.locator('.conv[data-conv="A"] textarea')
                await box.fill(question)
                t0 = time.monotonic()
                await box.press("Enter")
                await page.wait_for_function(f"document.querySelectorAll('{sel}').length >= {k + 1}", timeout=20000)
                out["waits_s"].append(time.monotonic() - t0)
                out["replies"].append(await page.locator(sel).nth(k).text_content())
            before = (await page.text_content("body")) + " ".join(frames)
            out["identity_before_verdict"] = any(w in before for w in ("Echo", "scripted"))
            if await page.is_visible("#btn-verdict"):
                await page.click("#btn-verdict")
            await page.check("input[name=choice][value=ai]")
            await page.locator("#confidence").fill("70")
            await page.fill("#reason", "too quick to answer")
            await page.click("#verdict-form button[type=submit]")
            await page.wait_for_selector("#s-reveal:not([hidden])")
            out["reveal"] = await page.text_content("#reveal-body")
            out["js_errors"] = errors
            await browser.close()
    with Store(db) as store:
        (g,) = store.games()
        out["stored"] = {"witness": g.seats["A"].witness, "choice": g.verdict.choice, "correct": g.verdict.correct,
                         "messages": [e.payload["text"] for e in store.events(g.id) if e.type == "message"]}
    return out


async def static(db: str, chromium: str, study_name: str) -> dict:
    from turinglab.server.judging.pages import create_static_app

    with Store(db) as store:
        info = store.static_study(study_name)
    app = create_static_app(info.study, db, admin_password="pw", rng_seed=5)
    out: dict = {"shown": []}
    with serve_in_thread(app) as base:
        async with async_playwright() as pw:
            browser = await pw.chromium.launch(executable_path=chromium, args=["--no-sandbox"])
            page = await (await browser.new_context()).new_page()
            errors: list[str] = []
            page.on("pageerror", lambda e: errors.append(str(e)))
            await page.goto(base + "/")
            out["landing"] = await page.text_content("body")
            await page.click("text=Start")
            await page.wait_for_selector("text=Consent")
            out["judge"] = page.url.rstrip("/").rsplit("/", 1)[1]
            await page.check("input[name=agree]")
            await page.click("text=Continue")
            while True:
                await page.wait_for_selector("#answer-form, #feedback, #survey-form")
                if await page.is_visible("#survey-form"):
                    break
                if await page.is_visible("#feedback"):
                    await page.click("#btn-next")
                    continue
                out["question"] = await page.text_content("#answer-form legend")
                out["shown"].append({"cue": await page.text_content("#cue"),
                                     "lines": await page.locator("#response").inner_html()})
                await page.check("input[name=answer][value=human]")
                before = await page.get_attribute("input[name=n]", "value")
                await page.click("#btn-submit")
                await page.wait_for_function(f"!document.querySelector('input[name=n]') || "
                                             f"document.querySelector('input[name=n]').value !== '{before}'")
            out["js_errors"] = errors
            await browser.close()
    with Store(db) as store:
        out["trials"] = len(store.trials(info.id, judge_id=out["judge"]))
    return out


if __name__ == "__main__":
    what, db, chromium = sys.argv[1:4]
    res = asyncio.run(live(db, chromium) if what == "live" else static(db, chromium, sys.argv[4]))
    print(json.dumps(res))
