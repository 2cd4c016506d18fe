"""An imported Zhang colour study asks Zhang's true/false control question with the authors' word
(`oneWord`/`wrongWord` of their task code, shipped as zhang2023/control_words.tsv), in Debian
chromium: imported with `turinglab static import` from color.json's own records, pictures for three
of its four images; the fourth image's items are never dealt (import and serve say so)."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

sys.path.insert(0, str(Path(__file__).parents[2]))
from static_judge_data import chromium_on, submit_item  # noqa: E402

from turinglab.cli import app as cli  # noqa: E402
from turinglab.server.judging.pages import create_static_app  # noqa: E402
from turinglab.store.api import Store  # noqa: E402

pytestmark = pytest.mark.browser
COLOR = Path(__file__).parents[3] / "turinglab" / "statictests" / "zhang2023" / "color.json"
# the authors' words for these pictures, as their task_color.js has them (read from the source, not the TSV)
AUTHORS = {"1017.jpg": ("Horse", "Clothing"), "2.jpg": ("grass", "fire hydrant"), "726.jpg": ("road", "road"),
           "5.jpg": ("teddy", "vase")}
WIDTHS = {"1017.jpg": 301, "2.jpg": 302, "726.jpg": 303}  # a picture is told apart by its width; 5.jpg has none


def excerpt(tmp: Path) -> tuple[Path, Path]:
    from PIL import Image

    data = json.loads(COLOR.read_text())
    path = tmp / "color_excerpt.json"
    path.write_text(json.dumps({k: data[k] for k in AUTHORS}))
    pics = tmp / "pics"
    pics.mkdir()
    for name, w in WIDTHS.items():
        Image.new("RGB", (w, 200), (20 * (w - 300), 120, 90)).save(pics / name, "JPEG")
    return path, pics


async def judge(browser, base: str) -> list[tuple[str, str]]:
    """One judge's session: (image, word asked) per item; answers yes."""
    ctx = await browser.new_context(viewport={"width": 1280, "height": 900})
    page = await ctx.new_page()
    await page.goto(base + "/")
    await page.click("text=Start")
    await page.check("input[name=agree]")
    await page.click("text=Continue")
    seen = []
    while True:
        await page.wait_for_selector("#answer-form, #survey-form")
        if await page.is_visible("#survey-form"):
            break
        await page.wait_for_function("document.getElementById('picture').naturalWidth > 0")
        width = await page.evaluate("document.getElementById('picture').naturalWidth")
        legend = await page.text_content("#object-question legend")
        m = re.fullmatch(r"\s*Does this picture contain the following: “(.+)”\?\s*", legend)
        assert m, legend
        seen.append(({w: n for n, w in WIDTHS.items()}[width], m.group(1)))
        await page.check("input[name=answer][value=human]")
        await page.check("input[name=object][value=yes]")
        await page.wait_for_selector("#btn-submit:not([disabled])", timeout=30000)
        await submit_item(page)
    await ctx.close()
    return seen


async def test_imported_zhang_colour_study_asks_the_authors_word(chromium_path, sqlite_url, tmp_path):
    responses, pics = excerpt(tmp_path)
    sf = tmp_path / "study.yaml"
    sf.write_text("name: zc\ntask: color\nsession: {items: 2, min_rt_ms: 300}\ncompletion_url: /healthz?cc=C0MPLETE\n")
    res = CliRunner().invoke(cli, ["static", "import", "--task", "color", "--responses", str(responses), "--images",
                                   str(pics), "--study-file", str(sf), "--study", "zc", "--db", sqlite_url])
    assert res.exit_code == 0, res.output
    out = " ".join(res.output.split())
    assert "the authors' words (oneWord/wrongWord of their task code) for all 4 images" in out
    assert "1 have the same word in both lists" in out
    assert "4 of 16 items are never dealt to judges: their stimulus has no picture" in out
    with Store(sqlite_url) as st:
        sid = st.static_study("zc").id
        study = st.static_study(sid).study
    web = create_static_app(study, sqlite_url, rng_seed=3)
    assert web.state.left_out.startswith("4 of 16 items are never dealt") and web.state.not_ready is None
    async with chromium_on(web, chromium_path) as (browser, base):
        seen = [s for _ in range(4) for s in await judge(browser, base)]
    assert len(seen) == 8 and {img for img, _ in seen} <= set(WIDTHS)  # 5.jpg (no picture) never dealt
    for img, word in seen:
        assert word in AUTHORS[img]
    with Store(sqlite_url) as st:
        trials = st.trials(sid)
        items = {i.id: i for i in st.items(sid)}
    assert len(trials) == 8
    for t in trials:
        img = items[t.response_id].stimulus_key
        one, wrong = AUTHORS[img]
        assert t.answers["object_word"] in (one, wrong)
        assert t.answers["object_truth"] == ("yes" if t.answers["object_word"] == one else "no")
        assert t.control_correct is (t.answers["object_truth"] == "yes")
