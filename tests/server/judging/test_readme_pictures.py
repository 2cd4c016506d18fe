"""Issues 36.4 and 41.2: the README's own-pictures example (four pictures, `--format plain --task
color`) imports and plays as written, in Chromium: the session size follows the items when no
study file sets it. A study file asking more than its items fill is told so in one line with the
fix (`session.items`) at import and at `serve` start, and its judges see "not ready", no
traceback. A picture that is a link out of `--images` is refused at import, like `..`."""

from __future__ import annotations

import csv
import sys
from pathlib import Path

import uvicorn
from fastapi.testclient import TestClient
from typer.testing import CliRunner

sys.path.insert(0, str(Path(__file__).parents[2]))
from static_judge_data import chromium_on, submit_item  # noqa: E402

from turinglab.cli import app  # noqa: E402
from turinglab.cli.serve import _static_to_serve  # noqa: E402
from turinglab.server.judging.pages import create_static_app  # noqa: E402
from turinglab.store import Store  # noqa: E402

PNG = bytes.fromhex("89504e470d0a1a0a0000000d4948445200000001000000010806000000"
                    "1f15c4890000000d49444154789c6360f8cf00000301010018dd8db00000000049454e44ae426082")
PICTURES = ("beach", "forest", "street", "harbour")


def readme_example(tmp_path: Path) -> tuple[Path, Path]:
    """items.csv (the README's columns, a human and a machine colour per picture) and `pictures/`."""
    pics = tmp_path / "pictures"
    pics.mkdir()
    rows = []
    for n, name in enumerate(PICTURES):
        (pics / f"{name}.png").write_bytes(PNG)
        rows += [{"stimulus_id": name, "task": "color", "image": f"{name}.png", "text": "", "response": "blue",
                  "truth": "human", "agent": f"p0{n}"},
                 {"stimulus_id": name, "task": "color", "image": f"{name}.png", "text": "", "response": "gray",
                  "truth": "machine", "agent": "median-cut"}]
    items = tmp_path / "items.csv"
    with items.open("w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    return items, pics


async def judge_colours(browser, base: str) -> tuple[str, list[str]]:
    """A judge's whole session in Chromium: link, Start, consent, each item (the picture must load),
    up to the survey; (the judge's id, the picture of each item)."""
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
        src = await page.get_attribute("img", "src")
        assert await page.evaluate("document.querySelector('img').complete && document.querySelector('img').naturalWidth > 0")
        shown.append(src.rsplit("/", 1)[-1])
        await page.check("input[name=answer][value=machine]")
        if await page.locator("input[name=gender]").count():
            await page.locator("input[name=gender]").first.check()
        await page.wait_for_selector("#btn-submit:not([disabled])")
        await submit_item(page)
    assert errors == []
    return page.url.rstrip("/").rsplit("/", 1)[1], shown


def run(*args: str):  # noqa: ANN201
    return CliRunner().invoke(app, list(args))


async def test_the_readme_pictures_example_plays_in_chromium(chromium_path, sqlite_url, tmp_path):
    items, pics = readme_example(tmp_path)
    r = run("static", "import", "--format", "plain", "--task", "color", "--responses", str(items),
            "--images", str(pics), "--study", "my-colours", "--db", sqlite_url)
    assert r.exit_code == 0, r.output
    assert "session.items set to 4" in r.output  # 2 human + 2 machine on 4 distinct pictures
    study = _static_to_serve("my-colours", sqlite_url)  # as `turinglab serve --study my-colours` finds it
    web = create_static_app(study, sqlite_url)
    assert web.state.not_ready is None
    async with chromium_on(web, chromium_path) as (browser, base):
        judge, shown = await judge_colours(browser, base)
    assert len(shown) == 4  # each picture loaded (checked on its page)
    with Store(sqlite_url) as st:
        sid = st.static_study("my-colours").id
        trials = [t for t in st.trials(sid) if t.judge_id == judge]
    assert len(trials) == 4 and {t.answer for t in trials} == {"machine"}


def test_a_study_its_items_cannot_fill_says_so(sqlite_url, tmp_path, monkeypatch):
    items, pics = readme_example(tmp_path)
    f = tmp_path / "study.yaml"
    f.write_text("preset: zhang-2023\nname: too-big\ntask: color\nsession: {items: 20}\n")
    r = run("static", "import", "--format", "plain", "--task", "color", "--responses", str(items),
            "--images", str(pics), "--study", "too-big", "--study-file", str(f), "--db", sqlite_url)
    assert r.exit_code == 0, r.output
    warning = [x for x in r.output.splitlines() if x.startswith("warning:")]
    assert len(warning) == 1 and "set session.items to at most 4" in warning[0], r.output
    # `serve` says it at start, in one line
    monkeypatch.setattr(uvicorn, "run", lambda *a, **k: None)
    r = run("serve", "--study", "too-big", "--db", sqlite_url)
    assert r.exit_code == 0, r.output
    said = [x for x in r.output.splitlines() if "warning:" in x]
    assert len(said) == 1 and "session.items to at most 4" in said[0]
    # the judge page: "not ready", no traceback
    web = create_static_app(_static_to_serve("too-big", sqlite_url), sqlite_url)
    with TestClient(web, raise_server_exceptions=True) as c:
        pid = c.post("/start", follow_redirects=False).headers["location"].rsplit("/", 1)[1]
        import re

        tok = re.search(r'name="csrf" value="(\w+)"', c.get(f"/p/{pid}").text).group(1)
        r = c.post(f"/p/{pid}/consent", data={"agree": "yes", "csrf": tok})
        assert r.status_code == 503 and "The study is not ready" in r.text and "Traceback" not in r.text
        r = c.get(f"/p/{pid}")
        assert r.status_code == 503 and "The study is not ready" in r.text


def test_a_picture_linked_from_outside_is_refused_at_import(sqlite_url, tmp_path):
    items, pics = readme_example(tmp_path)
    secret = tmp_path / "elsewhere.png"
    secret.write_bytes(PNG)
    (pics / "harbour.png").unlink()
    (pics / "harbour.png").symlink_to(secret)
    r = run("static", "import", "--format", "plain", "--task", "color", "--responses", str(items),
            "--images", str(pics), "--study", "linked", "--db", sqlite_url)
    assert r.exit_code == 2 and "is a link to a file outside" in r.output, r.output
    with Store(sqlite_url) as st:
        assert [s.name for s in st.static_studies()] == []  # all or nothing
