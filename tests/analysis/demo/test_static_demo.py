"""`turinglab demo-data --static`: six playable static studies, offline."""

from __future__ import annotations

import json
from collections import Counter

from typer.testing import CliRunner

from turinglab.analysis.demo.static import data_dir
from turinglab.cli import app
from turinglab.analysis.demo.static import IMAGES
from turinglab.store import Store

DATA = data_dir()  # the shipped copy (turinglab/statictests/zhang2023), or $TURINGLAB_ZHANG_DATA
runner = CliRunner()


def test_demo_static_builds_six_playable_studies(tmp_path, sqlite_url):
    img = tmp_path / "img"
    r = runner.invoke(app, ["demo-data", "--static", "--db", sqlite_url, "--images-dir", str(img),
                            "--zhang-data", str(DATA)])
    assert r.exit_code == 0, r.output
    lic = (img / "LICENSES.txt").read_text()
    for name, text in IMAGES.items():
        assert (img / name).is_file() and f"{name}: {text}" in lic
    with Store(sqlite_url) as st:
        studies = {s.task: s for s in st.static_studies()}
        assert set(studies) == {"word", "caption", "object", "color", "fv", "conversation"}
        word = json.loads((DATA / "word.json").read_text())
        assert len(st.items(studies["word"].id)) == sum(len(v) for v in word.values())
        for task, s in studies.items():
            items = {i.id: i for i in st.items(s.id)}
            judge = st.create_participant(label=f"j-{task}")
            sess = st.start_judge_session(s.id, judge, seed=1)
            dealt = [items[p.response_id] for p in sess.items]
            assert len(dealt) == s.study.session.items
            assert Counter(i.truth for i in dealt)["human"] == round(s.study.session.items * 0.5)
            assert len({i.stimulus_id for i in dealt}) == len(dealt)
            if task in ("caption", "object", "color", "fv"):
                assert all((img / i.stimulus_image).is_file() for i in dealt)
            if task == "color":
                assert all(len(i.stimulus_fields["point"]) == 2 for i in dealt)
            if task == "fv":
                assert all(all(-1 <= v <= 1 for p in i.payload["scanpath"] for v in p) for i in dealt)
            if task == "conversation":
                assert all(i.payload["turns"] and i.payload["length"] in (2, 4) for i in dealt)
        caption = json.loads((DATA / "caption.json").read_text())
        first = list(caption.values())[0]
        shown = [i for i in st.items(studies["caption"].id) if i.stimulus_fields["source_image"] == list(caption)[0]]
        assert sorted(i.text for i in shown) == sorted(r["response"] for r in first)  # real responses, honestly re-attached


def test_zhang_data_ships_with_the_package(monkeypatch):
    """With no --zhang-data and no $TURINGLAB_ZHANG_DATA (a user's install), the demo reads the shipped MIT copy."""
    from turinglab.analysis.demo import static as demo

    monkeypatch.delenv("TURINGLAB_ZHANG_DATA", raising=False)
    d = demo.data_dir()
    assert d == demo.SHIPPED and (d / "LICENSE").read_text().startswith("MIT License")
    word = json.loads((d / "word.json").read_text())
    assert len(word) == 150 and sum(len(v) for v in word.values()) == 1500
