"""`static generate --task caption|object|color --vision`: the picture goes to an OpenAI-compatible
vision model as an image content part. The model is a deterministic double served over real HTTP
(FastAPI on uvicorn, loopback) that decodes each image part and compares it with the stimulus file;
unusable answers are counted, retried and reported; a text-only model gets a clear error."""

from __future__ import annotations

import base64
import json
import re
from collections import Counter
from contextlib import contextmanager
from pathlib import Path

import pytest
from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse

from turinglab.server.testing import serve_in_thread
from turinglab.game.static_config import preset_study
from turinglab.analysis.demo.static import copy_images
from turinglab.statictests.generate import GenerateError, ModelConfig, check_task
from turinglab.statictests.vision import check_caption, check_color, check_labels, generate_pictures
from turinglab.store.api import Store
from turinglab.store.static import ResponseIn, StimulusIn

PICTURES = ["astronaut.png", "rocket.jpg", "coffee.png"]
MEDIA = {".png": "image/png", ".jpg": "image/jpeg"}


@pytest.fixture(autouse=True)
def _cache(tmp_path, monkeypatch):
    monkeypatch.setenv("TURINGLAB_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("TL_VISION_KEY", "test-key")


@pytest.fixture
def pictures(tmp_path) -> Path:
    d = tmp_path / "pictures"
    copy_images(d)
    return d


@contextmanager
def vision_model(image_dir: Path, answers: dict[str, list[str]]):
    """A fake OpenAI-compatible vision model: each request must hold one text part and one image
    part whose base64 data URL decodes to one of the files in `image_dir` (of the right media
    type); it answers that picture's next answer (the last one repeated). Yields (base URL, log):
    log["seen"] the picture of each valid request, log["bad"] what was wrong with the others."""
    files = {p.read_bytes(): p for p in image_dir.iterdir() if p.suffix in MEDIA}
    log: dict[str, list] = {"seen": [], "bad": [], "bodies": []}
    calls: Counter[str] = Counter()
    app = FastAPI()

    @app.post("/v1/chat/completions")
    async def chat(request: Request):
        body = await request.json()
        parts = body["messages"][-1]["content"]
        texts = [p for p in parts if p.get("type") == "text"] if isinstance(parts, list) else []
        images = [p for p in parts if p.get("type") == "image_url"] if isinstance(parts, list) else []
        m = re.fullmatch(r"data:(image/[a-z]+);base64,([A-Za-z0-9+/=]+)", images[0]["image_url"]["url"]) \
            if len(texts) == 1 and len(images) == 1 else None
        path = files.get(base64.b64decode(m.group(2), validate=True)) if m else None
        if path is None or MEDIA[path.suffix] != m.group(1):
            log["bad"].append("no valid image part" if m is None else "the picture is none of the files")
            return JSONResponse({"error": {"message": "bad image part", "type": "invalid_request_error"}}, 400)
        log["seen"].append(path.name)
        log["bodies"].append(body)
        seq = answers.get(path.name, ["a picture of something"])
        text = seq[min(calls[path.name], len(seq) - 1)]
        calls[path.name] += 1
        return {"id": "c1", "object": "chat.completion", "created": 0, "model": body["model"],
                "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
                "usage": {"prompt_tokens": 9, "completion_tokens": 5, "total_tokens": 14}}

    with serve_in_thread(app) as base:
        yield base + "/v1", log


def picture_study(st: Store, task: str, image_dir: Path, names=PICTURES) -> int:
    cfg = preset_study("p", task).model_copy(update={"image_dir": str(image_dir)})
    sid = st.register_static_study(cfg)
    st.add_items(sid, [StimulusIn(n, image=n, fields={"index": i}) for i, n in enumerate(names)],
                 [ResponseIn(f"{n}/h", n, {"caption": "a person in a picture", "object": "person, sky",
                                           "color": "gray"}[task], "human", "p1") for n in names])
    return sid


def vlm(url: str, **kw) -> ModelConfig:
    return ModelConfig(model="fake-vlm", base_url=url, api_key_env="TL_VISION_KEY", takes_images=True,
                       max_tokens=60, timeout_s=10, **kw)


@pytest.mark.parametrize("raw,caption,reason", [
    ("A man in a white suit stands by a flag.", "A man in a white suit stands by a flag.", None),
    ('Caption: "a cup of coffee on a saucer"', "a cup of coffee on a saucer", None),
    ("", None, "empty"), ("I'm sorry, I can't describe this image.", None, "refused"),
    ("A rocket. It is launching.", None, "not one caption"), ("a rocket\nlaunching", None, "not one caption"),
    ("rocket", None, "too short"), (" ".join(["word"] * 41), None, "too long"),
    ("A dog not able to reach the ball.", "A dog not able to reach the ball.", None),  # not a refusal
    ("Unfortunately I cannot see the picture.", None, "refused"), ("This image, as an AI, I won't caption.", None, "refused"),
])
def test_captions_are_checked(raw, caption, reason):
    assert check_caption(raw) == (caption, reason)


@pytest.mark.parametrize("raw,labels,reason", [
    ("dog, frisbee, grass", ["dog", "frisbee", "grass"], None), ("1. cup\n2. saucer\n3. spoon.", ["cup", "saucer", "spoon"], None),
    ("Objects: fire hydrant, car", ["fire hydrant", "car"], None), ("person", ["person"], None),
    ("", None, "empty"), ("As an AI I cannot see images", None, "refused"),
    ("cup, saucer, spoon, table", None, "more than 3 labels"), ("cup, Cup, spoon", None, "repeats a label"),
    ("there is a cup of hot coffee on the table", None, "not a list of labels"), ("1, 2, 3", None, "not a list of labels"),
])
def test_object_labels_are_checked(raw, labels, reason):
    assert check_labels(raw) == (labels, reason)


@pytest.mark.parametrize("raw,color,reason", [
    ("green", "green", None), ("Grey.", "gray", None), ("**Blue**", "blue", None), ("Color: red", "red", None),
    ("", None, "empty"), ("The main colour is green.", None, "not one of the 11 colours"),
    ("turquoise", None, "not one of the 11 colours"), ("I'm sorry, I can't see colours", None, "refused"),
])
def test_colour_answers_are_checked(raw, color, reason):
    assert check_color(raw) == (color, reason)


def test_pictures_go_to_the_model_as_image_parts_and_captions_are_stored(sqlite_url, pictures):
    answers = {"astronaut.png": ["An astronaut in a white suit poses beside a flag."],
               "rocket.jpg": ["A rocket standing on its launch pad."],
               "coffee.png": ["A cup of coffee with a spoon on a saucer."]}
    with vision_model(pictures, answers) as (url, log), Store(sqlite_url) as st:
        sid = picture_study(st, "caption", pictures)
        rep = generate_pictures(st, sid, vlm(url), "caption", retries=2)
        items = {i.stimulus_key: i for i in st.items(sid) if i.agent == "fake-vlm"}
        again = generate_pictures(st, sid, vlm(url), "caption")  # resumed: nothing asked
        other = generate_pictures(st, sid, vlm(url), "caption", agent="fake-vlm-2", limit=1)  # the same call: cached
    assert log["bad"] == [] and log["seen"] == PICTURES  # each picture sent once, bytes equal to its file
    assert (rep.stored, rep.calls, rep.cached_calls, dict(rep.unusable)) == (3, 3, 0, {})
    assert (again.stored, again.skipped, again.calls) == (0, 3, 0)
    assert (other.stored, other.cached_calls) == (1, 1)
    body = log["bodies"][0]
    assert body["model"] == "fake-vlm" and body["max_tokens"] == 60 and body["seed"] == 42
    assert "write one caption" in body["messages"][0]["content"][0]["text"]
    assert {k: i.text for k, i in items.items()} == {k: v[0] for k, v in answers.items()}
    p = items["rocket.jpg"].payload
    assert items["rocket.jpg"].truth == "machine" and p["raw"] == answers["rocket.jpg"][0]
    assert p["image"] == "rocket.jpg" and p["settings"]["takes_images"] is True and p["settings"]["model"] == "fake-vlm"
    part = p["prompt"][0]["content"][1]
    assert part["type"] == "image_url" and p["image_sha256"] in part["image_url"]["url"]
    assert "base64" not in json.dumps(p)  # the stored prompt names the picture, it does not copy it


def test_unusable_picture_answers_are_counted_retried_and_reported(sqlite_url, pictures):
    answers = {"astronaut.png": ["", "I'm sorry, I cannot identify people", "person, flag, suit, helmet",
                                 "1. person\n2. flag\n3. helmet"],
               "rocket.jpg": ["there is a rocket on a launch pad by the sea"],
               "coffee.png": ["cup, saucer, spoon"]}
    with vision_model(pictures, answers) as (url, log), Store(sqlite_url) as st:
        sid = picture_study(st, "object", pictures, names=[*PICTURES, "lost.png"])
        rep = generate_pictures(st, sid, vlm(url, temperature=0.0), "object", retries=3)
        items = {i.stimulus_key: i for i in st.items(sid) if i.agent == "fake-vlm"}
    assert log["bad"] == [] and Counter(log["seen"]) == {"astronaut.png": 4, "rocket.jpg": 4, "coffee.png": 1}
    assert rep.asked == 4 and rep.stored == 2 and rep.calls == 9
    assert dict(rep.unusable) == {"empty": 1, "refused": 1, "more than 3 labels": 1, "not a list of labels": 4}
    failed = {f["stimulus"]: f for f in rep.failed}
    assert [a["raw"] for a in failed["rocket.jpg"]["attempts"]] == answers["rocket.jpg"] * 4  # every raw answer kept
    assert "not an image file" in failed["lost.png"]["reason"] and failed["lost.png"]["attempts"] == []
    a = items["astronaut.png"]
    assert a.text == "person, flag, helmet" and a.payload["labels"] == ["person", "flag", "helmet"]
    assert [x["reason"] for x in a.payload["unusable_attempts"]] == ["empty", "refused", "more than 3 labels"]
    assert a.payload["settings"]["seed"] == 45 and a.payload["settings"]["temperature"] == 0.7  # retries vary
    assert json.dumps(rep.as_dict())


def test_colour_from_the_command_line(tmp_path, pictures):
    from typer.testing import CliRunner

    from turinglab.cli.static import app

    rows = tmp_path / "items.csv"
    rows.write_text("stimulus_id,task,image,response,truth,agent\n" + "".join(
        f"{n},color,{n},gray,human,p1\n" for n in PICTURES))
    db = f"sqlite:///{tmp_path}/c.db"
    run = CliRunner().invoke
    r = run(app, ["import", "--format", "plain", "--task", "color", "--responses", str(rows), "--images", str(pictures),
                  "--study", "col", "--db", db])
    assert r.exit_code == 0, r.output
    answers = {"astronaut.png": ["The main colour is white.", "White"], "rocket.jpg": ["grey"], "coffee.png": ["brown"]}
    with vision_model(pictures, answers) as (url, log):
        r = run(app, ["generate", "--study", "col", "--task", "color", "--model", "fake-vlm", "--base-url", url,
                      "--api-key-env", "TL_VISION_KEY", "--vision", "--report", str(tmp_path / "rep.json"), "--db", db])
    assert r.exit_code == 0, r.output
    assert "3 responses stored as agent 'fake-vlm' (3 pictures asked" in r.output
    assert "unusable answers: 1 (not one of the 11 colours 1)" in r.output
    assert log["bad"] == [] and [b["max_tokens"] for b in log["bodies"]] == [8] * 4  # the colour task's default
    with Store(db) as st:
        got = {i.stimulus_key: i.payload["color"] for i in st.items(st.static_study("col").id) if i.agent == "fake-vlm"}
    assert got == {"astronaut.png": "white", "rocket.jpg": "gray", "coffee.png": "brown"}


def test_a_text_only_model_is_refused_with_what_to_do(tmp_path):
    from typer.testing import CliRunner

    from turinglab.cli.static import app

    with pytest.raises(GenerateError, match="reads text only.*--vision"):
        check_task("caption", ModelConfig())
    with pytest.raises(GenerateError, match="add --vision if model 'gpt-x' takes image input"):
        check_task("object", ModelConfig(model="gpt-x", base_url="http://127.0.0.1:9/v1"))
    check_task("color", ModelConfig(model="gpt-x", takes_images=True))  # accepted
    for task in ("caption", "object", "color"):
        r = CliRunner().invoke(app, ["generate", "--study", "s", "--task", task, "--db", f"sqlite:///{tmp_path}/x.db"])
        assert r.exit_code == 2 and "the embedded local model reads text only" in r.output and "--vision" in r.output
    r = CliRunner().invoke(app, ["generate", "--study", "s", "--task", "fv", "--db", f"sqlite:///{tmp_path}/x.db"])
    assert r.exit_code == 2 and "caption, object and color" in r.output


def test_a_picture_study_without_an_image_folder_is_refused(sqlite_url):
    with Store(sqlite_url) as st:
        sid = st.register_static_study(preset_study("np", "caption"))
        with pytest.raises(GenerateError, match="no image folder; import it with --images"):
            generate_pictures(st, sid, ModelConfig(model="m", takes_images=True), "caption")
        with pytest.raises(GenerateError, match="is a caption study; --task color needs a color study"):
            generate_pictures(st, sid, ModelConfig(model="m", takes_images=True), "color")
