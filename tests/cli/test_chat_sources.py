"""Issue 35's done-when: a game whose every reply the fallback wrote (an LLM witness whose endpoint
refuses connections, played with `turinglab chat`) is exported with each reply's author, its
judgements row shows the fallback share, the report shows the witness's replies by source, and
the export's rebuild.py rebuilds those numbers."""

from __future__ import annotations

import subprocess
import sys

import pandas as pd

from tests.cli.test_chat import cli
from turinglab.store import Store

QUESTIONS = ["hi there, how is your day going?", "what did you have for breakfast?", "where do you live?"]


def test_a_dead_endpoint_game_is_exported_as_the_fallbacks(sqlite_url, tmp_path):
    study = tmp_path / "dead.yaml"  # the seat's ELIZA (no fallback of its own), or the witness's own
    study.write_text("preset: jones-bergen-2023\nname: dead-llm\nwitnesses:\n" + "".join(
        f"  - {{codename: {name}, kind: llm, model: m, base_url: 'http://127.0.0.1:1/v1', timeout_s: 2, "
        f"retries: 0, fallback: {fb}}}\n" for name, fb in (("Dead", "null"), ("Dead2", "eliza"))))
    for name in ("Dead", "Dead", "Dead2"):
        r = cli("chat", "--study", str(study), "--witness", name, "--no-delay", "--db", sqlite_url,
                stdin="\n".join(QUESTIONS) + "\n/verdict human 70 felt real\n")
        assert r.returncode == 0, r.stderr
    with Store(sqlite_url) as store:
        games = store.games()
        assert len(games) == 3
        for g in games:
            replies = [e.payload for e in store.events(g.id) if e.type == "message" and e.actor == "A"]
            assert [p["source"] for p in replies] == ["fallback"] * 3
            assert all(p["model"] == "m" and p["tries"] == 1 and p["latency_ms"] >= 0 for p in replies)
        shown = cli("db", "show", games[0].id, "--db", sqlite_url).stdout
        assert shown.count("fallback (m, 1 tries") == 3 and "'source'" not in shown and '"source"' not in shown
    out = tmp_path / "export"
    r = cli("export", "--db", sqlite_url, "--out", str(out))
    assert r.returncode == 0, r.stderr
    msgs = pd.read_csv(out / "messages.csv")
    assert (msgs.loc[msgs["actor"] == "A", "source"] == "fallback").sum() == 9
    assert set(msgs.loc[msgs["actor"] == "interrogator", "source"]) == {"interrogator"}
    assert pd.read_parquet(out / "messages.parquet")["source"].tolist() == msgs["source"].tolist()
    j = pd.read_csv(out / "judgements.csv")
    assert j["witness_replies"].tolist() == [3] * 3 and j["replies_fallback"].tolist() == [3] * 3
    assert j["replies_model"].tolist() == [0] * 3 and j["fallback_share"].tolist() == [1.0] * 3
    assert j["flag_fallback_wrote_reply"].tolist() == [True] * 3
    codebook = (out / "codebook.md").read_text()
    assert "| `source` |" in codebook and "| `fallback_share` |" in codebook and "fallback_wrote_reply" in codebook
    html = (out / "report.html").read_text()
    assert "Replies by source" in html
    row = html[html.index("<td>Dead</td>"):].split("</tr>")[0]
    cells = [c.split("</td>")[0] for c in row.split("<td>")[1:]]
    # witness, replies, model, regenerated, brush_off, fallback, last_resort, unknown, pass rates
    assert cells[:8] == ["Dead", "6", "0.00", "0.00", "0.00", "1.00", "0.00", "0.00"]
    assert cells[8].startswith("2/2 = 1.00") and cells[9] == "no games"
    rb = subprocess.run([sys.executable, "rebuild.py"], cwd=out, capture_output=True, text=True, timeout=600)
    assert rb.returncode == 0, rb.stdout + rb.stderr
    import json
    numbers = json.loads((out / "report_numbers.json").read_text())["numbers"]
    assert numbers["sources.Dead.share_fallback"] == 1.0 and numbers["sources.Dead.pass_without.n"] == 0


def test_each_source_in_the_terminal(sqlite_url, tmp_path):
    """The same loopback model as the server test, played with `turinglab chat --study`: the
    terminal's replies go through the same AI seat and are stored with the same sources."""
    from tests.server.live.test_reply_sources import QUESTIONS, serve_model

    httpd, url = serve_model([])
    try:
        study = tmp_path / "loop.yaml"
        study.write_text("preset: jones-bergen-2023\nname: loop\nwitnesses:\n"
                         f"  - {{codename: Sierra, kind: llm, model: m, base_url: '{url}', api_key_env: X, "
                         "timeout_s: 20, retries: 0, prompt: young, fallback: eliza, "
                         "timing: {base_s: 4.0, s_per_char: 0.01, gamma_shape: 1.0, gamma_scale: 0.01}}\n")
        r = cli("chat", "--study", str(study), "--witness", "Sierra", "--no-delay", "--db", sqlite_url,
                stdin="\n".join(q for q, _ in QUESTIONS) + "\n/verdict ai 80\n")
    finally:
        httpd.shutdown()
        httpd.server_close()
    assert r.returncode == 0, r.stderr
    with Store(sqlite_url) as store:
        (g,) = store.games()
        replies = [e.payload for e in store.events(g.id) if e.type == "message" and e.actor == "A"]
    assert [p["source"] for p in replies] == [s for _, s in QUESTIONS]
    assert [p["tries"] for p in replies] == [1, 2, 1, 2]
