"""`turinglab static from-games`: conversation items cut from stored live games."""

from __future__ import annotations

from typer.testing import CliRunner

from turinglab.analysis.demo.live import DemoSpec, generate
from turinglab.cli import app
from turinglab.store import Store

runner = CliRunner()


def test_from_games_chunks_truth_and_text(sqlite_url):
    res = generate(sqlite_url, DemoSpec(n_games=12, seed=4, format="three-player"))
    r = runner.invoke(app, ["static", "from-games", "--from-study", res["study"], "--lengths", "2,4",
                            "--study", "displaced", "--db", sqlite_url])
    assert r.exit_code == 0, r.output
    with Store(sqlite_url) as st:
        sid = st.static_study("displaced").id
        items = {i.key: i for i in st.items(sid)}
        expected = 0
        for g in st.games(res["study_id"]):
            log = st.events(g.id)
            for conv, ident in g.seats.items():
                msgs = [e for e in log if e.type == "message" and e.conversation == conv]
                replies = sum(1 for e in msgs if e.actor != "interrogator")
                for k in (2, 4):
                    key = f"{g.id}/{conv}/{k}"
                    if replies < k:
                        assert key not in items
                        continue
                    expected += 1
                    item = items[key]
                    assert item.truth == ("human" if ident.kind == "human" else "machine")
                    assert item.agent == (ident.witness if ident.kind == "ai" else "human")
                    shown = msgs[:2 * k]  # the demo interrogator opens and the witness replies
                    assert [t["text"] for t in item.payload["turns"]] == [e.payload["text"] for e in shown]
                    assert item.payload["speakers"] == {"A": "human", "B": item.truth}
                    assert item.payload["length"] == k and item.stimulus_key == f"{g.id}/{conv}"
        assert expected == len(items) > 0
    bad = runner.invoke(app, ["static", "from-games", "--from-study", "nope", "--study", "x", "--db", sqlite_url])
    assert bad.exit_code == 2 and "no live study 'nope'" in bad.output
    bad = runner.invoke(app, ["static", "from-games", "--from-study", res["study"], "--lengths", "4,2",
                              "--study", "x", "--db", sqlite_url])
    assert bad.exit_code == 2 and "--lengths must be increasing" in bad.output
