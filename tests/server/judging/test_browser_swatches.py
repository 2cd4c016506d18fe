"""Colour items in Chromium (issue 41): every colour name is shown with a visible swatch and its name;
white is a white box with a dark border on a grey chip (not an empty checkbox); a name outside Zhang's
11 colours keeps its name beside a neutral swatch that says it has none. Screenshots of white and of an
unknown name go to a temporary folder (printed)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parents[2]))
from static_judge_data import chromium_on, images, submit_item  # noqa: E402

from turinglab.server.judging.pages import create_static_app  # noqa: E402
from turinglab.game.static_config import Session, StaticStudy  # noqa: E402
from turinglab.store.api import Store  # noqa: E402
from turinglab.store.static import ResponseIn, StimulusIn  # noqa: E402

pytestmark = pytest.mark.browser
ZHANG = ["red", "pink", "orange", "yellow", "purple", "green", "blue", "brown", "gray", "black", "white"]
OTHERS = ["teal", "none", "Grey"]  # two unknown names, and gray's other spelling (a swatch)


def _luminance(css: str) -> float:
    r, g, b = (int(x) for x in css[css.index("(") + 1:css.index(")")].split(",")[:3])
    return (0.2126 * r + 0.7152 * g + 0.0722 * b) / 255


def _study(store: Store, image_dir: Path) -> int:
    names = ZHANG + OTHERS
    pics = images(image_dir)
    study = StaticStudy(name="swatches", task="color", image_dir=str(image_dir),
                        session=Session(items=len(names), min_rt_ms=0), completion_url="/healthz?cc=X")
    sid = store.register_static_study(study)
    store.add_items(sid, [StimulusIn(f"s{i}", image=pics[i % len(pics)]) for i in range(len(names))],
                    [ResponseIn(f"s{i}/r", f"s{i}", c, "human" if i % 2 else "machine", f"a{i % 2}", payload={"color": c})
                     for i, c in enumerate(names)])
    return sid


async def test_every_colour_name_has_a_visible_swatch_and_its_name(chromium_path, sqlite_url, tmp_path_factory):
    shots = tmp_path_factory.mktemp("swatches")
    print(f"\nscreenshots: {shots}")
    with Store(sqlite_url) as st:
        sid = _study(st, shots / "img")
        study = st.static_study(sid).study
    app = create_static_app(study, sqlite_url, admin_password="pw", rng_seed=5)
    seen: dict[str, dict] = {}
    async with chromium_on(app, chromium_path) as (browser, base):
        page = await (await browser.new_context(viewport={"width": 390, "height": 844})).new_page()
        await page.goto(base + "/")
        await page.click("text=Start")
        await page.check("input[name=agree]")
        await page.click("text=Continue")
        while True:
            await page.wait_for_selector("#answer-form, #survey-form")
            if await page.is_visible("#survey-form"):
                break
            chip = page.locator("#response .colour-chip")
            name = (await chip.locator(".colour-name").text_content()).strip()
            sw = chip.locator(".swatch")
            box = await sw.bounding_box()
            seen[name] = {
                "box": box,
                "class": await sw.get_attribute("class"),
                "label": await sw.get_attribute("aria-label"),
                "text": (await sw.text_content()).strip(),
                "bg": await sw.evaluate("e => getComputedStyle(e).backgroundColor"),
                "border": await sw.evaluate("e => getComputedStyle(e).borderTopColor"),
                "border_w": await sw.evaluate("e => parseFloat(getComputedStyle(e).borderTopWidth)"),
                "chip_bg": await chip.evaluate("e => getComputedStyle(e).backgroundColor"),
                "note": await page.locator("#response .swatch-note").count(),
            }
            if name in ("white", "teal"):
                await chip.scroll_into_view_if_needed()
                await page.locator("#response").screenshot(path=str(shots / f"swatch-{name}.png"))
            await page.check("input[name=answer][value=machine]")
            await page.wait_for_selector("#btn-submit:not([disabled])")
            await submit_item(page)
    assert sorted(seen) == sorted(ZHANG + OTHERS)
    for name, s in seen.items():
        assert s["box"]["width"] >= 20 and s["box"]["height"] >= 15, (name, s["box"])  # visible, not a dot
    for name in ZHANG:
        s = seen[name]
        assert s["class"] == f"swatch sw-{name}" and s["label"] == f"a swatch of the colour {name}" and s["note"] == 0, (name, s)
    assert seen["Grey"]["class"] == "swatch sw-gray" and seen["Grey"]["bg"] == seen["gray"]["bg"]
    assert len({seen[n]["bg"] for n in ZHANG}) == 11  # eleven different colours
    white = seen["white"]
    assert white["bg"] == "rgb(255, 255, 255)"
    # its border is dark and thick enough to see, and it sits on a chip that is not white
    assert white["border_w"] >= 2 and _luminance(white["border"]) < 0.35 and _luminance(white["chip_bg"]) < 0.95
    for name in ("teal", "none"):
        s = seen[name]
        assert s["class"] == "swatch sw-none" and s["label"] == "no swatch for this name" and s["text"] == "?"
        assert s["note"] == 1, (name, s)
