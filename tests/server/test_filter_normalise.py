"""Issue 24 item 1: one normalisation of what a reader sees, shared by the word list, the
moderation hook, the frame boundary and the "empty" check; `turinglab filter check`."""

from __future__ import annotations

import asyncio
import json

import pytest
from typer.testing import CliRunner

from turinglab.cli import app
from turinglab.game.config import Rules
from turinglab.game.engine import Game, Send
from turinglab.server.live import protocol as proto
from turinglab.server.content_filter import ContentFilter
from turinglab.store.api import Store
from turinglab.textnorm import is_blank, see
from tests.server.filter_variants import VARIANTS, ordinary_lines
from tests.server.live.test_server import in_game, players, running, say, study

BLANKS = ["\u3164", "\u115f\u1160", "\uffa0", "\u2800", "\u0301\u0308", " \u0301 ", "\ufe0f", "\ufe0f\ufe0e",
          "\U000e0100", "\u200b\u3164\u2800", "\u3164 \u2800\n\t"]


def _check(f: ContentFilter, text: str) -> str | None:
    return asyncio.run(f.check(text))


def test_the_issue_variants_are_blocked_and_ordinary_lines_are_not():
    f = ContentFilter()
    blocked = [v for v in VARIANTS if _check(f, v)]
    lines = ordinary_lines(200)
    refused = [ln for ln in lines if _check(f, ln)]
    assert len(VARIANTS) == 40 and len(lines) == 200 == len(set(lines))
    assert len(blocked) >= 38, sorted(set(VARIANTS) - set(blocked))
    assert refused == []


@pytest.mark.parametrize("text", [
    "F U C K", "fuuuuuck", "FUCK!!!", "you f*cking idiot", "n i g g e r", "k.y.s", "KyS", "ｋｉｌｌ ｙｏｕｒｓｅｌｆ",
    "𝐫𝐞𝐭𝐚𝐫𝐝", "fu\u0336ck", "f\u0301u\u0308ck", "kill\u00a0yourself", "g0 d13", "wh\u043er3", "sl\u00fct",
    "\u24d5\u24e4\u24d2\u24da", "fu\u00adck", "kill\u2028yourself", "k i l l y o u r s e l f", "ki|| yourself",
])
def test_more_obfuscations_are_blocked(text):
    assert _check(ContentFilter(), text), see(text)


@pytest.mark.parametrize("text", [
    "that class was fun", "I like scunthorpe", "grapes", "she is a specialist", "I killed it at the gym",
    "go diet", "skills", "1 2 3 4 5", "the shuttle was 7 minutes late", "I'm 19, you?", "f*** that test lol",
    "peace ✌️", "family 👨‍👩‍👧 photo", "café", "naïve résumé", "Привет, как дела?", "日本語で話せますか",
    "it is 45$ a night", "c'est la vie", "fa ga ga", "****", "go, die hard is a great film",
])
def test_ordinary_text_passes(text):
    assert _check(ContentFilter(), text) is None, see(text)


@pytest.mark.parametrize("text", BLANKS)
def test_nothing_visible_is_blank_and_the_engine_refuses_it_as_empty(text):
    assert is_blank(text) and see(text).empty
    g = Game.start("two-player", Rules(), 0)
    assert g.apply(Send("interrogator", text, "A"), 1).code == "empty"
    assert g.apply(Send("interrogator", text + "ok", "A"), 2).ok


@pytest.mark.parametrize("text", ["a\u0301", "\u3164hi", "😀", "\u2800.", "\u05d0"])
def test_something_visible_is_not_blank(text):
    assert not is_blank(text)


def test_the_boundary_normalises_once_for_the_fast_path_and_the_full_model():
    fast = proto.parse(json.dumps({"type": "message", "text": "fu\u3164ck  you", "client_id": "c1"}))
    assert fast._seen is not None and fast.seen.shown == "fuck you"
    full = proto.MessageIn.model_validate({"type": "message", "text": "fu\u3164ck  you", "client_id": "c1"})
    assert full.seen == fast.seen


def test_the_moderation_hook_judges_what_a_reader_sees():
    seen_by_hook = []

    def hook(text):
        seen_by_hook.append(text)
        return "spam" if "buy now" in text else None

    f = ContentFilter(use_default=False, hook=hook)
    assert _check(f, "b\u200buy\tnow\ufe0f") == "moderation: spam"
    assert seen_by_hook == ["buy now"]


def test_filter_check_prints_verdict_normalised_text_and_rule(tmp_path):
    r = CliRunner().invoke(app, ["filter", "check", "f\ufe0fuck", "--json"])
    assert r.exit_code == 1
    assert json.loads(r.output) == {"verdict": "blocked", "shown": "fuck", "key": "fuck", "rule": "word list: 'fuck'",
                                    "masked": None}
    r = CliRunner().invoke(app, ["filter", "check", "call me on 07912 345678", "--json"])
    assert r.exit_code == 0  # sent, with the number hidden
    assert json.loads(r.output) == {"verdict": "ok", "shown": "call me on 07912 345678",
                                    "key": "call me on ot912 eas6t8",
                                    "rule": "personal data masked: phone", "masked": "call me on [phone hidden]"}
    r = CliRunner().invoke(app, ["filter", "check", "hello  there"])
    assert r.exit_code == 0 and "verdict: ok" in r.output and "shown: hello there" in r.output
    assert "masked: -" in r.output
    r = CliRunner().invoke(app, ["filter", "check", "\u3164\u2800", "--json"])
    assert r.exit_code == 1 and json.loads(r.output)["verdict"] == "empty"
    r = CliRunner().invoke(app, ["filter", "check", "\u202ekcuf", "--json"])
    assert json.loads(r.output)["rule"].startswith("bidi control U+202E")
    (tmp_path / "s.yaml").write_text("preset: jones-bergen-2023\ncontent_filter: [pineapple]\n", encoding="utf-8")
    r = CliRunner().invoke(app, ["filter", "check", "I love P1NEAPPLES!", "--study", str(tmp_path / "s.yaml")])
    assert r.exit_code == 0  # whole words only
    r = CliRunner().invoke(app, ["filter", "check", "I love P1N3APPLE!", "--study", str(tmp_path / "s.yaml"), "--json"])
    assert json.loads(r.output)["rule"] == "word list: 'pineapple'"
    r = CliRunner().invoke(app, ["filter", "check", "x", "--study", str(tmp_path / "missing.yaml")])
    assert r.exit_code == 2 and "error:" in r.output


async def test_a_live_game_refuses_blank_and_reordered_messages(db_url):
    with running(study(), db_url) as base:
        seats = await in_game(await players(base, 2))
        i, w = seats["interrogator"], seats["A"]
        for text in ("\u3164", "\u2800\ufe0f", "\u0301"):
            err = await say(i, text)
            assert err["type"] == "error" and err["code"] == "empty", err
        err = await say(i, "\u202ekcuf")
        assert err["type"] == "error" and err["code"] == "blocked"
        err = await say(i, "fu\u3164ck  you")
        assert err["code"] == "blocked"
        assert (await say(i, "hello \u2800 there"))["type"] == "ack"
        await w.next("message", text="hello \u2800 there")  # relayed as typed
    with Store(db_url) as store:
        (g,) = store.games()
        codes = [e.payload["code"] for e in store.events(g.id) if e.type == "refused"]
        assert codes == ["empty", "empty", "empty", "blocked", "blocked"]
