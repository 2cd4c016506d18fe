"""Issue 36: personal data in a live message is masked, not refused: the other side receives the
masked text, the store keeps only the masked text, and the sender's ack says what was sent."""

from __future__ import annotations

import pytest

from turinglab.game.config import Allocation, Study
from turinglab.store.api import Store
from tests.server.live.test_protocol_schema import check_frames
from tests.server.live.test_server import in_game, players, running, say, study
from tests.server.test_browser import RULES, join, last_theirs, newcomer, role, type_send, world

SECRET = ["07700 900123", "07912 345678", "sam.brooks82@gmail.com", "14 Wellington Road", "@jamie_rocks99", "oh seven nine one"]


async def test_the_other_side_receives_the_masked_text_and_the_original_is_not_stored(db_url):
    with running(study(), db_url) as base:
        seats = await in_game(await players(base, 2))
        i, w = seats["interrogator"], seats["A"]
        ack = await say(i, "text me on 07912 345678 or sam.brooks82@gmail.com")
        assert ack["type"] == "ack" and ack["masked"] == "text me on [phone hidden] or [email hidden]"
        check_frames([ack])  # docs/protocol_schema.json knows the field
        got = await w.next("message")
        assert got["text"] == "text me on [phone hidden] or [email hidden]"
        ack = await say(w, "I live at 14 Wellington Road, add me @jamie_rocks99", conv=None)
        assert ack["masked"] == "I live at [address hidden], add me [handle hidden]"
        got = await i.next("message")
        assert got["text"] == ack["masked"]
        ack = await say(i, "my number is oh seven nine one two three four five six seven eight")
        assert ack["masked"] == "my number is [phone hidden]"
        assert (await w.next("message"))["text"] == "my number is [phone hidden]"
        ack = await say(w, "nothing personal here", conv=None)
        assert ack["type"] == "ack" and "masked" not in ack  # the ack keeps its shape
        await i.next("message", text="nothing personal here")
        # an abusive word inside a handle is still refused: the filter reads what was typed
        err = await say(i, "add me @fuck_you_all")
        assert err["type"] == "error" and err["code"] == "blocked"
        # too long: refused by the engine, and the start it keeps is masked too
        err = await say(i, "ring 07700 900123 " + "la " * 200)
        assert err["type"] == "error" and err["code"] == "too_long"
    with Store(db_url) as store:
        (g,) = store.games()
        stored = " ".join(str(e.payload) for e in store.events(g.id))
        assert "[phone hidden]" in stored and "[handle hidden]" in stored
        for s in SECRET:
            assert s not in stored, s


@pytest.mark.browser
async def test_the_page_shows_the_sender_the_masked_text_and_says_why(chromium_path, sqlite_url):
    """In Chromium: two people; the interrogator types a phone number and an email; their own
    bubble turns into the masked text, a notice says personal details were hidden, and the
    witness's page shows only the masked text."""
    s = Study(name="b-mask", rules=RULES.model_copy(update={"time_limit_s": 60}), allocation=Allocation(human_ratio=1.0))
    async with world(chromium_path, s, sqlite_url) as (base, browser):
        a, b = await newcomer(browser, base), await newcomer(browser, base)
        await join(a)
        await join(b)
        pages = {await role(a): a, await role(b): b}
        i, w = pages["interrogator"], pages["witness"]
        await type_send(i, "hi, I'm on 07912 345678, or jo.smith@example.org")
        await i.wait_for_selector(".msg.mine.sent", timeout=15000)
        assert await i.text_content(".msg.mine") == "hi, I'm on [phone hidden], or [email hidden]"
        assert "Personal details" in await i.text_content("#toast") and await i.is_visible("#toast")
        assert await last_theirs(w) == "hi, I'm on [phone hidden], or [email hidden]"
        assert "07912" not in await w.content() and "jo.smith" not in await w.content()
        await i.reload()  # the page rebuilt from the server's state: still the masked text
        await i.wait_for_selector(".msg.mine.sent", timeout=15000)
        assert await i.text_content(".msg.mine") == "hi, I'm on [phone hidden], or [email hidden]"
        assert i.js_errors == [] and w.js_errors == []
