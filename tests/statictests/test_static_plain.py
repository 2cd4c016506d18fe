"""Your own stimuli: `static import --format plain` reads a CSV or JSONL of items and a folder of
pictures, with the same all-or-nothing checks as Zhang's files."""

from __future__ import annotations

import csv
import json

import pytest
from typer.testing import CliRunner

from turinglab.cli import app
from turinglab.store import Store

runner = CliRunner()
PNG = bytes.fromhex("89504e470d0a1a0a0000000d4948445200000001000000010806000000"
                    "1f15c4890000000d49444154789c6360f8cf00000301010018dd8db00000000049454e44ae426082")


def folder(tmp_path, names=("beach.png", "forest.png", "street.png")):
    d = tmp_path / "pictures"
    d.mkdir()
    for n in names:
        (d / n).write_bytes(PNG)
    return d


def write_csv(path, rows):
    with path.open("w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=["stimulus_id", "task", "image", "text", "response", "truth", "agent",
                                          "object_present"])
        w.writeheader()
        w.writerows(rows)
    return path


COLOUR = [
    {"stimulus_id": "beach", "task": "color", "image": "beach.png", "response": "blue", "truth": "human", "agent": "p01"},
    {"stimulus_id": "beach", "task": "color", "image": "beach.png", "response": "gray", "truth": "machine", "agent": "median-cut"},
    {"stimulus_id": "forest", "task": "color", "image": "forest.png", "response": "green", "truth": "human", "agent": "p02"},
    {"stimulus_id": "forest", "task": "color", "image": "forest.png", "response": "green", "truth": "machine", "agent": "Median-Cut"},
    {"stimulus_id": "street", "task": "color", "image": "street.png", "response": "gray", "truth": "machine", "agent": "my-vlm"},
]


def imp(db, items, images, task="color", study="mine"):
    return runner.invoke(app, ["static", "import", "--format", "plain", "--task", task, "--responses", str(items),
                               "--images", str(images), "--study", study, "--db", db])


def test_colour_study_from_a_folder_of_pictures(db_url, tmp_path):
    r = imp(db_url, write_csv(tmp_path / "items.csv", COLOUR), folder(tmp_path))
    assert r.exit_code == 0, r.output
    assert "3 stimuli, 5 items" in r.output
    with Store(db_url) as st:
        info = st.static_study("mine")
        items = st.items(info.id)
    assert info.task == "color" and info.study.image_dir.endswith("pictures")
    assert {i.stimulus_image for i in items} == {"beach.png", "forest.png", "street.png"}
    assert {i.agent for i in items if i.truth == "machine"} == {"median-cut", "my-vlm"}  # one agent in any case
    assert {i.text for i in items if i.stimulus_key == "forest"} == {"green"}
    assert all(i.payload["color"] == i.text for i in items)


def test_captioning_study_from_jsonl(db_url, tmp_path):
    pics = folder(tmp_path, ("a.jpg", "b.jpg"))
    rows = [{"stimulus_id": "a", "task": "caption", "image": "a.jpg", "response": "A dog runs on the sand.",
             "truth": "human", "agent": "p01"},
            {"stimulus_id": "a", "task": "caption", "image": "a.jpg", "response": "a dog on a beach",
             "truth": "machine", "agent": "blip"},
            {"stimulus_id": "b", "task": "caption", "image": "b.jpg", "response": "Two cups of tea.",
             "truth": "human", "agent": "p02", "object_present": ["cup", "tea"], "object_absent": ["dog"]}]
    items = tmp_path / "items.jsonl"
    items.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    r = imp(db_url, items, pics, task="caption", study="cap")
    assert r.exit_code == 0, r.output
    with Store(db_url) as st:
        got = st.items(st.static_study("cap").id)
    assert sorted(i.text for i in got) == sorted(r["response"] for r in rows)
    b = next(i for i in got if i.stimulus_key == "b")
    assert b.stimulus_fields["object_present"] == ["cup", "tea"] and b.stimulus_fields["object_absent"] == ["dog"]


@pytest.mark.parametrize("change,words", [
    ({"image": "missing.png"}, ["row 2", "field 'image'", "not a file in"]),
    ({"truth": "bot"}, ["row 2", "field 'truth'"]),
    ({"task": "object"}, ["row 2", "field 'task'"]),
    ({"agent": ""}, ["row 2", "field 'agent'"]),
    ({"image": "forest.png"}, ["row 2", "differ from an earlier row"]),
    ({"object_present": " ; "}, ["row 2", "field 'object_present'"]),
])
def test_any_bad_row_refuses_the_whole_file(db_url, tmp_path, change, words):
    rows = [dict(r) for r in COLOUR]
    rows[1].update(change)
    r = imp(db_url, write_csv(tmp_path / "items.csv", rows), folder(tmp_path))
    assert r.exit_code == 2, r.output
    for w in words:
        assert w in r.output, r.output
    assert "nothing imported" in r.output
    with Store(db_url) as st:
        assert st.static_studies() == []


def test_plain_text_is_checked_like_every_import(sqlite_url, tmp_path):
    rows = [dict(r) for r in COLOUR]
    rows[0]["response"] = "bl\x00ue"
    r = imp(sqlite_url, write_csv(tmp_path / "items.csv", rows), folder(tmp_path))
    assert r.exit_code == 2 and "NUL" in r.output and "field 'text'" in r.output


def test_free_viewing_scanpath_in_pixels(sqlite_url, tmp_path):
    pics = folder(tmp_path, ("room.jpg",))
    rows = [{"stimulus_id": "room", "task": "fv", "image": "room.jpg", "response": [[640, 512], [1300, 20]],
             "truth": "human", "agent": "s01"},
            {"stimulus_id": "room", "task": "fv", "image": "room.jpg", "response": "[[640, 512], [100, 900]]",
             "truth": "machine", "agent": "my-saliency"}]
    items = tmp_path / "fv.jsonl"
    items.write_text("\n".join(json.dumps(r) for r in rows))
    r = imp(sqlite_url, items, pics, task="fv", study="fv")
    assert r.exit_code == 0, r.output
    with Store(sqlite_url) as st:
        got = {i.agent: i for i in st.items(st.static_study("fv").id)}
    assert got["s01"].payload["scanpath_px"] == [[640, 512], [1300, 20]] and got["s01"].payload["outside_frame"] == 1
    assert got["my-saliency"].payload["scanpath"][1] == [2 * 100 / 1280 - 1, 2 * 900 / 1024 - 1]
