"""`turinglab demo-data --static`: a playable static study for each of Zhang's six tasks, offline.

What is real and what is not (also printed by the command and written to the images folder):

* word association: the real `word.json` of Zhang et al. (MIT, shipped in turinglab/statictests/zhang2023): 150 cues,
  1 500 responses by humans and five models.
* caption, object, colour: the pictures are scikit-image's bundled sample images (licences in
  `IMAGES` and in LICENSES.txt); the responses are real responses from Zhang's `caption.json`,
  `object.json`, `color.json`, but they were written for *other* pictures (MS-COCO photographs that
  are not shipped). The pairing only makes the pages playable; it is not a valid test.
  Colour: the whole picture (a random `point` field is still stored; the page does not draw it).
* free viewing: Zhang's `fv.json` is not in the shared data, so the scanpaths are generated: items
  labelled human are a centre-biased random walk (agent `demo-walk`), machine items come from
  `demo-uniform` (uniform fixations) and `demo-edges` (the strongest edges). Not human data.
* conversation: the shared data has no transcripts (`trials_all.json` holds verdicts and reasons
  only), so the conversations are a displaced test cut from demo live games played through the
  real engine with canned lines (`turinglab demo-data`); exchanges of 2 and 4. Each game's lines are
  about one of Zhang's topics, so the items carry a true topic control (five choices).
"""

from __future__ import annotations

import json
import random
import shutil
from pathlib import Path
from typing import Any

import numpy as np

from turinglab.game.static_config import StaticStudy, parse_static_study
from turinglab.statictests.zhang import parse_responses
from turinglab.store.static import ResponseIn, StimulusIn, plan_session

SHIPPED = Path(__file__).resolve().parents[2] / "statictests" / "zhang2023"  # the same files, shipped with the package (MIT)
# scikit-image sample images whose docstrings state a licence that allows shipping
IMAGES = {
    "astronaut.png": "NASA Great Images database; no known copyright restrictions, public domain",
    "camera.png": "CC0, by the photographer (Lav Varshney)",
    "chelsea.png": "CC0, by the photographer (Stefan van der Walt)",
    "coffee.png": "CC0, by the photographer (Rachel Michetti); courtesy of Pikolo Espresso Bar",
    "horse.png": "CC0, given by the owner (Andreas Preuss)",
    "rocket.jpg": "SpaceX; released into the public domain",
    "hubble_deep_field.jpg": "NASA; may be freely used in the public domain",
    "coins.png": "no known copyright restrictions (scikit-image sample data)",
    "retina.jpg": "CC0 1.0 Universal public-domain dedication (Häggström, 2014)",
}
VISION = ("caption", "object", "color")


def data_dir(explicit: str | Path | None = None) -> Path:
    """--zhang-data, else $TURINGLAB_ZHANG_DATA, else the copy shipped with the package."""
    import os

    d = Path(explicit or os.environ.get("TURINGLAB_ZHANG_DATA") or SHIPPED)
    if not (d / "word.json").is_file():
        raise FileNotFoundError(f"no Zhang data at {d} (word.json missing); pass --zhang-data DIR "
                                f"(a folder like {SHIPPED})")
    return d


def copy_images(out: Path) -> list[str]:
    import skimage.data

    src = Path(skimage.data.__file__).parent
    out.mkdir(parents=True, exist_ok=True)
    for name in IMAGES:
        shutil.copyfile(src / name, out / name)
    lic = ["Images copied from scikit-image's bundled sample data (skimage/data); licence of each:", ""]
    lic += [f"{n}: {text}" for n, text in IMAGES.items()]
    (out / "LICENSES.txt").write_text("\n".join(lic) + "\n", encoding="utf-8")
    return list(IMAGES)


def _study(name: str, task: str, items: int, image_dir: Path | None, lengths: tuple[int, ...] = (3, 6, 9)) -> StaticStudy:
    text = (f"preset: zhang-2023\nname: {json.dumps(name)}\ntask: {task}\nsession: {{items: {items}}}\n"
            f"conversation_lengths: {list(lengths)}\n"
            + (f"image_dir: {json.dumps(str(image_dir))}\n" if image_dir else ""))
    return parse_static_study(text, source=f"demo {task}")


def vision_items(task: str, data: Path, images: list[str], image_dir: Path, rng: random.Random):
    """Zhang's responses of the first len(images) pictures of `task`, re-attached to `images`."""
    src = json.loads((data / f"{task}.json").read_text(encoding="utf-8"))
    picked = list(src.items())[: len(images)]
    renamed: dict[str, list[dict[str, Any]]] = {}
    for img, (orig, records) in zip(images, picked):
        extra = {"source_image": orig}
        if task == "color":
            extra["point"] = [round(rng.uniform(0.15, 0.85), 3), round(rng.uniform(0.15, 0.85), 3)]
        renamed[img] = [{**r, "imageID": img, **extra} for r in records]
    parsed = parse_responses(renamed, task, f"{task}.json (demo)", image_dir)
    stimuli = [StimulusIn(s.key, s.text, s.image, {**s.fields, "source_image": renamed[s.key][0]["source_image"],
                                                   **({"point": renamed[s.key][0]["point"]} if task == "color" else {}),
                                                   "demo_note": "response written for another picture"})
               for s in parsed.stimuli]
    return stimuli, parsed.responses


def fv_items(images: list[str], image_dir: Path, rng: np.random.Generator):
    from skimage import color, filters, io

    stimuli, responses = [], []
    for idx, name in enumerate(images):
        img = io.imread(image_dir / name)
        gray = color.rgb2gray(img[..., :3]) if img.ndim == 3 else img.astype(float)
        edges = filters.sobel(gray)
        h, w = gray.shape
        stimuli.append(StimulusIn(name, image=name, fields={"index": idx, "demo_note": "synthetic scanpaths"}))
        n = 8
        for k in range(2):  # centre-biased random walk, labelled human for the demo
            p = np.clip(rng.normal(0, 0.25, 2), -0.9, 0.9)
            path = []
            for _ in range(n):
                path.append([round(float(p[0]), 3), round(float(p[1]), 3)])
                p = np.clip(p * 0.7 + rng.normal(0, 0.3, 2), -1, 1)
            responses.append(ResponseIn(f"{idx}_a_{k}", name, None, "human", "demo-walk",
                                        payload={"scanpath": path, "frame": [1280, 1024]}))
        uni = rng.uniform(-1, 1, (n, 2)).round(3).tolist()
        responses.append(ResponseIn(f"{idx}_demo-uniform_0", name, None, "machine", "demo-uniform",
                                    payload={"scanpath": uni, "frame": [1280, 1024]}))
        top = np.argsort(edges, axis=None)[::-max(1, edges.size // 4000)][:n * 50:50]
        ys, xs = np.unravel_index(top, edges.shape)
        pts = [[round(2 * x / w - 1, 3), round(2 * y / h - 1, 3)] for x, y in zip(xs[:n], ys[:n])]
        responses.append(ResponseIn(f"{idx}_demo-edges_0", name, None, "machine", "demo-edges",
                                    payload={"scanpath": pts, "frame": [1280, 1024]}))
    return stimuli, responses


def build_all(store: Any, images_dir: str | Path, zhang_data: str | Path | None = None, seed: int = 0,
              prefix: str = "demo-static") -> list[dict[str, Any]]:
    """Create `<prefix>-<task>` for the six tasks; each is checked to deal a full judge session."""
    from turinglab.analysis.demo.live import DemoSpec, generate
    from turinglab.statictests.displaced import items_from_games

    data = data_dir(zhang_data)
    image_dir = Path(images_dir).resolve()
    images = copy_images(image_dir)
    rng = random.Random(seed)
    made = []

    def add(task: str, study: StaticStudy, stimuli, responses, note: str) -> None:
        plan_items = [_item(i, r, s) for i, (r, s) in enumerate(_pairs(stimuli, responses))]
        plan_session(plan_items, study, random.Random(seed))  # raises if a session cannot be dealt
        sid = store.import_static(study, stimuli, responses)
        made.append({"task": task, "study": study.name, "id": sid, "stimuli": len(stimuli),
                     "items": len(responses), "session_items": study.session.items, "note": note})

    word = parse_responses(json.loads((data / "word.json").read_text(encoding="utf-8")), "word", "word.json")
    add("word", _study(f"{prefix}-word", "word", 40, None), word.stimuli, word.responses,
        "real: Zhang et al.'s word.json (MIT)")
    for task in VISION:
        st, rs = vision_items(task, data, images, image_dir, rng)
        add(task, _study(f"{prefix}-{task}", task, 8, image_dir), st, rs,
            "scikit-image pictures with real Zhang responses written for other pictures (playable, not a valid test)")
    st, rs = fv_items(images, image_dir, np.random.default_rng(seed))
    add("fv", _study(f"{prefix}-fv", "fv", 8, image_dir), st, rs,
        "synthetic scanpaths (fv.json is not in the shared data): not human data")
    live = generate(store.url, DemoSpec(n_games=40, seed=seed, study_name=f"{prefix}-live-games", topics=True))
    conv = _study(f"{prefix}-conversation", "conversation", 10, None, lengths=(2, 4))
    st, rs = items_from_games(store, live["study_id"], (2, 4), live["topics"])
    add("conversation", conv, st, rs, "displaced test from demo live games (canned lines about one of Zhang's "
        "topics per game: the topic question's answer is true); the shared data has no transcripts")
    return made


def _pairs(stimuli, responses):
    by = {s.key: s for s in stimuli}
    return [(r, by[r.stimulus_key]) for r in responses]


def _item(i: int, r: ResponseIn, s: StimulusIn):
    from turinglab.store.static import ItemInfo

    return ItemInfo(i, r.key, r.text, r.payload, r.truth, r.agent, r.control, hash(s.key), s.key, s.text, s.image,
                    s.fields)
