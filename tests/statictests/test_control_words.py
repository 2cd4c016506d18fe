"""The authors' control words (zhang2023/control_words.tsv) reach every imported Zhang colour and
object stimulus, and nothing else; a picture task never deals an item without its picture."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

from turinglab.statictests.control_words import author_words
from turinglab.statictests.fill import dealable
from turinglab.statictests.importing import parse_import
from turinglab.statictests.zhang import parse_responses

ZHANG = Path(__file__).parents[2] / "turinglab" / "statictests" / "zhang2023"
# read from the authors' task_color.js / task_objectdet.js by hand, apart from the shipped table
FROM_SOURCE = {"color": {"2.jpg": ("grass", "fire hydrant"), "1017.jpg": ("Horse", "Clothing"),
                         "1199.jpg": ("Person", "Analog Clock"), "4916.jpg": ("table", "bicycle")},
               "object": {"2276.jpg": ("face", "clouds"), "1652.jpg": ("fruit", "tie"), "5.jpg": ("teddy", "vase")}}


def test_every_zhang_picture_gets_the_authors_words():
    for task in ("color", "object"):
        parsed = parse_import(task, str(ZHANG / f"{task}.json"), None, None)
        fields = {s.key: s.fields for s in parsed.stimuli}
        assert len(fields) == {"color": 873, "object": 808}[task]
        assert all(f["object_present"] and f["control_words"] == "zhang2023" for f in fields.values())
        for image, (one, wrong) in FROM_SOURCE[task].items():
            if image in fields:
                assert fields[image]["object_present"] == [one] and fields[image]["object_absent"] == [wrong]
            assert author_words(task)[image] == (one, wrong)
        same = [k for k, f in fields.items() if "object_absent" not in f]
        assert all(author_words(task)[k][0] == author_words(task)[k][1] for k in same)
        assert f"{len(same)} have the same word in both lists" in " ".join(parsed.notes)
    # the object test's lists are the colour test's for the pictures they share
    shared = set(author_words("object")) & set(author_words("color"))
    assert len(shared) == 813 and all(author_words("object")[k] == author_words("color")[k] for k in shared)


def test_other_pictures_get_no_words(tmp_path):
    data = json.loads((ZHANG / "color.json").read_text())
    own = {f"beach{n}.jpg": [dict(r, imageID=f"beach{n}.jpg") for r in recs]
           for n, recs in enumerate(list(data.values())[:3])}
    parsed = parse_responses(own, "color")
    assert not any("object_present" in s.fields for s in parsed.stimuli) and parsed.notes == []
    mixed = {**{k: data[k] for k in list(data)[:2]}, **own}  # one unknown picture: the file is not the authors'
    assert not any("object_present" in s.fields for s in parse_responses(mixed, "color").stimuli)


def test_items_without_a_picture_are_never_dealt():
    items = [SimpleNamespace(id=n, stimulus_image=f"{n}.jpg" if n % 3 else None) for n in range(9)]
    dealt, why = dealable(items, "caption")
    assert [i.id for i in dealt] == [1, 2, 4, 5, 7, 8]
    assert why.startswith("3 of 9 items are never dealt to judges: their stimulus has no picture (task caption")
    assert dealable(items, "word") == (items, None)  # a cue word needs no picture
    assert dealable(items[1:3], "color") == (items[1:3], None)


def test_a_raw_run_trial_keeps_the_word_its_judge_saw():
    """out_final.csv records only whether the word was the right one (oneWord_curr); the word itself
    follows from the authors' lists and is kept with the trial, as the judge pages keep theirs."""
    import csv
    import sys

    raw = Path(__file__).parents[1] / "data" / "rawruns" / "object_participants.csv"
    parsed = parse_import("object", str(ZHANG / "object.json"), str(raw), None, "psiturk")
    csv.field_size_limit(sys.maxsize)
    with raw.open(newline="") as fh:
        source = [d["trialdata"] for r in csv.DictReader(fh) if r["datastring"]
                  for d in json.loads(r["datastring"])["data"] if d["trialdata"].get("phase") == "TEST"]
    assert len(parsed.trials) == len(source) == 18
    for t, s in zip(parsed.trials, source):
        one, wrong = author_words("object")[f"{s['hit']}.jpg"]
        assert t.answers["object_word"] == (one if s["oneWord_curr"] == "0" else wrong)
