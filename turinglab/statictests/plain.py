"""Your own stimuli: the plain item format of `turinglab static import --format plain`.

One file of items, CSV (a header row) or JSONL (one object per line), plus a folder of images:

    stimulus_id,task,image,text,response,truth,agent
    beach,color,beach.jpg,,blue,human,p01
    beach,color,beach.jpg,,gray,machine,histogram-v1

Columns (JSONL: the same keys):

* `stimulus_id` (required): names the stimulus; rows with the same id share it.
* `task` (required): the study's task, the same on every row (`--task`).
* `image`: a file in `--images` (required for color, object, caption and fv); `text`: the
  stimulus text (the cue of a word item, required for word). Rows of one stimulus agree on both.
* `response` (required): what the judge sees: the colour, the object labels (comma-separated),
  the caption, the associated word; for fv a JSON list of [x, y] fixations in pixels of the
  1280x1024 frame.
* `truth` (required): human or machine. `agent` (required for machine rows): who produced the
  response (model name, or the human participant's label; default "human"). Names that differ only
  in case are one agent.
* optional `item_id` (unique; default `<stimulus_id>_<agent>_<k>`); `object_present` and
  `object_absent`: words (separated by `;`) for Zhang's true/false control of the colour and
  object tasks, "Does this image contain the following - <word>?", asked with a word that is in
  the picture or one that is not (stimulus fields of the same names, see docs/protocol.md).

Every row is checked; any problem (one line each: row, field, fix) stops the import, nothing stored.
"""

from __future__ import annotations

import csv
import io
import json
from collections import Counter
from pathlib import Path
from typing import Any

from turinglab.plugins.manager import static_tasks
from turinglab.statictests.images import image_problem
from turinglab.statictests.zhang import ImportProblem, Parsed, _fv_payload, _slug, rename_agents
from turinglab.store.static import ResponseIn, StimulusIn

COLUMNS = ("stimulus_id", "task", "image", "text", "response", "truth", "agent", "item_id", "object_present",
           "object_absent")



def jsonl_objects(raw: str, fields: str) -> tuple[list[tuple[int, dict]], list[str]]:
    """The JSON objects of a JSONL text with their line numbers, and one problem per line that is
    not an object (blank lines are skipped); `fields` names what an object holds, for the message."""
    objs, problems = [], []
    for n, line in enumerate(raw.splitlines(), 1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as exc:
            problems.append(f"line {n}: not JSON ({exc.msg}); one JSON object per line")
            continue
        if isinstance(obj, dict):
            objs.append((n, obj))
        else:
            problems.append(f"line {n}: must be a JSON object with {fields}")
    return objs, problems


def read_rows(path: str | Path) -> list[tuple[str, dict[str, Any]]]:
    """(where, row) for each item of a .csv or .jsonl file."""
    p = Path(path)
    if not p.is_file():
        raise ImportProblem(str(p), ["no such file; give the CSV or JSONL file of items"])
    try:
        raw = p.read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as exc:
        raise ImportProblem(str(p), [f"cannot read the file ({exc}); save it as UTF-8"]) from None
    if p.suffix.lower() in (".jsonl", ".ndjson"):
        objs, problems = jsonl_objects(raw, "stimulus_id, task, response, truth, agent")
        rows = [(f"line {n}", obj) for n, obj in objs]
        if problems:
            raise ImportProblem(str(p), problems)
        return rows
    if p.suffix.lower() != ".csv":
        raise ImportProblem(str(p), [f"unknown file type {p.suffix!r}; use .csv (with a header row) or .jsonl"])
    reader = csv.DictReader(io.StringIO(raw))
    unknown = [c for c in (reader.fieldnames or []) if c not in COLUMNS]
    if not reader.fieldnames or "stimulus_id" not in reader.fieldnames:
        raise ImportProblem(str(p), [f"the first row must name the columns ({', '.join(COLUMNS[:7])}, ...)"])
    if unknown:
        raise ImportProblem(str(p), [f"unknown column {unknown[0]!r}; the columns are {', '.join(COLUMNS)}"])
    return [(f"row {n + 1}", {k: v for k, v in row.items() if v not in (None, "")}) for n, row in enumerate(reader)]


def parse_plain(rows: list[tuple[str, dict[str, Any]]], task: str, images: Path | None,
                source: str = "<items>") -> Parsed:
    """Rows of the plain format -> stimuli and items, all checked (see the module doc)."""
    if not rows:
        raise ImportProblem(source, ["the file has no items; one row per response"])
    spec = static_tasks().get(task)
    if spec is None:
        raise ImportProblem(source, [f"unknown task {task!r}; use one of {', '.join(static_tasks())}"])
    if spec.images and images is None:
        raise ImportProblem(source, [f"--task {task} needs --images, the folder holding the image files"])
    problems: list[str] = []
    out = Parsed()
    stimuli: dict[str, StimulusIn] = {}
    ids: set[str] = set()
    slots: Counter[tuple[str, str]] = Counter()
    for where, row in rows:
        bad = [k for k in row if k not in COLUMNS]
        if bad:
            problems.append(f"{where}: unknown field {bad[0]!r}; the fields are {', '.join(COLUMNS)}")
            continue
        get = {k: (v.strip() if isinstance(v, str) else v) for k, v in row.items()}
        stim = get.get("stimulus_id")
        if not isinstance(stim, str) or not stim:
            problems.append(f"{where}: field 'stimulus_id' is missing; name the stimulus (e.g. the image file)")
            continue
        at = f"{where} (stimulus {stim!r})"
        if get.get("task") != task:
            problems.append(f"{at}: field 'task' is {get.get('task')!r}; every row must be --task {task}")
            continue
        truth = get.get("truth")
        if truth not in ("human", "machine"):
            problems.append(f"{at}: field 'truth' is {truth!r}; set it to human or machine")
            continue
        agent = get.get("agent") or ("human" if truth == "human" else "")
        if not isinstance(agent, str) or not agent:
            problems.append(f"{at}: field 'agent' is missing for a machine response; name the model")
            continue
        image, text = get.get("image"), get.get("text")
        if spec.images:
            if not isinstance(image, str) or not image:
                problems.append(f"{at}: field 'image' is missing; give the image file name (in --images)")
                continue
            why = image_problem(images, image)
            if why:
                problems.append(f"{at}: field 'image' {image!r} {why}")
                continue
        elif spec.needs_text and not (isinstance(text, str) and text):
            problems.append(f"{at}: field 'text' is missing; give the stimulus text (the cue word)")
            continue
        fields: dict[str, Any] = {}
        bad_words = False
        for f in ("object_present", "object_absent"):
            v = get.get(f)
            if v is None:
                continue
            words = [w.strip() for w in v.split(";") if w.strip()] if isinstance(v, str) else v
            if not (isinstance(words, list) and words and all(isinstance(w, str) and w.strip() for w in words)):
                problems.append(f"{at}: field {f!r} is {v!r}; give words separated by ';' (JSONL: a list) "
                                "or leave it empty")
                bad_words = True
                break
            fields[f] = words
        if bad_words:
            continue
        new = StimulusIn(stim, text=text if isinstance(text, str) else None, image=image, fields=fields)
        old = stimuli.setdefault(stim, new)
        if (old.image, old.text, old.fields) != (new.image, new.text, new.fields):
            problems.append(f"{at}: image, text or control differ from an earlier row of this stimulus; one "
                            "stimulus has one picture, text and control")
            continue
        payload, resp = _payload(task, get.get("response"), at, problems)
        if payload is None:
            continue
        if spec.check is not None and (wrong := spec.check(resp or "")):
            problems.append(f"{at}: field 'response' {wrong}")
            continue
        key = get.get("item_id")
        if key is None:
            slot = (stim, _slug(agent) if truth == "machine" else "human")
            key = f"{stim}_{slot[1]}_{slots[slot]}"
            slots[slot] += 1
        if not isinstance(key, str) or key in ids:
            problems.append(f"{at}: item id {key!r} is used twice; give each row its own item_id")
            continue
        ids.add(key)
        out.responses.append(ResponseIn(key, stim, resp, truth, agent, payload=payload))
    if problems:
        raise ImportProblem(source, problems)
    out.stimuli = list(stimuli.values())
    for i, s in enumerate(out.stimuli):
        s.fields.setdefault("index", i)
    rename_agents(out, {})
    agents = sorted({r.agent for r in out.responses if r.truth == "machine"})
    out.notes.append(f"plain items: {len(out.responses)} responses on {len(out.stimuli)} stimuli; machine agents: "
                     + (", ".join(agents) or "none"))
    return out


def _payload(task: str, resp: Any, at: str, problems: list[str]) -> tuple[dict[str, Any] | None, str | None]:
    if task == "fv":
        pts = resp
        if isinstance(resp, str):
            try:
                pts = json.loads(resp)
            except json.JSONDecodeError:
                pts = None
        found: list[str] = []
        payload = _fv_payload({"response": pts}, at, found)
        if found:
            problems.extend(found)
            return None, None
        return payload, None
    if not isinstance(resp, str) or not resp:
        problems.append(f"{at}: field 'response' is empty; give what the judge should see")
        return None, None
    if task == "object":
        return {"labels": [x.strip() for x in resp.split(",") if x.strip()]}, resp
    if task == "color":
        return {"color": resp}, resp
    return {}, resp
