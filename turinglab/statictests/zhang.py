"""Importers for Zhang et al.'s published formats (see zhang2023/README.md beside this file).

Response dictionaries (`word.json`, `caption.json`, ...): `{stimulus_id: [record, ...]}`, each record
`{cueWord|imageID|conversationID, response, groundtruth, human_groundtruth, machine_groundtruth}`;
free viewing has `response_float` (a scanpath in [-1, 1] over 1280x1024). Every record becomes
one item; its key is `<stimulus index>_<letter or agent>_<k>`, the name of Zhang's stimulus pages
(`a` human with k = 0..4 the k-th human record; `b`..`f` the word models), so published judge
trials (`humanjudge_Word_*.json`, pages named `78_e_0.html`) can be matched to items.

The cue index of a page name is taken as the position of the cue in the dictionary's key order,
and checked for every trial: the index must name a cue, the letter must agree with the trial's
`groundtruth` and `machine_groundtruth`, and that cue must have the item. Page names carry no
text, so this checks structure, not the cue word itself (see `check_cue_mapping`).

Problems are collected as one line each (stimulus or trial, field, fix) and raised together
as `ImportProblem`; nothing is stored unless everything is valid.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from turinglab.statictests.control_words import TASKS as AUTHOR_WORD_TASKS
from turinglab.statictests.control_words import add_author_words
from turinglab.statictests.images import image_problem
from turinglab.statictests.topics import ZHANG_TOPICS, known_topic, topic_fields
from turinglab.store.static import ImportTrial, JudgeIn, ResponseIn, StimulusIn

KEY_FIELDS = {"word": "cueWord", "caption": "imageID", "object": "imageID", "color": "imageID", "fv": "imageID",
              "conversation": "conversationID"}
# Zhang's word-association page letters: dictionary name -> (letter, name in the judge files)
WORD_MODELS = {"word2vec": ("b", "Word2Vec"), "gpt2": ("c", "GPT2"), "gpt3emb": ("d", "GPT3(Emb)"),
               "gpt3promptcurie": ("e", "GPT3(pr, Curie)"), "gpt3promptdav": ("f", "GPT3(pr, DaVinci)"),
               "chatgpt": ("g", "ChatGPT")}  # g: the ChatGPT round (humanjudge_Word_ChatGPT_testphase.json)
LETTER_JUDGE_NAME = {"a": "", **{v[0]: v[1] for v in WORD_MODELS.values()}}
PAGE = re.compile(r"(?:^|/)(\d+)_([a-z])_(\d+)(?:\.html)?$")


def word_page(at: str, td: dict, problems: list[str], example: str) -> tuple[int, str, int, str] | None:
    """A word-association trial's page `<cue index>_<letter>_<k>.html` as (index, letter, k, name), or
    None with the problem added (its message shows `example`)."""
    m = PAGE.search(str(td.get("page_name", "")))
    if not m:
        problems.append(f"{at}: field 'page_name' is {td.get('page_name')!r}; it must end in "
                        f"<cue index>_<letter>_<k>.html, e.g. .../{example}.html")
        return None
    idx, letter, k = int(m.group(1)), m.group(2), int(m.group(3))
    return idx, letter, k, f"{idx}_{letter}_{k}"
MAX_SHOWN = 20


class ImportProblem(ValueError):
    """Bad input: `lines` has one line per problem (what, where, what to do)."""

    def __init__(self, source: str, lines: list[str]) -> None:
        self.source, self.lines = source, lines
        shown = lines[:MAX_SHOWN] + ([f"... and {len(lines) - MAX_SHOWN} more"] if len(lines) > MAX_SHOWN else [])
        super().__init__(f"{source}: {len(lines)} problem(s), nothing imported:\n" + "\n".join(shown))


@dataclass
class Parsed:
    stimuli: list[StimulusIn] = field(default_factory=list)
    responses: list[ResponseIn] = field(default_factory=list)
    judges: list[JudgeIn] = field(default_factory=list)
    trials: list[ImportTrial] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def read_json(path: str | Path) -> Any:
    p = Path(path)
    if not p.is_file():
        raise ImportProblem(str(p), ["no such file; give the path of the JSON file"])
    try:
        return json.loads(p.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ImportProblem(str(p), [f"cannot read JSON ({exc}); export the file as UTF-8 JSON"]) from None


def parse_responses(data: Any, task: str, source: str = "<responses>", images: Path | None = None) -> Parsed:
    """A response dictionary -> stimuli and items (agents as in the file: `machine_groundtruth`, or
    `human_groundtruth` / "human" for human records)."""
    if task not in KEY_FIELDS:
        raise ImportProblem(source, [f"unknown task {task!r}; use one of {', '.join(KEY_FIELDS)}"])
    if not isinstance(data, dict) or not data:
        raise ImportProblem(source, ["the top level must be a non-empty object {stimulus_id: [records...]}"])
    out, problems = Parsed(), []
    key_field = KEY_FIELDS[task]
    missing_images = 0
    for idx, (stim, records) in enumerate(data.items()):
        where = f"stimulus {stim!r}"
        if not isinstance(records, list) or not records:
            problems.append(f"{where}: value must be a non-empty list of records; wrap the record(s) in [ ]")
            continue
        image = None
        if task not in ("word", "conversation"):
            if images is not None:
                why = image_problem(images, stim)
                if why is None:
                    image = stim
                elif "outside" in why:  # a link out of --images is refused, as a path with '..' would be
                    problems.append(f"{where}: the image {why}")
                else:
                    missing_images += 1
        fields: dict[str, Any] = {"index": idx}
        counts: Counter[str] = Counter()
        first = records[0] if isinstance(records[0], dict) else {}
        for extra in ("point", "topic", "topic_choices", "control_answer", "control_choices", "length"):
            if extra in first:
                fields[extra] = first[extra]
        if task == "conversation" and "topic" in fields:
            _topic_control(fields, stim, records, where, problems)
        out.stimuli.append(StimulusIn(stim, text=stim if task == "word" else None, image=image, fields=fields))
        for n, r in enumerate(records):
            at = f"{where} record {n}"
            if not isinstance(r, dict):
                problems.append(f"{at}: must be an object with {key_field}, response, groundtruth; fix the record")
                continue
            if r.get(key_field, stim) != stim and not (task == "fv" and _same_image(r.get(key_field), stim)):
                problems.append(f"{at}: field {key_field!r} is {r.get(key_field)!r} but the record is under {stim!r}; "
                                "move it under its own key or fix the field")
            truth = r.get("groundtruth")
            if truth not in ("human", "machine"):
                problems.append(f"{at}: field 'groundtruth' is {truth!r}; set it to \"human\" or \"machine\"")
                continue
            model = r.get("machine_groundtruth") or ""
            if truth == "machine" and not model:
                problems.append(f"{at}: field 'machine_groundtruth' is empty for a machine response; "
                                "name the model that produced it")
                continue
            if truth == "human" and model:
                problems.append(f"{at}: field 'machine_groundtruth' is {model!r} for a human response; "
                                "clear it or set groundtruth to \"machine\"")
                continue
            text, payload = _response(task, r, at, problems)
            if text is None and not payload:
                continue
            agent = model if truth == "machine" else (r.get("human_groundtruth") or "human")
            slot = "a" if truth == "human" else (WORD_MODELS[model][0] if task == "word" and model in WORD_MODELS
                                                 else _slug(model))
            k = counts[slot]
            counts[slot] += 1
            out.responses.append(ResponseIn(f"{idx}_{slot}_{k}", stim, text, truth, agent, payload=payload))
    if problems:
        raise ImportProblem(source, problems)
    rename_agents(out, {})  # `gpt2` and `GPT2` are one agent
    if task in AUTHOR_WORD_TASKS and (note := add_author_words(task, {s.key: s.fields for s in out.stimuli})):
        out.notes.append(note)
    if missing_images:
        out.notes.append(f"{missing_images} of {len(out.stimuli)} images not found in {images}; "
                         "their items are analysed but never dealt to judges (no picture to show)")
    return out


def _topic_control(fields: dict[str, Any], stim: str, records: list[Any], where: str, problems: list[str]) -> None:
    """A conversation's `topic` -> its topic control (`topics.topic_fields`): the topic must be one
    of Zhang's and the same in every record of the conversation. A file that gives its own
    `topic_choices` keeps them (scored against the topic unless it gives `control_answer`)."""
    topic = known_topic(fields["topic"])
    if topic is None:
        problems.append(f"{where}: field 'topic' is {fields['topic']!r}; use one of Zhang's topics "
                        f"({', '.join(ZHANG_TOPICS)}) or leave it out")
        return
    other = {str(r.get("topic")) for r in records if isinstance(r, dict) and "topic" in r and known_topic(r["topic"]) != topic}
    if other:
        problems.append(f"{where}: records give different topics ({topic!r} and {sorted(other)[0]!r}); "
                        "one conversation has one topic")
        return
    if "topic_choices" in fields or "control_choices" in fields:
        fields["topic"] = topic
        fields.setdefault("control_answer", topic)
        return
    fields.update(topic_fields(topic, stim))


def _response(task: str, r: dict[str, Any], at: str, problems: list[str]) -> tuple[str | None, dict[str, Any]]:
    resp = r.get("response")
    if task == "fv":
        return None, _fv_payload(r, at, problems)
    if task == "conversation":
        if isinstance(resp, list):
            if not all(isinstance(t, dict) and isinstance(t.get("speaker"), str) and isinstance(t.get("text"), str)
                       for t in resp):
                problems.append(f"{at}: field 'response' must list turns {{\"speaker\": ..., \"text\": ...}}; fix the turns")
                return None, {}
            turns = resp
        elif isinstance(resp, str) and resp.strip():
            turns = [{"speaker": m.group(1), "text": m.group(2)} for m in
                     (re.match(r"\s*([^:]{1,20}):\s*(.*)", line) for line in resp.splitlines()) if m]
            if not turns:
                problems.append(f"{at}: field 'response' has no 'Speaker: text' lines; one turn per line")
                return None, {}
        else:
            problems.append(f"{at}: field 'response' is missing; give the transcript (turns or 'A: ...' lines)")
            return None, {}
        payload: dict[str, Any] = {"turns": turns}
        if isinstance(r.get("speakers"), dict):
            payload["speakers"] = r["speakers"]
        return "\n".join(f"{t['speaker']}: {t['text']}" for t in turns), payload
    if not isinstance(resp, str) or not resp.strip():
        problems.append(f"{at}: field 'response' is {resp!r}; give the response as non-empty text")
        return None, {}
    if task == "object":
        payload = {"labels": [x.strip() for x in resp.split(",") if x.strip()]}
        if isinstance(r.get("boxes"), list):
            payload["boxes"] = r["boxes"]
        return resp, payload
    if task == "color":
        return resp, {"color": resp.strip()}
    return resp, {}


FRAME = (1280, 1024)


def _fv_payload(r: dict[str, Any], at: str, problems: list[str]) -> dict[str, Any]:
    """A scanpath: `response_float` in [-1, 1], or Zhang's fv.json `response` in pixels of the
    1280x1024 frame. Pixel points are kept as they are (`scanpath_px`, some lie outside the frame);
    `scanpath` is the same path in [-1, 1] clipped to the frame, which is what the page draws."""
    def points(v: Any, lo: float | None) -> bool:
        return isinstance(v, list) and bool(v) and all(
            isinstance(p, list) and len(p) == 2 and all(isinstance(x, (int, float)) and not isinstance(x, bool)
                                                          and (lo is None or lo <= x <= 1) for x in p) for p in v)
    if "response_float" in r:
        if not points(r["response_float"], -1):
            problems.append(f"{at}: field 'response_float' must be a list of [x, y] fixations in [-1, 1]; "
                            "fix the scanpath or give it in pixels as 'response'")
            return {}
        return {"scanpath": r["response_float"], "frame": list(FRAME)}
    px = r.get("response")
    if not points(px, None):
        problems.append(f"{at}: field 'response' must be a list of [x, y] fixations in pixels of the 1280x1024 "
                        "frame (or 'response_float' in [-1, 1]); fix the scanpath")
        return {}
    w, h = FRAME
    outside = sum(1 for x, y in px if not (0 <= x <= w and 0 <= y <= h))
    clip = [[min(1.0, max(-1.0, 2 * x / w - 1)), min(1.0, max(-1.0, 2 * y / h - 1))] for x, y in px]
    return {"scanpath": clip, "scanpath_px": px, "frame": list(FRAME), "outside_frame": outside}


def _same_image(image_id: Any, key: str) -> bool:
    """fv.json's `imageID` "001" under the key "img001.jpg": the same image number."""
    a, b = re.findall(r"\d+", str(image_id)), re.findall(r"\d+", key)
    return len(a) == 1 and len(b) == 1 and int(a[0]) == int(b[0])


def _slug(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9]+", "-", name).strip("-").lower() or "m"


def parse_judge_trials(data: Any, parsed: Parsed, source: str = "<judge trials>") -> Parsed:
    """Zhang's human-judge trial file (`{"Trial_Word_1": {workerID, workerData, trialData}, ...}`) ->
    judges and trials of the items in `parsed`. Items that trials use get the judge file's model
    names as their agent (the dictionary's name stays in `payload["dictionary_agent"]`)."""
    if not isinstance(data, dict) or not data:
        raise ImportProblem(source, ["the top level must be an object {\"Trial_Word_1\": {...}, ...}"])
    by_key = {r.key: r for r in parsed.responses}
    n_stimuli = len(parsed.stimuli)
    problems: list[str] = []
    judges: dict[str, JudgeIn] = {}
    seq: Counter[str] = Counter()
    trials: list[ImportTrial] = []
    renamed: dict[str, str] = {}
    for name, rec in data.items():
        at = f"trial {name!r}"
        td = rec.get("trialData") if isinstance(rec, dict) else None
        worker = rec.get("workerID") if isinstance(rec, dict) else None
        if not isinstance(td, dict) or not isinstance(worker, str) or not worker:
            problems.append(f"{at}: needs 'workerID' (text) and 'trialData' (object); fix the record")
            continue
        on_page = word_page(at, td, problems, "78_e_0")
        if on_page is None:
            continue
        idx, letter, k, page = on_page
        truth, model = td.get("groundtruth"), td.get("machine_groundtruth") or ""
        answer = str(td.get("response_speaker", "")).lower()
        if idx >= n_stimuli:
            problems.append(f"{at} (page {page}): cue index {idx} but the responses have {n_stimuli} stimuli; "
                            "import the response file these pages were made from")
            continue
        if letter not in LETTER_JUDGE_NAME or LETTER_JUDGE_NAME[letter] != model or (truth == "human") != (letter == "a"):
            problems.append(f"{at} (page {page}): field 'machine_groundtruth'/'groundtruth' is {model!r}/{truth!r}, "
                            f"but letter {letter!r} means {LETTER_JUDGE_NAME.get(letter) or 'human'}; "
                            "check the page name or the labels")
            continue
        item = by_key.get(page)
        if item is None or item.truth != truth:
            problems.append(f"{at} (page {page}): stimulus {parsed.stimuli[idx].key!r} has no such item; "
                            "import the response file these pages were made from"
                            + (" (with its chatgpt records), or import the judge trials alone (no --responses)"
                               if letter == "g" else ""))
            continue
        if answer not in ("human", "machine"):
            problems.append(f"{at} (page {page}): field 'response_speaker' is {td.get('response_speaker')!r}; "
                            "it must be human or machine")
            continue
        rt = td.get("rt")
        if rt is not None and not (isinstance(rt, (int, float)) and rt >= 0):
            problems.append(f"{at} (page {page}): field 'rt' is {rt!r}; give milliseconds >= 0 or leave it out")
            continue
        if truth == "machine":
            renamed[page] = model
        if worker not in judges:
            demo = rec.get("workerData") if isinstance(rec.get("workerData"), dict) else {}
            judges[worker] = JudgeIn(worker, demographics={**demo, "source": "zhang2023"})
        answers = {k2: td[k2] for k2 in ("trial", "hit", "Aclass", "response_gender") if k2 in td}
        answers["source_trial"] = name
        phase = str(td.get("phase") or "test").lower()
        trials.append(ImportTrial(worker, page, seq[worker], answer, rt_ms=int(rt) if rt is not None else None,
                                  phase=phase, feedback_shown=phase == "feedback", answers=answers))
        seq[worker] += 1
    if problems:
        raise ImportProblem(source, problems)
    by_key = {r.key: r for r in parsed.responses}
    pairs = {(by_key[k].agent, name) for k, name in renamed.items()}
    clash = Counter(d for d, _ in pairs)
    bad = [d for d, c in clash.items() if c > 1]
    if bad:  # the same dictionary model must get one judge-file name
        raise ImportProblem(source, [(f"model {bad[0]!r} of the responses appears under several judge-file names; "
                                      "check the letters of the page names")])
    rename_agents(parsed, dict(pairs))
    parsed.judges, parsed.trials = list(judges.values()), trials
    parsed.notes.append(check_cue_mapping(parsed))
    return parsed


def rename_agents(parsed: Parsed, names: dict[str, str]) -> None:
    """Name every item's agent as the judge file does (`names`: dictionary name -> judge-file name;
    the dictionary's name stays in `payload["dictionary_agent"]`), then make names that differ
    only in case one agent (`gpt2` and `GPT2`: the first spelling met wins)."""
    fold = {k.casefold(): v for k, v in names.items()}
    spelled: dict[str, str] = {}
    for n, r in enumerate(parsed.responses):
        if r.truth != "machine":
            continue
        new = fold.get(r.agent.casefold(), r.agent)
        new = spelled.setdefault(new.casefold(), new)
        if new != r.agent:
            payload = {**r.payload}
            payload.setdefault("dictionary_agent", r.agent)
            parsed.responses[n] = ResponseIn(r.key, r.stimulus_key, r.text, r.truth, new, payload=payload,
                                             control=r.control)


def check_cue_mapping(parsed: Parsed) -> str:
    """What the cue-index mapping was checked against (reported by `static import`): the checks
    passed under the file's key order; whether an alphabetical cue order would pass them too
    (then the data cannot tell the two apart)."""
    used = {int(t.response_key.split("_")[0]) for t in parsed.trials}
    slots = {s.key: set() for s in parsed.stimuli}
    for r in parsed.responses:
        slots[r.stimulus_key].add(r.key.split("_", 1)[1])
    keys = [s.key for s in parsed.stimuli]
    alpha = sorted(keys)
    also = all(t.response_key.split("_", 1)[1] in slots[alpha[int(t.response_key.split("_")[0])]]
               for t in parsed.trials)
    return (f"page cue indices checked against the response file's key order: {len(used)} cues used, all within "
            f"0..{len(keys) - 1}, every letter agrees with the trial's labels and every page names an existing "
            "item; page names carry no text, so the cue words themselves cannot be checked"
            + ("; an alphabetical cue order would pass the same checks, so the file order is an assumption "
               "the data cannot confirm" if also and alpha != keys else ""))


def parse_conversation_verdicts(data: Any, source: str = "<conversation verdicts>") -> Parsed:
    """Zhang's online conversation test (`trials_all.json`: `{"51.txt": [{groundtruth, response,
    reason}, ...]}`) -> one item per transcript and one trial per verdict. The file holds neither the
    transcripts, nor the model's name, nor who judged: items get no text (their pages cannot be shown),
    machine items the agent "machine (model not named)", and each verdict its own judge (so intervals
    treat verdicts as independent; the file gives nothing to cluster on)."""
    if not isinstance(data, dict) or not data:
        raise ImportProblem(source, ["the top level must be an object {\"51.txt\": [{groundtruth, response, reason}]}"])
    out, problems = Parsed(), []
    for idx, (name, records) in enumerate(data.items()):
        where = f"transcript {name!r}"
        if not isinstance(records, list) or not records:
            problems.append(f"{where}: value must be a non-empty list of verdicts; wrap them in [ ]")
            continue
        truths = {r.get("groundtruth") for r in records if isinstance(r, dict)}
        if len(truths) != 1 or not truths <= {"human", "machine"}:
            problems.append(f"{where}: field 'groundtruth' is {sorted(map(str, truths))}; every verdict of one "
                            "transcript needs the same \"human\" or \"machine\"")
            continue
        truth = truths.pop()
        key = f"{idx}_conv"
        out.stimuli.append(StimulusIn(name, fields={"index": idx, "transcript_missing": True}))
        out.responses.append(ResponseIn(key, name, None, truth,
                                        "human" if truth == "human" else "machine (model not named)",
                                        payload={"transcript": name, "transcript_missing": True}))
        for n, r in enumerate(records):
            at = f"{where} verdict {n}"
            if not isinstance(r, dict):
                problems.append(f"{at}: must be an object with groundtruth, response, reason; fix the record")
                continue
            answer = str(r.get("response", "")).lower()
            if answer not in ("human", "machine"):
                problems.append(f"{at}: field 'response' is {r.get('response')!r}; it must be human or machine")
                continue
            judge = f"{_slug(name)}-v{n}"
            out.judges.append(JudgeIn(judge, demographics={"source": "zhang2023 trials_all"}))
            out.trials.append(ImportTrial(judge, key, 0, answer,
                                          answers={"reason": str(r.get("reason") or "")[:2000], "source_trial": f"{name}#{n}"}))
    if problems:
        raise ImportProblem(source, problems)
    out.notes.append(f"{len(out.trials)} verdicts on {len(out.responses)} transcripts; the file has no transcript "
                     "text, model names or judge ids: items cannot be shown, each verdict counts as its own judge")
    return out
