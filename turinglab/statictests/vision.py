"""Machine responses to pictures: `turinglab static generate --task caption|object|color --vision`.

The stimulus picture is sent to an OpenAI-compatible vision model as an image content part
(`{"type": "image_url", "image_url": {"url": "data:image/jpeg;base64,..."}}`) after the task's
prompt (prompts/caption.j2, object.j2, color.j2, or your own), in one user message. The answer
must fit the task's format, as in Zhang et al.'s items:

* caption: one sentence of 3 to 40 words (a leading "Caption:" and wrapping quotes are removed);
* object: 1 to 3 labels separated by commas (Zhang's items name 3 objects), each of 1 to 3 words,
  no label twice; numbering and bullets are removed;
* color: one of Zhang's 11 colour names ("grey" is gray).

Everything else is as for word association (generate.py): unusable answers counted by reason,
asked again and reported; items stored as they come with the prompt, settings and raw output
(the picture in the stored prompt is named by file and sha256, not copied); calls cached by the
message (which holds the picture's bytes) and the model configuration; stimuli that already have
an item of the agent skipped.
"""

from __future__ import annotations

import base64
import hashlib
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from turinglab.statictests.images import safe_image
from turinglab.statictests.generate import (
    Chat,
    GenerateError,
    ModelConfig,
    Report,
    ask_all,
    ask_until_usable,
    openai_chat,
    plan,
    render_prompt,
)

COLORS = ("red", "pink", "orange", "yellow", "purple", "green", "blue", "brown", "gray", "black", "white")
N_LABELS = 3
CAPTION_WORDS = (3, 40)
MAX_TOKENS = {"word": 8, "caption": 60, "object": 30, "color": 8}  # --max-tokens when not given
MEDIA_TYPES = {".png": "image/png", ".jpg": "image/jpeg", ".jpeg": "image/jpeg", ".gif": "image/gif",
               ".webp": "image/webp"}
_QUOTES = " \t\"'`*_\u201c\u201d\u2018\u2019"
_LABEL_WRAP = _QUOTES + ".!?:;()[]{}<>"
_PREFIX = re.compile(r"^\s*(caption|labels?|objects?|colou?r|answer)\s*:\s*", re.I)
# a caption may say "not able to" (a dog not able to reach...): a refusal is one that opens with it,
# or that speaks as an AI
_REFUSAL_OPENS = re.compile(r"^\W*(i'?m sorry|sorry|unfortunately|i cannot|i can'?t|i am unable|i'?m unable|"
                            r"i won'?t|i am not able|i'?m not able)\b", re.I)
_AS_AI = re.compile(r"\b(as an ai|language model)\b", re.I)


def _plain(raw: str | None) -> tuple[str, str | None]:
    """The answer without a leading "Caption:" and wrapping quotes, or the reason it is unusable."""
    text = (raw or "").strip()
    if not text:
        return "", "empty"
    if _REFUSAL_OPENS.search(text) or _AS_AI.search(text):
        return "", "refused"
    return _PREFIX.sub("", text).strip(_QUOTES).strip(), None


def check_caption(raw: str | None) -> tuple[str | None, str | None]:
    """(the caption, None), or (None, reason): empty | refused | not one caption | too short | too long."""
    text, reason = _plain(raw)
    if reason:
        return None, reason
    lines = [ln for ln in text.splitlines() if ln.strip()]
    sentences = [s for s in re.split(r"(?<=[.!?])\s+", lines[0]) if s.strip()] if len(lines) == 1 else []
    if len(sentences) != 1:
        return None, "not one caption"
    n = len(text.split())
    if n < CAPTION_WORDS[0]:
        return None, "too short"
    if n > CAPTION_WORDS[1]:
        return None, "too long"
    return text, None


def check_labels(raw: str | None, n: int = N_LABELS) -> tuple[list[str] | None, str | None]:
    """(the labels, None), or (None, reason): empty | refused | not a list of labels |
    more than n labels | repeats a label."""
    text, reason = _plain(raw)
    if reason:
        return None, reason
    parts = [re.sub(r"^\s*(?:[-*\u2022]|\d+[.)])\s*", "", p) for p in re.split(r"[,;\n]", text)]
    labels = [p.strip(_LABEL_WRAP).strip() for p in parts]
    labels = [lab for lab in labels if lab]
    if not labels or any(not any(c.isalpha() for c in lab) or len(lab.split()) > 3 for lab in labels):
        return None, "not a list of labels"
    if len(labels) > n:
        return None, f"more than {n} labels"
    if len({lab.lower() for lab in labels}) != len(labels):
        return None, "repeats a label"
    return labels, None


def check_color(raw: str | None) -> tuple[str | None, str | None]:
    """(the colour, None), or (None, reason): empty | refused | not one of the 11 colours."""
    text, reason = _plain(raw)
    if reason:
        return None, reason
    word = text.strip(_LABEL_WRAP + ",").lower()
    word = "gray" if word == "grey" else word
    return (word, None) if word in COLORS else (None, "not one of the 11 colours")


CHECKS: dict[str, Callable[[str], tuple[Any, str | None]]] = {
    "caption": check_caption, "object": check_labels, "color": check_color}


def image_file(image_dir: Path, name: str | None) -> Path | None:
    """The picture `name` inside `image_dir` (images.safe_image), of a type a vision model takes."""
    return safe_image(image_dir, name, MEDIA_TYPES)


def image_part(path: Path) -> tuple[dict[str, Any], str]:
    """The OpenAI image content part of a picture (a base64 data URL) and the picture's sha256."""
    data = path.read_bytes()
    url = f"data:{MEDIA_TYPES[path.suffix.lower()]};base64,{base64.b64encode(data).decode('ascii')}"
    return {"type": "image_url", "image_url": {"url": url}}, hashlib.sha256(data).hexdigest()


def picture_stimuli(store: Any, study_id: int) -> list[tuple[str, str | None, set[str]]]:
    """(stimulus key, image name, agents with an item on it) in the study's order."""
    seen: dict[str, tuple[str | None, set[str], int]] = {}
    for it in store.items(study_id):
        _, agents, _ = seen.setdefault(it.stimulus_key, (it.stimulus_image, set(),
                                                          int(it.stimulus_fields.get("index", 10**9))))
        agents.add(it.agent.lower())
    order = sorted(seen.items(), key=lambda kv: (kv[1][2], kv[0]))
    return [(k, image, agents) for k, (image, agents, _) in order]


def _item(task: str, key: str, answer: Any, attempts: list[dict[str, Any]], prompt: list[dict[str, Any]],
          agent: str, cfg: ModelConfig, prompt_file: str | Path | None, image: str, sha: str) -> Any:
    from turinglab.statictests.zhang import _slug
    from turinglab.store.static import ResponseIn

    extra: dict[str, Any] = {"labels": answer} if task == "object" else {"color": answer} if task == "color" else {}
    text = ", ".join(answer) if task == "object" else answer
    return ResponseIn(
        f"{key}_gen_{_slug(agent)}_0", key, text, "machine", agent,
        payload={"generated": True, "prompt": prompt, "prompt_template": str(prompt_file or f"{task}.j2"),
                 "image": image, "image_sha256": sha, "settings": {**cfg.key(), **attempts[-1]["settings"]},
                 "raw": attempts[-1]["raw"], "unusable_attempts": [a for a in attempts if a["reason"]], **extra})


def generate_pictures(store: Any, study_id: int, cfg: ModelConfig, task: str, *, limit: int | None = None,
                      retries: int = 3, prompt_file: str | Path | None = None, agent: str | None = None,
                      chat: Chat | None = None, progress: Callable[[int, int], None] | None = None,
                      use_cache: bool = True) -> Report:
    """Show the model each picture of the `task` study `study_id` (the first `limit`), store the
    usable answers as items of `agent`, and return the report (as `generate.generate_words`).
    A stimulus whose picture is missing is reported in `failed`, not asked."""
    if task not in CHECKS:
        raise GenerateError(f"--task {task}: pictures are shown for caption, object and color")
    if not cfg.takes_images:
        raise GenerateError(f"--task {task} needs a model that takes images (--vision)")
    info = store.static_study(study_id)
    if info.task != task:
        raise GenerateError(f"static study {info.name!r} is a {info.task} study; --task {task} needs a {task} study "
                            f"(import one first: turinglab static import --task {task} --images DIR ...)")
    if not info.study.image_dir:
        raise GenerateError(f"static study {info.name!r} has no image folder; import it with --images DIR "
                            "(the folder holding its pictures)")
    image_dir = Path(info.study.image_dir).expanduser().resolve()
    agent, report, todo = plan(info.name, picture_stimuli(store, study_id), cfg, agent, limit, "pictures")
    chat = chat or openai_chat(cfg)
    text = render_prompt(task, prompt_file, n_labels=N_LABELS)

    async def ask(key: str, image: str | None) -> None:
        path = image_file(image_dir, image)
        if path is None:
            report.failed.append({"stimulus": key, "cue": image or key, "attempts": [],
                                  "reason": f"no picture: {image!r} is not an image file in {image_dir}"})
            return
        part, sha = image_part(path)
        messages = [{"role": "user", "content": [{"type": "text", "text": text}, part]}]
        answer, attempts = await ask_until_usable(chat, cfg, messages, CHECKS[task], retries, report, use_cache)
        named = {"type": "image_url", "image_url": {"url": f"<picture {image}, sha256 {sha}>"}}
        kept = [{"role": "user", "content": [{"type": "text", "text": text}, named]}]
        if answer is None:
            report.failed.append({"stimulus": key, "cue": image, "attempts": attempts})
        else:
            store.add_items(study_id, [], [_item(task, key, answer, attempts, kept, agent, cfg, prompt_file,
                                                 image, sha)])
            report.stored += 1

    return ask_all(todo, ask, report, progress)
