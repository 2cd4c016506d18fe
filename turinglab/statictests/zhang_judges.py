"""Zhang et al.'s human-judge files of the vision tasks, and word trials without a response file.

Every trial is matched by name, never by position, and must match exactly one item; a trial
that does not is a problem line (trial, field, fix) and nothing is imported.

* colour and object detection (`humanjudge_Color_Feedback_testphase.json`,
  `humanjudge_Object_Feedback_testphase.json`): `page_name` "1150_a_0.html/" is image "1150.jpg"
  (the page number is the image file number, checked against the trial's `imageID` URL) and
  the response of letter `a`; the letter's agent is the trial's `machine_groundtruth`
  ("Histogram"), the response dictionary's agent of the same name in any case ("histogram");
  a letter keeps one agent through the file. The control question ("Does this image contain
  the following - <word>?", psiTurk `task_color.js`/`stage.html`): `object_groundtruth` "0" when
  the word shown is in the image (answer Yes) and "1" when it is not; `response_object` "1" is
  Yes, "2" No. Stored as answers `object_answer` / `object_truth` ("yes"/"no"), as the judge pages
  store the same question, and scored per trial (`control_correct`). A speaker-gender answer other
  than "NA" is kept as `gender` (lower case) beside the raw `response_gender`.
* free viewing (`humanjudge_fv.json`): the stimulus is a GIF URL,
  ".../naturalsaliency_human/fig_naturalsaliency_subj17-zd_img155_nfix14.gif" (subject 17's
  scanpath on image 155, 14 fixations) or ".../naturalsaliency_conv_gbvs/fig_..._img129_nfix30.gif"
  (model GBVS on image 129); matched to fv.json's "img155.jpg" and its record of human subject
  "17", or of the model (`FV_MODELS` names the dictionary's spelling of each judge-file name).
* word association without a response file (`humanjudge_Word_*.json` alone, e.g. the ChatGPT
  round): items are made from the page names ("8_g_0") with the trial's labels; they carry no
  text, so they can be analysed but not shown.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from typing import Any

from turinglab.statictests.control_words import author_words
from turinglab.statictests.zhang import (
    LETTER_JUDGE_NAME,
    ImportProblem,
    Parsed,
    rename_agents,
    word_page,
)
from turinglab.store.static import ImportTrial, JudgeIn, ResponseIn, StimulusIn

IMAGE_PAGE = re.compile(r"(?:^|/)(\d+)_([a-z])_(\d+)\.html/?$")
GIF = re.compile(r"/(?P<folder>[^/]+)/fig_(?P<set>.+?)_(?:subj(?P<subj>\d+)-[A-Za-z]+_)?img(?P<img>\d+)_nfix(?P<nfix>\d+)\.gif$")
# judge-file model name (casefolded) -> fv.json's `machine_groundtruth`
FV_MODELS = {"ivsn": "ivsn", "gbvs": "gbvs", "deepgazeiii": "deepgaze", "deepgaze3": "deepgaze"}
YES_NO = {"1": "yes", "2": "no"}  # response_object: radio topic1 "Yes" = 1, topic2 "No" = 2
SHOWN_WORD = {"0": "yes", "1": "no"}  # object_groundtruth: 0 = the word in the image was shown
# the authors' page letters (their notebooks' `page_to_algo`), in the response dictionaries' spelling;
# colour's "c" is `mccq` in the notebook and `histogram` in color.json (the only other agent there)
AUTHOR_LETTERS = {"object": {"a": "human", "b": "azure", "c": "detectron", "d": "google", "e": "rekognition"},
                  "color": {"a": "human", "b": "azure", "c": "histogram", "d": "google"}}
TASK_FOLDERS = {"color_det": "color", "obj_det": "object"}  # the authors' image folders (imageID URLs)


def _start(name: str, rec: Any, problems: list[str]) -> tuple[str, dict[str, Any]] | None:
    td = rec.get("trialData") if isinstance(rec, dict) else None
    worker = rec.get("workerID") if isinstance(rec, dict) else None
    if not isinstance(td, dict) or not isinstance(worker, str) or not worker:
        problems.append(f"trial {name!r}: needs 'workerID' (text) and 'trialData' (object); fix the record")
        return None
    return worker, td


def _answer_rt(at: str, td: dict[str, Any], problems: list[str]) -> tuple[str, int | None] | None:
    answer = str(td.get("response_speaker", "")).lower()
    if answer not in ("human", "machine"):
        problems.append(f"{at}: field 'response_speaker' is {td.get('response_speaker')!r}; it must be human or machine")
        return None
    rt = td.get("rt")
    if rt is not None and not (isinstance(rt, (int, float)) and not isinstance(rt, bool) and rt >= 0):
        problems.append(f"{at}: field 'rt' is {rt!r}; give milliseconds >= 0 or leave it out")
        return None
    return answer, (int(rt) if rt is not None else None)


def _labels(at: str, td: dict[str, Any], problems: list[str]) -> tuple[str, str] | None:
    truth, model = td.get("groundtruth"), td.get("machine_groundtruth") or ""
    if truth not in ("human", "machine") or not isinstance(model, str) or (truth == "machine") != bool(model):
        problems.append(f"{at}: fields 'groundtruth'/'machine_groundtruth' are {truth!r}/{model!r}; a human trial has "
                        "no model name and a machine trial names its model; fix the labels")
        return None
    return truth, model


def _gender(td: dict[str, Any], answers: dict[str, Any]) -> None:
    g = td.get("response_gender")
    if isinstance(g, str) and g.strip() and g.strip().upper() != "NA":
        answers["gender"] = g.strip().lower()


class _Collect:
    """Judges and trials in file order (each judge's trials numbered from 0)."""

    def __init__(self) -> None:
        self.judges: dict[str, JudgeIn] = {}
        self.trials: list[ImportTrial] = []
        self.seq: Counter[str] = Counter()

    def add(self, worker: str, rec: dict[str, Any], key: str, answer: str, rt: int | None, phase: str,
            answers: dict[str, Any]) -> None:
        if worker not in self.judges:
            demo = rec.get("workerData") if isinstance(rec.get("workerData"), dict) else {}
            self.judges[worker] = JudgeIn(worker, demographics={**demo, "source": "zhang2023"})
        self.trials.append(ImportTrial(worker, key, self.seq[worker], answer, rt_ms=rt, phase=phase,
                                       feedback_shown=phase == "feedback", answers=answers))
        self.seq[worker] += 1


def parse_image_judge_trials(data: Any, parsed: Parsed, task: str, source: str = "<judge trials>") -> Parsed:
    """Colour or object-detection judge trials -> judges and trials of `parsed`'s items."""
    if not isinstance(data, dict) or not data:
        raise ImportProblem(source, ["the top level must be an object {\"Trial_Color_1\": {...}, ...}"])
    stim_by_file = {s.key: s for s in parsed.stimuli}
    items: dict[tuple[str, str], list[ResponseIn]] = defaultdict(list)
    for r in parsed.responses:
        items[(r.stimulus_key, "human" if r.truth == "human" else r.agent.casefold())].append(r)
    problems: list[str] = []
    col, letters, names = _Collect(), {}, {}
    for name, rec in data.items():
        start = _start(name, rec, problems)
        if start is None:
            continue
        worker, td = start
        page = str(td.get("page_name", ""))
        m = IMAGE_PAGE.search(page)
        at = f"trial {name!r}"
        if not m:
            problems.append(f"{at}: field 'page_name' is {td.get('page_name')!r}; it must be <image number>_<letter>_<k>"
                            ".html/, e.g. 1150_a_0.html/")
            continue
        num, letter, k = m.group(1), m.group(2), int(m.group(3))
        at = f"trial {name!r} (page {num}_{letter}_{k})"
        image = f"{num}.jpg"
        url = td.get("imageID")
        if url is not None and str(url).rsplit("/", 1)[-1] != image:
            problems.append(f"{at}: field 'imageID' is {url!r} but the page names image {image}; "
                            "the page and the picture the judge saw must agree; fix the trial")
            continue
        folder = TASK_FOLDERS.get(str(url).rsplit("/", 2)[-2] if url is not None and "/" in str(url) else "")
        if folder is not None and folder != task:
            problems.append(f"{at}: field 'imageID' is {url!r}, a picture of the {folder} task, but --task is {task}; "
                            f"import it with --task {folder}")
            continue
        stim = stim_by_file.get(image)
        if stim is None:
            problems.append(f"{at}: field 'page_name' names image {image}, which the response file does not have; "
                            "import the response dictionary these pages were made from")
            continue
        labels = _labels(at, td, problems)
        if labels is None:
            continue
        truth, model = labels
        who = "human" if truth == "human" else model.casefold()
        authors = AUTHOR_LETTERS.get(task, {}).get(letter)
        if task in AUTHOR_LETTERS and authors != who:
            problems.append(f"{at}: field 'page_name' has letter {letter!r}, which is "
                            f"{authors or 'no agent'!r} in the authors' {task} letter map, but "
                            f"'machine_groundtruth' is {model or 'human'!r}; check the task and the labels")
            continue
        first = letters.setdefault(letter, (who, name, model or "human"))
        if first[0] != who:
            problems.append(f"{at}: field 'machine_groundtruth' is {model or 'human'!r} but letter {letter!r} is "
                            f"{first[0]!r} in trial {first[1]!r}; check the page names or the labels")
            continue
        cands = items.get((stim.key, who), [])
        if truth == "machine" and len(cands) != 1 or k >= len(cands):
            what = (f"field 'page_name' asks for human response {k}" if truth == "human"
                    else f"field 'machine_groundtruth' is {model!r}")
            problems.append(f"{at}: {what}, but image {image} has {len(cands)} such responses (agent names in any "
                            "case), so the page does not name exactly one item; import the response dictionary "
                            "these pages were made from or fix the label")
            continue
        item = cands[k]
        if truth == "machine":
            names.setdefault(item.agent, model)
        ar = _answer_rt(at, td, problems)
        if ar is None:
            continue
        answers: dict[str, Any] = {f: td[f] for f in ("trial", "hit", "Aclass", "response_gender", "imgtype",
                                                       "response_object", "object_groundtruth") if f in td}
        answers["source_trial"] = name
        _gender(td, answers)
        if "response_object" in td or "object_groundtruth" in td:
            said, truth_c = YES_NO.get(str(td.get("response_object"))), SHOWN_WORD.get(str(td.get("object_groundtruth")))
            if said is None or truth_c is None:
                problems.append(f"{at}: fields 'response_object'/'object_groundtruth' are {td.get('response_object')!r}/"
                                f"{td.get('object_groundtruth')!r}; the control answer is \"1\" (yes) or \"2\" (no) "
                                "and its truth \"0\" (word in the image) or \"1\" (not); fix or remove both")
                continue
            answers["object_answer"], answers["object_truth"] = said, truth_c  # as the judge pages store it
            if words := author_words(task).get(stim.key):  # the word the judge saw, by the authors' lists
                answers["object_word"] = words[0] if truth_c == "yes" else words[1]
        col.add(worker, rec, item.key, ar[0], ar[1], str(td.get("phase") or "test").lower(), answers)
    if problems:
        raise ImportProblem(source, problems)
    rename_agents(parsed, names)
    parsed.judges, parsed.trials = list(col.judges.values()), col.trials
    shown = ", ".join(f"{ltr}={spelled}" for ltr, (_, _, spelled) in sorted(letters.items()))
    parsed.notes.append(f"{task} pages matched by image number and agent name: letters {shown}; every page named "
                        "exactly one item and agreed with its imageID")
    return parsed


def parse_fv_judge_trials(data: Any, parsed: Parsed, source: str = "<judge trials>") -> Parsed:
    """Free-viewing judge trials (stimulus named by its GIF URL) -> judges and trials of fv.json's items."""
    if not isinstance(data, dict) or not data:
        raise ImportProblem(source, ["the top level must be an object {\"Trial_1\": {...}, ...}"])
    by_number: dict[int, list[str]] = defaultdict(list)
    for s in parsed.stimuli:
        digits = re.findall(r"\d+", s.key)
        if len(digits) == 1:
            by_number[int(digits[0])].append(s.key)
    items: dict[tuple[str, str], list[ResponseIn]] = defaultdict(list)
    for r in parsed.responses:
        who = f"subject {int(r.agent)}" if r.truth == "human" and r.agent.isdigit() else r.agent.casefold()
        items[(r.stimulus_key, who)].append(r)
    problems: list[str] = []
    col, names = _Collect(), {}
    for name, rec in data.items():
        start = _start(name, rec, problems)
        if start is None:
            continue
        worker, td = start
        at = f"trial {name!r}"
        url = str(td.get("imageID", ""))
        m = GIF.search(url)
        if not m:
            problems.append(f"{at}: field 'imageID' is {td.get('imageID')!r}; it must be a GIF URL ending in "
                            ".../<folder>/fig_..._img<number>_nfix<n>.gif (subjNN-xx_ before img for human scanpaths)")
            continue
        labels = _labels(at, td, problems)
        if labels is None:
            continue
        truth, model = labels
        img = int(m.group("img"))
        keys = by_number.get(img, [])
        if len(keys) != 1:
            problems.append(f"{at}: field 'imageID' names image {img}, which matches {len(keys)} images of the response "
                            "file; import fv.json (keys img001.jpg ...) these clips were made from")
            continue
        folder = m.group("folder").casefold()
        if truth == "human":
            if m.group("subj") is None or not folder.endswith("_human"):
                problems.append(f"{at}: field 'imageID' is not a human clip (no subjNN, folder {m.group('folder')!r}) "
                                "but groundtruth is human; fix the labels")
                continue
            who = f"subject {int(m.group('subj'))}"
        else:
            who = FV_MODELS.get(model.casefold(), model.casefold())
            if m.group("subj") is not None or not folder.endswith("_" + who):
                problems.append(f"{at}: field 'imageID' folder {m.group('folder')!r} is not model {model!r}'s "
                                f"(expected a folder ending in _{who}); fix the labels or the URL")
                continue
        cands = items.get((keys[0], who), [])
        if len(cands) != 1:
            problems.append(f"{at}: image {keys[0]} has {len(cands)} scanpaths of {who!r}, not exactly one; "
                            "import the fv.json these clips were made from")
            continue
        item = cands[0]
        if truth == "machine":
            names.setdefault(item.agent, model)
        ar = _answer_rt(at, td, problems)
        if ar is None:
            continue
        answers = {f: td[f] for f in ("trial", "response_gender", "imgtype") if f in td}
        answers.update(source_trial=name, clip=url, nfix=int(m.group("nfix")), image_set=m.group("set"))
        _gender(td, answers)
        col.add(worker, rec, item.key, ar[0], ar[1], str(td.get("phase") or "test").lower(), answers)
    if problems:
        raise ImportProblem(source, problems)
    rename_agents(parsed, names)
    parsed.judges, parsed.trials = list(col.judges.values()), col.trials
    parsed.notes.append("free-viewing clips matched by image number and subject or model; a clip's nfix (fixations "
                        "in the GIF) is kept in the trial's answers, the scanpath drawn is fv.json's")
    return parsed


def parse_word_trials_alone(data: Any, source: str = "<judge trials>") -> Parsed:
    """Word-association judge trials without their response file: one stimulus per cue index
    ("cue 8") and one item per page ("8_g_0"), truth and agent from the trials' labels (which
    must agree with the page letter and between trials of the same page). Items have no text."""
    if not isinstance(data, dict) or not data:
        raise ImportProblem(source, ["the top level must be an object {\"Trial_Word_1\": {...}, ...}"])
    problems: list[str] = []
    out, col = Parsed(), _Collect()
    pages: dict[str, tuple[str, str]] = {}
    cues: dict[int, str] = {}
    for name, rec in data.items():
        start = _start(name, rec, problems)
        if start is None:
            continue
        worker, td = start
        on_page = word_page(f"trial {name!r}", td, problems, "8_g_0")
        if on_page is None:
            continue
        idx, letter, k, page = on_page
        at = f"trial {name!r} (page {page})"
        labels = _labels(at, td, problems)
        if labels is None:
            continue
        truth, model = labels
        if letter not in LETTER_JUDGE_NAME or LETTER_JUDGE_NAME[letter] != model:
            problems.append(f"{at}: field 'machine_groundtruth'/'groundtruth' is {model!r}/{truth!r}, but letter "
                            f"{letter!r} means {LETTER_JUDGE_NAME.get(letter) or 'human'}; check the page name or the labels")
            continue
        if pages.setdefault(page, (truth, model)) != (truth, model):
            problems.append(f"{at}: labels {truth}/{model!r} differ from another trial of the same page; fix the labels")
            continue
        ar = _answer_rt(at, td, problems)
        if ar is None:
            continue
        cues.setdefault(idx, f"cue {idx}")
        answers = {f: td[f] for f in ("trial", "hit", "Aclass", "response_gender") if f in td}
        answers["source_trial"] = name
        col.add(worker, rec, page, ar[0], ar[1], str(td.get("phase") or "test").lower(), answers)
    if problems:
        raise ImportProblem(source, problems)
    out.stimuli = [StimulusIn(cues[i], fields={"index": i, "text_missing": True}) for i in sorted(cues)]
    out.responses = [ResponseIn(p, cues[int(p.split("_")[0])], None, t, model or "human",
                                payload={"text_missing": True}) for p, (t, model) in sorted(pages.items())]
    out.judges, out.trials = list(col.judges.values()), col.trials
    out.notes.append(f"{len(out.responses)} items made from the page names of {len(out.trials)} trials (no response "
                     "file: the items carry no text and cannot be shown; give --responses to attach the words)")
    return out
