"""Zhang et al.'s conversation judge results (`Conversations/savedResults_rebuttle/compiled_prolific.json`,
`Conversations/Participants results - datasets/compiled_*.json`) with one truth per speaker.

The results file: `{group: {"datastring": [{"questiondata": {gender, age, native, education, country},
"data": [{"trialdata": {hit, topic, hit_len, Aclass, rt, Agender, Bgender, conversationID,
isCatch, hasFeedback}}]}]}}`, one entry per judge (no worker ids). `Aclass` (HH/HAI/AIH/AIAI) is
the judge's label of speakers A and B, `Agender`/`Bgender` their gender answers (M/F), `topic`
the index (1-5) of the topic they picked, `conversationID` the page `static/dataset/conv<hit>_len<hit_len>.html`.
Some files open each judge with an empty trial (`hit` 0, `conversationID` ".html"): left out, counted.

The truth is not in the results: it comes from Zhang's look-up (`correct_answers_lookup.ipynb`
under `Conversations/`, whose printed output lists "Conversation N: A=Human -> H, B=AI -> AI = HAI",
or the `correct_answers.json` it writes: {"conv100_len12": "HAI"}). Every trial must find its
conversation in the look-up (else an error naming the trial, nothing imported), unless
`skip_unknown`: then such trials are left out and counted in a note. The look-up names no models:
machine speakers get the agent "machine (model not named)".
"""

from __future__ import annotations

import re
from collections import Counter
from typing import Any

from turinglab.statictests.speakers import CLASSES, class_labels
from turinglab.statictests.zhang import ImportProblem, Parsed
from turinglab.store.static import ImportTrial, JudgeIn, ResponseIn, StimulusIn

PAGE = re.compile(r"(?:^|/)conv(\d+)_len(\d+)\.html$")
LOOKUP_LINE = re.compile(r"Conversation (\d+): A=.*? -> (H|AI), B=.*? -> (H|AI) = (HH|HAI|AIH|AIAI)\s*$")
UNNAMED = "machine (model not named)"
GENDER = {"M": "male", "F": "female"}


def is_results_file(data: Any) -> bool:
    """Whether `data` has the shape of a compiled results file ({group: {"datastring": [...]}})."""
    return (isinstance(data, dict) and bool(data)
            and all(isinstance(v, dict) and isinstance(v.get("datastring"), list) for v in data.values()))


def read_lookup(data: Any, source: str = "<look-up>") -> dict[str, str]:
    """Zhang's look-up -> {"conv<N>_len<L>" or "conv<N>": class}: the notebook (its printed
    output) or the `correct_answers.json` it writes."""
    out: dict[str, str] = {}
    if isinstance(data, dict) and isinstance(data.get("cells"), list):  # the notebook
        for cell in data["cells"]:
            for o in cell.get("outputs", []) if isinstance(cell, dict) else []:
                text = o.get("text", []) if isinstance(o, dict) else []
                for line in text if isinstance(text, list) else str(text).splitlines():
                    m = LOOKUP_LINE.search(str(line))
                    if m:
                        cls = m.group(2) + m.group(3)
                        if cls != m.group(4):
                            raise ImportProblem(source, [f"line {line.strip()!r}: A and B give {cls}, not {m.group(4)}"])
                        out[f"conv{int(m.group(1))}"] = cls
        if not out:
            raise ImportProblem(source, ["the notebook prints no 'Conversation N: A=... -> H, B=... -> AI = HAI' "
                                         "lines; give correct_answers_lookup.ipynb as saved with its output"])
        return out
    if isinstance(data, dict) and data and all(isinstance(v, str) for v in data.values()):
        bad = [k for k, v in data.items() if not re.fullmatch(r"conv\d+(_len\d+)?", k) or v not in CLASSES]
        if bad:
            raise ImportProblem(source, [f"entry {bad[0]!r}: {data[bad[0]]!r}; keys are conv<N>_len<L>, values "
                                         f"one of {', '.join(CLASSES)} ({len(bad)} bad entries)"])
        return {re.sub(r"conv0*(\d+)", lambda m: f"conv{int(m.group(1))}", k): v for k, v in data.items()}
    raise ImportProblem(source, ["not a look-up: give correct_answers_lookup.ipynb (with its output) or "
                                 "correct_answers.json ({\"conv100_len12\": \"HAI\"})"])


def parse_results(data: Any, lookup: dict[str, str], source: str = "<results>", *,
                  skip_unknown: bool = False) -> Parsed:
    """The results file -> items (one per conversation and length), judges and trials."""
    if not is_results_file(data):
        raise ImportProblem(source, ["the top level must be {group: {\"datastring\": [judges...]}} "
                                     "(e.g. compiled_prolific.json)"])
    out, problems = Parsed(), []
    items: dict[str, tuple[str, bool]] = {}  # key -> (class, catch)
    empty = unknown = 0
    missing: Counter[str] = Counter()
    for group, block in data.items():
        for k, judge in enumerate(block["datastring"]):
            label = f"{group}-{k + 1:04d}"
            at_j = f"{group} judge {k + 1}"
            if not isinstance(judge, dict) or not isinstance(judge.get("data"), list):
                problems.append(f"{at_j}: needs 'data' (a list of trials); fix the record")
                continue
            demo = judge.get("questiondata") if isinstance(judge.get("questiondata"), dict) else {}
            seq = 0
            for t_no, rec in enumerate(judge["data"]):
                td = rec.get("trialdata") if isinstance(rec, dict) else None
                at = f"{at_j} trial {t_no}"
                if not isinstance(td, dict):
                    problems.append(f"{at}: needs 'trialdata' (an object); fix the record")
                    continue
                page = str(td.get("conversationID", ""))
                if page == ".html" and not td.get("hit"):
                    empty += 1
                    continue
                m = PAGE.search(page)
                if not m:
                    problems.append(f"{at}: field 'conversationID' is {page!r}; it must end in conv<N>_len<L>.html")
                    continue
                conv, length = int(m.group(1)), int(m.group(2))
                if str(td.get("hit")) != str(conv) or str(td.get("hit_len")) != str(length):
                    problems.append(f"{at}: fields 'hit'/'hit_len' are {td.get('hit')!r}/{td.get('hit_len')!r} but the "
                                    f"page is conv{conv}_len{length}; the trial names two conversations, fix one")
                    continue
                said = class_labels(td.get("Aclass"))
                if said is None:
                    problems.append(f"{at}: field 'Aclass' is {td.get('Aclass')!r}; it must be one of {', '.join(CLASSES)}")
                    continue
                genders = {sp: GENDER.get(str(td.get(f"{sp}gender", "")).upper()) for sp in "AB"}
                if None in genders.values():
                    problems.append(f"{at}: fields 'Agender'/'Bgender' are {td.get('Agender')!r}/{td.get('Bgender')!r}; "
                                    "each must be M or F")
                    continue
                rt = td.get("rt")
                if not (isinstance(rt, (int, float)) and rt >= 0):
                    problems.append(f"{at}: field 'rt' is {rt!r}; give milliseconds >= 0")
                    continue
                key = f"conv{conv}_len{length}"
                truth = lookup.get(key) or lookup.get(f"conv{conv}")
                if truth is None:
                    if skip_unknown:
                        unknown += 1
                        missing[f"conv{conv}"] += 1
                        continue
                    problems.append(f"{at} ({key}): conversation {conv} is not in the look-up, so its speakers' truth "
                                    "is unknown; give a look-up that names it (or import with --skip-unknown-truth)")
                    continue
                catch = td.get("isCatch") is True
                if key in items and items[key] != (truth, catch):
                    problems.append(f"{at} ({key}): marked isCatch={catch} here and {items[key][1]} in another trial; "
                                    "one page is either a catch trial or not")
                    continue
                items[key] = (truth, catch)
                feedback = td.get("hasFeedback") is True
                answers = {"speakers": said, "genders": genders, "class": td["Aclass"], "topic_index": str(td.get("topic")),
                           "is_catch": catch, "has_feedback": feedback, "source_trial": f"{group}/{k}/{t_no}"}
                verdict = "machine" if "machine" in said.values() else "human"
                out.trials.append(ImportTrial(label, key, seq, verdict, rt_ms=int(rt),
                                              phase="feedback" if feedback else "test", feedback_shown=feedback,
                                              answers=answers))
                seq += 1
            if seq:
                out.judges.append(JudgeIn(label, demographics={**demo, "source": f"zhang2023 conversations {group}"}))
    if problems:
        raise ImportProblem(source, problems)
    if not out.trials:
        raise ImportProblem(source, ["no trial could be imported (none is in the look-up); check the look-up file"])
    convs = sorted({k.split("_")[0] for k in items}, key=lambda c: int(c[4:]))
    out.stimuli = [StimulusIn(c, fields={"conversation": int(c[4:]), "transcript_missing": True}) for c in convs]
    for key, (cls, catch) in sorted(items.items()):
        truths = class_labels(cls)
        out.responses.append(ResponseIn(
            key, key.split("_")[0], None, "machine" if "machine" in truths.values() else "human",
            "human" if cls == "HH" else UNNAMED, control=catch,
            payload={"speakers": truths, "speaker_agents": {sp: UNNAMED for sp, t in truths.items() if t == "machine"},
                     "class": cls, "length": int(key.rsplit("len", 1)[1]), "transcript_missing": True}))
    out.notes.append(f"{len(out.trials)} trials of {len(out.judges)} judges on {len(out.responses)} conversation pages "
                     f"({sum(c for _, c in items.values())} catch pages stored as control items); the results hold no "
                     "transcripts or model names")
    if empty:
        out.notes.append(f"{empty} empty trial(s) (hit 0, page '.html') left out")
    if unknown:
        out.notes.append(f"{unknown} trial(s) on {len(missing)} conversation(s) not in the look-up left out "
                         f"(--skip-unknown-truth): {', '.join(sorted(missing, key=lambda c: int(c[4:]))[:12])}"
                         + (" ..." if len(missing) > 12 else ""))
    return out
