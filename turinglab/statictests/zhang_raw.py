"""Zhang et al.'s raw colour and object runs as psiTurk stored them (`out_final.csv`, `out.csv`):
the built-in mapping of their trial fields, as the authors' notebooks (`Task4_`/`Task5_PreCompileData.ipynb`)
read them.

A TEST trial's `trialdata` has `page_name` "867_a_0.html/" (image number, page letter, k),
`imageID` (the picture's URL), `Aclass` ("H" or "AI", the judge's answer), `topic` (the control
radio: "1" Yes, "2" No), `oneWord_curr` ("0" when the word shown is in the picture, "1" when it
is the wrong word), `Agender`, `rt`, `trial`, `hit`. The page letter is the agent, by the authors'
letter map (`AUTHOR_LETTERS`). Each trial is turned into a record of their judge files and read
by `zhang_judges.parse_image_judge_trials`, which checks it against the response dictionary.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from turinglab.statictests.rawfiles import RawJudge
from turinglab.statictests.zhang import ImportProblem, Parsed
from turinglab.statictests.zhang_judges import AUTHOR_LETTERS, parse_image_judge_trials

ANSWERS = {"H": "human", "AI": "machine"}
GENDER = {"F": "female", "M": "male"}


def raw_to_records(judges: list[RawJudge], task: str, source: str) -> tuple[dict[str, Any], Counter[str]]:
    """The TEST trials as judge-file records {"Raw_1": {workerID, workerData, trialData}}, and the
    other phases counted (left out)."""
    if task not in AUTHOR_LETTERS:
        raise ImportProblem(source, [f"--task {task}: Zhang's raw psiTurk runs are built in for "
                                     f"{' and '.join(AUTHOR_LETTERS)}; for another task give a --map file"])
    letters = AUTHOR_LETTERS[task]
    out: dict[str, Any] = {}
    left: Counter[str] = Counter()
    problems: list[str] = []
    for j in judges:
        for t in j.trials:
            phase = str(t.get("phase", ""))
            if phase.upper() != "TEST":
                left[phase or "(none)"] += 1
                continue
            name = f"Raw_{len(out) + 1}"
            at = f"judge {j.label} trial {t.get('trial', '?')} ({name})"
            page = str(t.get("page_name", ""))
            parts = page.split("_")
            letter = parts[1] if len(parts) > 2 else None
            if letter not in letters:
                problems.append(f"{at}: field 'page_name' is {page!r}; its letter must be one of the authors' {task} "
                                f"letters ({', '.join(f'{k} {v}' for k, v in letters.items())})")
                continue
            if str(t.get("Aclass")) not in ANSWERS:
                problems.append(f"{at}: field 'Aclass' is {t.get('Aclass')!r}; Zhang's raw answer is \"H\" or \"AI\"")
                continue
            agent = letters[letter]
            td = {"rt": t.get("rt"), "trial": t.get("trial"), "hit": t.get("hit"), "imageID": t.get("imageID"),
                  "page_name": page, "phase": "TEST", "Aclass": t.get("Aclass"),
                  "response_speaker": ANSWERS[str(t["Aclass"])],
                  "groundtruth": "human" if agent == "human" else "machine",
                  "machine_groundtruth": "" if agent == "human" else agent,
                  "response_gender": GENDER.get(str(t.get("Agender")), "NA")}
            if "topic" in t or "oneWord_curr" in t:
                td["response_object"], td["object_groundtruth"] = str(t.get("topic")), str(t.get("oneWord_curr"))
            out[name] = {"workerID": j.label, "workerData": j.demographics, "trialData": td}
    if problems:
        raise ImportProblem(source, problems)
    return out, left


def parse_raw_run(judges: list[RawJudge], parsed: Parsed, task: str, source: str) -> Parsed:
    records, left = raw_to_records(judges, task, source)
    if not records:
        raise ImportProblem(source, [f"no TEST trials (phases found: {dict(left)}); is this a Zhang {task} run?"])
    out = parse_image_judge_trials(records, parsed, task, source)
    if left:
        out.notes.append("left out (not TEST): " + ", ".join(f"{n} {p}" for p, n in sorted(left.items())))
    return out
