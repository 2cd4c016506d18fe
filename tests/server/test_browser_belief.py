"""Belief tracking in a real browser (issue 29): the interrogator moves the slider by keyboard and
pointer in a two- and a three-player game; the moves are stored as `belief` events and exported;
the witness never sees a slider."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

import tests.server.test_browser as tb

from tests.server.test_browser import (
    DESKTOP, ELIZA, PHONE, RULES, give_verdict, last_theirs, shot, two_in_a_game, type_send, world,
)
from turinglab.analysis.export.export import read_tables
from turinglab.cli import app
from turinglab.game.config import Allocation, Study
from turinglab.store.api import Store

pytestmark = pytest.mark.browser
BELIEF = RULES.model_copy(update={"belief_tracking": True, "time_limit_s": 40})


@pytest.fixture(scope="module", autouse=True)
def _shots(tmp_path_factory):
    """Screenshots under this run's temporary folder (test_browser's `shot` writes to its SHOTS)."""
    tb.SHOTS = tmp_path_factory.mktemp("shots")


def study(name: str, fmt: str = "two-player", witnesses=()) -> Study:
    return Study(name=name, format=fmt, rules=BELIEF, witnesses=witnesses,
                 allocation=Allocation(human_ratio=1.0, ai_fallback_mean_s=1.0, ai_fallback_noise_sigma=0.01))


async def stored_beliefs(sqlite_url: str) -> list[tuple[int, str, int]]:
    """(value, actor of the reply it follows, reply seq) of every stored belief move."""
    out = []
    with Store(sqlite_url) as store:
        for g in store.games():
            log = store.events(g.id)
            out += [(e.payload["value"], log[e.payload["after_seq"]].actor, e.payload["after_seq"])
                    for e in log if e.type == "belief"]
    return out


async def settle(page, n: int, sqlite_url: str, timeout_ms: int = 5000) -> list:
    """Wait until `n` belief moves are stored (the page sends a move 0.3 s after the last change)."""
    for _ in range(timeout_ms // 100):
        got = await stored_beliefs(sqlite_url)
        if len(got) >= n:
            return got
        await page.wait_for_timeout(100)
    raise AssertionError(f"expected {n} stored belief moves, got {await stored_beliefs(sqlite_url)}")


def exported(sqlite_url: str, out) -> list[tuple[int, int]]:
    r = CliRunner().invoke(app, ["export", "--db", sqlite_url, "--out", str(out)])
    assert r.exit_code == 0, r.output
    b = read_tables(out)["beliefs"]
    return sorted(zip(b["value"].astype(int), b["after_seq"].astype(int)))


async def test_two_player_slider_by_keyboard_and_pointer(chromium_path, sqlite_url, tmp_path):
    async with world(chromium_path, study("b-belief-2"), sqlite_url) as (base, browser):
        pages = await two_in_a_game(browser, base, PHONE)
        i, w = pages["interrogator"], pages["witness"]
        assert await i.is_hidden("#belief")  # no reply yet: nothing to believe
        await type_send(i, "hello, <b>who</b> are you?")
        await last_theirs(w)
        await type_send(w, "just me, typing from the bus")
        await last_theirs(i)
        await i.wait_for_selector("#belief:not([hidden])")
        slider = i.get_by_role("slider", name="Your guess so far: human or AI?")  # labelled: found by its role and label
        assert await slider.get_attribute("type") == "range"
        assert await i.text_content("#belief-left") == "0 · Human"
        # keyboard: five steps to the right of the middle
        await slider.focus()
        for _ in range(5):
            await i.keyboard.press("ArrowRight")
        assert await slider.input_value() == "55"
        assert (await slider.get_attribute("aria-valuetext")).startswith("55: leaning AI")
        got = await settle(i, 1, sqlite_url)
        assert await i.is_visible("#s-game")  # the chat stayed where it was
        await shot(i, "belief-two-player")
        # a second reply, then the pointer: a click near the left end of the slider
        await type_send(i, "which bus?")
        await type_send(w, "the 42, always late")
        await last_theirs(i, count=2)
        box = await slider.bounding_box()
        await i.mouse.click(box["x"] + box["width"] * 0.1, box["y"] + box["height"] / 2)
        got = await settle(i, 2, sqlite_url)
        low = got[-1][0]
        assert low < 30, got
        assert await w.is_hidden("#belief")  # the witness has no slider, and got nothing from it
        # a move and at once the verdict: the waiting move is sent before the verdict screen opens
        await slider.focus()
        await i.keyboard.press("End")
        await give_verdict(i, "human", 75, "bus talk")
        assert "You were right." in await i.text_content("#reveal-body")
        assert i.js_errors == [] and w.js_errors == []
    got = await stored_beliefs(sqlite_url)
    assert [v for v, _, _ in got] == [55, low, 100]
    assert all(actor == "A" for _, actor, _ in got) and got[0][2] < got[1][2] == got[2][2]  # after reply 1, 2, 2
    assert exported(sqlite_url, tmp_path / "export") == sorted((v, s) for v, _, s in got)
    with Store(sqlite_url) as store:
        (g,) = store.games()
        assert g.verdict.choice == "human" and g.verdict.confidence == 75  # the verdict is unchanged by the slider


async def test_three_player_slider_which_is_human(chromium_path, sqlite_url, tmp_path):
    async with world(chromium_path, study("b-belief-3", "three-player", (ELIZA,)), sqlite_url) as (base, browser):
        pages = await two_in_a_game(browser, base, DESKTOP)
        i, w = pages["interrogator"], pages["witness"]
        seat = await w.get_attribute(".conv", "data-conv")
        other = "B" if seat == "A" else "A"
        await type_send(i, "hi A", "A")
        await type_send(i, "hi B", "B")
        await last_theirs(w, seat)
        await type_send(w, "hey, human here", seat)
        await last_theirs(i, seat)
        await last_theirs(i, other)
        slider = i.get_by_role("slider", name="Your guess so far: which one is the human?")
        await i.wait_for_selector("#belief:not([hidden])")
        assert await i.text_content("#belief-left") == "0 · A is the human"
        # toward the witness seat the human holds: Home = A is the human, End = B is the human
        await slider.focus()
        await i.keyboard.press("Home" if seat == "A" else "End")
        got = await settle(i, 1, sqlite_url)
        assert got[0][0] == (0 if seat == "A" else 100)
        await shot(i, "belief-three-player")
        assert await w.is_hidden("#belief")
        await give_verdict(i, seat, 80, "")
        assert "You were right." in await i.text_content("#reveal-body")
        assert i.js_errors == [] and w.js_errors == []
    got = await stored_beliefs(sqlite_url)
    assert len(got) == 1 and got[0][1] in ("A", "B")  # it follows a witness reply (the latest shown)
    assert exported(sqlite_url, tmp_path / "export") == [(got[0][0], got[0][2])]
