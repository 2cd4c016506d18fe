"""Small static studies for the judge-page tests, one per task, made with the store API directly
(images: scikit-image's bundled data images when installed, else drawn with Pillow; written to a tmp dir)."""

from __future__ import annotations

import random
from contextlib import asynccontextmanager
from pathlib import Path

from turinglab.game.static_config import Session, StaticStudy
from turinglab.store.api import Store
from turinglab.store.static import ResponseIn, StimulusIn

AGENTS = ("model-alpha", "model-beta")  # names that must never reach a judge's page before the answer
EVIL = '<img src=x onerror="window.pwned=1">'
TOPICS = ["sports", "music", "movies", "science", "fashion"]
OBJECTS = ["person", "cup", "cat", "rocket", "camera"]  # one object in each of the five pictures
BROWSER_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                "--disable-background-networking", "--disable-component-update", "--disable-sync"]
WORDS = ["ocean", "bread", "winter", "music", "garden", "doctor", "mountain", "candle", "river", "train"]


def images(folder: Path) -> list[str]:
    """Five photographs from scikit-image's bundled data, as PNG files in `folder`."""
    from PIL import Image, ImageDraw  # Pillow comes with matplotlib

    folder.mkdir(parents=True, exist_ok=True)
    names = []
    for k, n in enumerate(("astronaut", "coffee", "chelsea", "rocket", "camera")):
        try:
            import skimage.data

            img = Image.fromarray(getattr(skimage.data, n)())
        except ImportError:  # not a declared dependency: draw a picture instead
            img = Image.new("RGB", (640, 480), (40 * k, 120, 200 - 30 * k))
            ImageDraw.Draw(img).ellipse((160, 100, 480, 380), fill=(230, 180, 60))
        img.save(folder / f"{n}.png")
        names.append(f"{n}.png")
    return names


def make_study(store: Store, task: str, image_dir: Path | None, *, name: str | None = None, items: int = 4,
               feedback: int = 0, controls: int = 0, min_rt_ms: int = 300, n_stimuli: int = 8,
               completion_url: str | None = "/healthz?cc=C0MPLETE", object_words: bool = False,
               ask_gender: bool | None = None, language: str = "en") -> int:
    """A study of `task` with `n_stimuli` stimuli, each answered by a human and by both AGENTS,
    plus `controls` vigilance items (known answer: human). `object_words`: colour/object stimuli
    carry Zhang's true/false object question (a word in the picture and one not). Returns the study id."""
    rng = random.Random(task)
    pics = images(image_dir) if image_dir is not None and task not in ("word", "conversation") else []
    study = StaticStudy(name=name or f"judge-{task}", task=task,
                        session=Session(items=items, feedback_items=feedback, control_items=controls,
                                        min_rt_ms=min_rt_ms),
                        image_dir=str(image_dir) if pics else None, completion_url=completion_url,
                        display_name=f"Human or machine? ({task})", ask_gender=ask_gender, language=language)
    sid = store.register_static_study(study)
    stimuli, responses = [], []
    for i in range(n_stimuli + controls):
        key = f"s{i}"
        fields: dict = {}
        text = image = None
        if task == "word":
            text = WORDS[i % len(WORDS)]
        elif task == "conversation":
            fields = {"topic_choices": TOPICS, "control_answer": TOPICS[i % 5]}
        else:
            image = pics[i % len(pics)]
            if object_words and task in ("color", "object"):
                fields = {"object_present": [OBJECTS[i % len(OBJECTS)]], "object_absent": ["giraffe", "umbrella"]}
        stimuli.append(StimulusIn(key, text=text, image=image, fields=fields))
        who = [("human", "person-1")] + [("machine", a) for a in AGENTS] if i < n_stimuli else [("human", "control")]
        for j, (truth, agent) in enumerate(who):
            text_r, payload = _response(task, i, j, rng)
            responses.append(ResponseIn(f"{key}/{truth}/{j}", key, text_r, truth, agent, payload=payload,
                                        control=i >= n_stimuli))
    store.add_items(sid, stimuli, responses)
    return sid


def _response(task: str, i: int, j: int, rng: random.Random) -> tuple[str | None, dict]:
    if task == "word":
        return (["water", "butter", "snow", "song", "flower", "nurse", "hill", "light", "bank", "station"][i % 10]
                + ("" if j else " " + EVIL if i == 0 else "")), {}
    if task == "caption":
        return ["A person in a space suit smiling.", "A cup of coffee on a saucer.", "A cat lying on a chair.",
                "A rocket on the launch pad.", "A man with a camera."][i % 5] + (" " + EVIL if i == 0 else ""), {}
    if task == "object":
        labels = [["person", "flag", "helmet"], ["cup", "spoon", "table"], ["cat", "rug", "door"],
                  ["rocket", "tower", "sky"], ["man", "camera", "grass"]][i % 5]
        boxes = [[.2 + .1 * k, .2, .25, .3] for k in range(2)] if j == 1 else []
        return ", ".join(labels), {"labels": labels, **({"boxes": [{"box": b, "label": lab} for b, lab in
                                                                 zip(boxes, labels)]} if boxes else {})}
    if task == "color":
        c = ["red", "gray", "brown", "white", "black"][(i + j) % 5]
        return c, {"color": c}
    if task == "fv":
        n = rng.randint(6, 15)
        return None, {"scanpath": [[round(rng.uniform(-.8, .8), 3), round(rng.uniform(-.8, .8), 3)] for _ in range(n)],
                      "frame": [1280, 1024]}
    # conversation: 3 exchanges between A and B; B is the speaker the item is about
    lines = ["Hi! How are you today?", "Pretty good, thanks. Did you watch the game last night?",
             "I did, what a finish.", "The last goal was unbelievable." + (" " + EVIL if i == 0 else ""),
             "Do you play yourself?", "Only on weekends, with friends from work."]
    truth_b = "human" if j == 0 else "machine"
    turns = [{"speaker": "AB"[k % 2], "text": t} for k, t in enumerate(lines)]
    return "\n".join(f"{t['speaker']}: {t['text']}" for t in turns), {
        "turns": turns, "speakers": {"A": "human", "B": truth_b}, "length": 3, "witness_speaker": "B"}


@asynccontextmanager
async def chromium_on(app, chromium_path: str):
    """Serve `app` in a thread and open Debian chromium (Playwright); yields (browser, base URL), closes both."""
    from playwright.async_api import async_playwright

    from turinglab.server.testing import serve_in_thread

    with serve_in_thread(app) as base:
        async with async_playwright() as pw:
            browser = await pw.chromium.launch(executable_path=chromium_path, args=BROWSER_ARGS)
            try:
                yield browser, base
            finally:
                await browser.close()


async def submit_item(page) -> None:
    """Submit the judge page's current item; wait for the next item, the feedback or the page after the last."""
    before = await page.get_attribute("input[name=n]", "value")
    await page.click("#btn-submit")
    await page.wait_for_function(f"!document.querySelector('input[name=n]') || "
                                 f"document.querySelector('input[name=n]').value !== '{before}' || "
                                 "document.getElementById('feedback')")
