"""Every participant-facing string comes from the catalogue (issue 39): each page is rendered in a
pseudo-language whose every message is the English wrapped in ⟦…⟧, and the page's text, once the
wrapped parts are taken out, has no letters left but the study's own texts and its items' data."""

from __future__ import annotations

import json
import re
import sys
from html.parser import HTMLParser
from pathlib import Path

import pytest
from babel.messages.catalog import Catalog
from fastapi.testclient import TestClient

sys.path.insert(0, str(Path(__file__).parents[1]))
from static_judge_data import make_study  # noqa: E402

from turinglab import i18n  # noqa: E402
from turinglab.game.config import Allocation, Study  # noqa: E402
from turinglab.i18n import tools  # noqa: E402
from turinglab.server.app import create_app  # noqa: E402
from turinglab.server.judging.pages import create_static_app  # noqa: E402
from turinglab.store.api import Store  # noqa: E402

PSEUDO = "eo"  # a language Babel knows (Esperanto) stands in for the pseudo-language
MARKED = re.compile(r"⟦[^⟦⟧]*⟧")


@pytest.fixture
def pseudo(tmp_path, monkeypatch) -> set[str]:
    """The pseudo catalogue in a folder of $TURINGLAB_LOCALE_DIR; returns the scripts' message ids."""
    cat = Catalog(locale=PSEUDO, fuzzy=False)
    js = set()
    for m in tools.read(tools.POT):
        if m.id:
            cat.add(m.id, f"⟦{m.id}⟧", context=m.context, locations=m.locations)
            if any(loc.endswith(i18n.JS_SOURCES) for loc, _ in m.locations):
                js.add(m.id)
    tools.write(cat, tmp_path / PSEUDO / "LC_MESSAGES" / "messages.po")
    monkeypatch.setenv("TURINGLAB_LOCALE_DIR", str(tmp_path))
    return js


class Text(HTMLParser):
    """The text a person gets from a page: text nodes (not scripts or styles) and the attributes
    read out or shown (placeholder, aria-label, alt, title, an input's value shown as a button)."""

    def __init__(self) -> None:
        super().__init__()
        self.parts: list[str] = []
        self.skip = 0
        self.json: dict[str, str] = {}
        self._id = None

    def handle_starttag(self, tag, attrs):  # noqa: ANN001
        a = dict(attrs)
        if tag in ("script", "style"):
            self.skip += 1
            self._id = a.get("id")
        self.parts += [a[k] for k in ("placeholder", "aria-label", "alt", "title") if a.get(k)]

    def handle_endtag(self, tag):  # noqa: ANN001
        if tag in ("script", "style"):
            self.skip -= 1

    def handle_data(self, data):  # noqa: ANN001
        if self.skip:
            if self._id in ("i18n", "item-data"):
                self.json[self._id] = data
            return
        self.parts.append(data)


def leftover(html: str, allowed: list[str]) -> str:
    """The page's text without the wrapped messages and the allowed texts: what is not in the catalogue."""
    p = Text()
    p.feed(html)
    text = " ".join(p.parts)
    while MARKED.search(text):
        text = MARKED.sub(" ", text)
    for a in sorted(allowed, key=len, reverse=True):
        text = text.replace(a, " ")
    return " ".join(w for w in text.split() if re.search(r"[^\W\d_]", w))


def item_strings(html: str) -> list[str]:
    """The item's own data on a judge page (cue, response, labels, choices, speakers): study data."""
    p = Text()
    p.feed(html)
    out: list[str] = []

    def walk(v):  # noqa: ANN001, ANN202
        if isinstance(v, str):
            out.append(v)
        elif isinstance(v, dict):
            for x in v.values():
                walk(x)
        elif isinstance(v, list):
            for x in v:
                walk(x)
    walk(json.loads(p.json.get("item-data", "{}")))
    return out


def test_every_live_page_takes_its_text_from_the_catalogue(pseudo, sqlite_url):
    study = Study(name="pseudo", language=PSEUDO, display_name="42", consent_text="Consent text of the study.",
                  allocation=Allocation(human_ratio=1.0))
    allowed = ["42", "Consent text of the study.", i18n.duration(300, PSEUDO), i18n.duration(study.allocation.lone_wait_s, PSEUDO)]
    checked = []
    with TestClient(create_app(study, sqlite_url, admin_password="pw")) as c:
        def check(name: str, r) -> None:  # noqa: ANN001
            assert leftover(r.text, allowed) == "", name
            assert f'<html lang="{PSEUDO}">' in r.text, name
            checked.append(name)
        check("landing", c.get("/"))
        r = c.post("/start", follow_redirects=True)
        check("consent", r)
        pid = r.url.path.rsplit("/", 1)[-1]
        token = re.search(r'name="csrf" value="([^"]+)"', r.text).group(1)
        check("consent needed", c.post(f"/p/{pid}/consent", data={"csrf": token}))
        r = c.post(f"/p/{pid}/consent", data={"agree": "yes", "csrf": token}, follow_redirects=True)
        check("play (every screen of the game page)", r)
        p = Text()
        p.feed(r.text)
        assert set(json.loads(p.json["i18n"])) == pseudo  # the scripts get every message they use
        check("link not found", c.get("/p/nobody"))
        check("request refused", c.post(f"/p/{pid}/consent", data={"agree": "yes", "csrf": "forged"}))
        check("done", c.get(f"/p/{pid}/done"))
        other = TestClient(c.app)
        r = other.post("/start", follow_redirects=True)
        pid2 = r.url.path.rsplit("/", 1)[-1]
        token2 = re.search(r'name="csrf" value="([^"]+)"', r.text).group(1)
        check("declined", other.post(f"/p/{pid2}/decline", data={"csrf": token2}))
        assert "⟦" in c.post(f"/p/{pid}/survey", json={"age": 3}, headers={"X-CSRF-Token": token}).json()["detail"]
    assert len(checked) == 8, checked


@pytest.mark.parametrize("task", ["word", "caption", "object", "color", "fv", "conversation"])
def test_every_judge_page_takes_its_text_from_the_catalogue(task, pseudo, sqlite_url, tmp_path):
    with Store(sqlite_url) as st:
        sid = make_study(st, task, tmp_path / "img", items=2, feedback=1, min_rt_ms=0, completion_url=None,
                         object_words=True, ask_gender=True, language=PSEUDO)
        study = st.static_study(sid).study
    allowed = [f"Human or machine? ({task})", "female", "male"]  # the study's title; gender values are keys, not shown
    with TestClient(create_static_app(study, sqlite_url, admin_password="pw", rng_seed=3)) as c:
        pages = {"landing": c.get("/")}
        r = c.post("/start", follow_redirects=True)
        pages["consent"] = r
        pid = r.url.path.rsplit("/", 1)[-1]
        token = re.search(r'name="csrf" value="([^"]+)"', r.text).group(1)
        c.post(f"/p/{pid}/consent", data={"agree": "yes", "csrf": token})
        n = 0
        while 'id="item-data"' in (r := c.get(f"/p/{pid}")).text:
            pages[f"item {n}"] = r
            data = item_strings(r.text)
            assert leftover(r.text, allowed + data) == "", (task, n)
            form = {k: v for k, v in re.findall(r'<input type="hidden" name="(\w+)" value="([^"]*)"', r.text)}
            pages[f"incomplete {n}"] = c.post(f"/p/{pid}/answer", data=form)
            assert leftover(pages[f"incomplete {n}"].text, allowed + data) == ""
            form.update(answer="human", gender="female", object="yes", speaker_0="human", speaker_1="machine",
                        gender_0="female", gender_1="male")
            ctl = re.search(r'name="control" value="([^"]*)"', r.text)
            if ctl:
                form["control"] = ctl.group(1)
            r = c.post(f"/p/{pid}/answer", data=form, follow_redirects=True)
            if n == 0:
                assert "feedback" in str(r.url)
                pages["feedback"] = r
            n += 1
        pages["survey"] = r
        c.post(f"/p/{pid}/survey", json={"skipped": True}, headers={"X-CSRF-Token": token})
        pages["done"] = c.get(f"/p/{pid}/done")
        for name, r in pages.items():
            if not name.startswith(("item", "incomplete")):
                assert leftover(r.text, allowed + ["A", "B"]) == "", (task, name)
            assert f'<html lang="{PSEUDO}">' in r.text
    assert {"landing", "consent", "item 0", "incomplete 0", "feedback", "item 1", "survey", "done"} <= set(pages)


async def test_admin_says_the_language_the_filter_lists_and_that_eliza_stays_english(sqlite_url):
    import httpx

    from turinglab.game.config import Timing, WitnessSpec
    from turinglab.server.testing import AdminLogin, serve_in_thread

    eliza = WitnessSpec(codename="Eliza", kind="eliza", fallback=None, timing=Timing(base_s=0.2))
    for lang, says, not_said in (("de", ["Participant pages: German (de).", "word lists: English and de",
                                         "ELIZA (Eliza) answers in English"], []),
                                 ("en", ["Participant pages: English (en)."], ["ELIZA (Eliza) answers in English"])):
        app = create_app(Study(name=f"admin-{lang}", language=lang, witnesses=(eliza,)), sqlite_url, admin_password="pw")
        with serve_in_thread(app) as base:
            async with httpx.AsyncClient(base_url=base) as c:
                admin = (await c.get("/admin", auth=AdminLogin("pw"))).text
                page = (await c.get("/")).text
        note = re.search(r'<p class="small" id="language">(.*?)</p>', admin, re.S).group(1)
        assert all(s in note for s in says) and not any(s in note for s in not_said), note
        assert "ELIZA" not in page and "answers in English" not in page  # participants are not told
