"""`turinglab export --redact` (issue 38.3): personal data in messages, reasons and free-text
answers becomes typed placeholders, the persona's drawn name and town are kept, the review file
beside the export lists every redaction and `--redactions` applies a reviewed list; the report of
a redacted export, opened in Chromium, shows placeholders and none of the planted words."""

from __future__ import annotations

import json

import pandas as pd
from typer.testing import CliRunner

from turinglab.analysis.demo.live import DemoSpec, generate
from turinglab.cli import app
from turinglab.game.config import Study
from turinglab.game.engine import Game, GiveVerdict, Send
from turinglab.game.events import Identity
from turinglab.store import Store

T0 = 1_700_200_000_000
PLANTED = {"jess.moorcroft@gmail.com": "[EMAIL]", "07700 900461": "[PHONE]", "@moorcroft_j": "[HANDLE]",
           "Jessica": "[NAME]", "Harrogate": "[PLACE]", "5567123": "[NUMBER]"}
LINES = ["hi, my name is Jessica", "I live in Harrogate, you?", "email me jess.moorcroft@gmail.com",
         "or ring 07700 900461", "insta is @moorcroft_j", "my staff number is 5567123"]
REASONS = ["said her name was Jessica", "grew up in Harrogate like me", "gave jess.moorcroft@gmail.com",
           "typed 07700 900461 fast"]


def _seed(url):
    generate(url, DemoSpec(n_games=6, seed=8))
    with Store(url) as st:
        sid = st.studies()[0].id
        ai = next(g.seats["A"].witness for g in st.games(sid) if g.seats["A"].kind == "ai")
        me = st.create_participant(label="r", consent_ms=T0, demographics={"age": 30, "gender": "woman, call me Jessica"})
        for k, reason in enumerate(REASONS):
            t = T0 + k * 10**6
            gid = st.create_game(sid, "two-player", {"A": Identity("ai", witness=ai, selection_prob=0.5)}, me, t)
            g = Game.start("two-player", Study(name="r").rules, t,
                           personas={"A": {"name": "Emily", "city": "Phoenix, AZ"}})
            assert g.apply(Send("interrogator", LINES[k], "A"), t + 1000).ok
            assert g.apply(Send("A", "I'm Emily, from Phoenix" if k == 0 else LINES[k + 2], "A"), t + 2000).ok
            assert g.apply(GiveVerdict("interrogator", "ai", 70, reason), t + 3000).ok
            st.append_events(gid, g.log)


def test_export_redact_review_and_report(sqlite_url, tmp_path, chromium_path):
    _seed(sqlite_url)
    out = tmp_path / "pub"
    r = CliRunner().invoke(app, ["export", "--db", sqlite_url, "--out", str(out), "--redact"])
    assert r.exit_code == 0, r.output
    text = "\n".join(f.read_text() for f in out.iterdir() if f.suffix in (".csv", ".json", ".md", ".html"))
    assert [w for w in PLANTED if w in text] == []
    msgs = pd.read_csv(out / "messages.csv")
    joined = " ".join(msgs["text"].astype(str))
    assert all(ph in joined for ph in PLANTED.values())
    assert "I'm Emily, from Phoenix" in joined  # the persona's drawn name and town are kept
    review = pd.read_csv(tmp_path / "pub.redactions_REVIEW.csv", dtype=str)
    assert set(PLANTED) <= set(review["original"])
    assert set(review.loc[review["kind"] == "persona", "decision"]) == {"keep"}
    cb = json.loads((out / "codebook.json").read_text())
    assert cb["redaction"]["counts"]["email"] >= 2 and "[NAME]" in cb["redaction"]["method"]

    # the Chromium check: the report of the redacted export shows placeholders, not the words
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=chromium_path)
        page = browser.new_page()
        page.goto((out / "report.html").as_uri())
        shown = page.inner_text("body")
        browser.close()
    assert "[NAME]" in shown and "[EMAIL]" in shown
    assert [w for w in PLANTED if w in shown] == []

    # a reviewer keeps one redaction: the next export applies the reviewed list
    review.loc[review["original"] == "Harrogate", "decision"] = "keep"
    review.to_csv(tmp_path / "reviewed.csv", index=False)
    out2 = tmp_path / "pub2"
    r = CliRunner().invoke(app, ["export", "--db", sqlite_url, "--out", str(out2), "--redactions",
                                 str(tmp_path / "reviewed.csv")])
    assert r.exit_code == 0, r.output
    joined2 = " ".join(pd.read_csv(out2 / "messages.csv")["text"].astype(str))
    assert "Harrogate" in joined2 and "jess.moorcroft@gmail.com" not in joined2


def test_a_bad_review_file_is_one_clear_error(sqlite_url, tmp_path):
    generate(sqlite_url, DemoSpec(n_games=4, seed=1))
    bad = tmp_path / "r.csv"
    bad.write_text("id,decision\nx,maybe\n")
    r = CliRunner().invoke(app, ["export", "--db", sqlite_url, "--out", str(tmp_path / "o"), "--redactions", str(bad)])
    assert r.exit_code == 2 and "decision must be keep or redact" in r.output
    assert not (tmp_path / "o").exists()
