"""Which fields of a psiTurk or jsPsych trial are what (`static import --map FILE.yaml`), and the
trials turned into a static study's items, judges and trials (docs/static.md, "psiTurk and jsPsych").

Items are made from the trials themselves: one per distinct (stimulus, agent, response shown).
Trials of other phases than `test_phases` (instructions, practice, questionnaires) are left out
and counted; every test trial must map, or nothing is imported (one line per problem).
"""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, ValidationError

from turinglab.statictests.rawfiles import RawJudge
from turinglab.statictests.zhang import ImportProblem, Parsed
from turinglab.store.static import ImportTrial, JudgeIn, ResponseIn, StimulusIn


class RawMap(BaseModel):
    model_config = ConfigDict(extra="forbid")

    table: str | None = None  # psiTurk's participants table in a database (default: the one with a datastring)
    judge: str | None = None  # jsPsych: the trial field holding the judge's id
    phase: str | None = None  # the trial field holding the phase; None: every trial with an answer
    test_phases: list[str] = ["test"]  # compared without case; other phases are left out
    stimulus: str | None = None  # the field naming the stimulus (cue word, image file ...)
    response: str | None = None  # the response the judge saw (the item's text)
    agent: str | None = None  # who produced the response
    human_agents: list[str] = ["human"]  # values of `agent` that are people
    answer: str | None = None  # the judge's human-or-machine answer
    answers: dict[str, list[str]] = {"human": ["human"], "machine": ["machine"]}
    rt: str | None = "rt"
    control_answer: str | None = None  # the judge's answer to the yes/no control question
    control_truth: str | None = None  # its right answer
    control_values: dict[str, list[str]] = {"yes": ["yes", "true", "1"], "no": ["no", "false", "0"]}


def load_map(path: str | None) -> RawMap | None:
    if path is None:
        return None
    p = Path(path)
    try:
        data = yaml.safe_load(p.read_text(encoding="utf-8"))
        return RawMap.model_validate(data)
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
        raise ImportProblem(path, [f"cannot read the map ({str(exc).splitlines()[0]}); give a YAML mapping"]) from None
    except ValidationError as exc:
        raise ImportProblem(path, [f"map field {'.'.join(map(str, e['loc'])) or '(top)'}: {e['msg']}; "
                                   "see docs/static.md for the map's fields" for e in exc.errors()]) from None


def _norm(v: Any) -> str:
    return str(v).strip().casefold()


def _lookup(values: dict[str, list[str]], v: Any) -> str | None:
    for name, spelled in values.items():
        if _norm(v) in {_norm(s) for s in spelled}:
            return name
    return None


def _slug(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9]+", "-", name).strip("-").lower() or "m"


def mapped_study(judges: list[RawJudge], m: RawMap, task: str, source: str, images: Path | None = None) -> Parsed:
    """Trials -> items (made from the trials), judges and trials; `ImportProblem` on any unmapped test trial."""
    from turinglab.plugins.manager import static_tasks

    if not (m.stimulus and m.agent and m.answer):
        raise ImportProblem(source, ["the map must name the stimulus, agent and answer fields (stimulus: ..., agent: "
                                     "..., answer: ...); only Zhang's colour and object runs have them built in"])
    check = static_tasks()[task].check if task in static_tasks() else None
    out, problems = Parsed(), []
    stimuli: dict[str, int] = {}
    items: dict[tuple[str, str, str | None], ResponseIn] = {}
    per_slot: Counter[tuple[int, str]] = Counter()
    left_out: Counter[str] = Counter()
    for j in judges:
        seq = 0
        for n, t in enumerate(j.trials):
            at = f"judge {j.label} trial {t.get('trial_index', n)}"
            if m.phase is not None:
                ph = str(t.get(m.phase, ""))
                if _norm(ph) not in {_norm(p) for p in m.test_phases}:
                    left_out[ph or "(none)"] += 1
                    continue
            elif m.answer not in t:
                left_out["(no answer)"] += 1
                continue
            missing = [f for f in (m.stimulus, m.agent, m.answer) if t.get(f) in (None, "")]
            if missing:
                problems.append(f"{at}: field {missing[0]!r} is missing; a test trial needs the stimulus, agent and "
                                "answer fields the map names")
                continue
            answer = _lookup(m.answers, t[m.answer])
            if answer is None:
                problems.append(f"{at}: field {m.answer!r} is {t[m.answer]!r}; the map's answers are "
                                f"{m.answers}; add the spelling to the map")
                continue
            text = None if m.response is None else str(t.get(m.response) or "") or None
            if text is not None and check is not None and (why := check(text)) is not None:
                problems.append(f"{at}: field {m.response!r} {why}")
                continue
            agent = str(t[m.agent])
            truth = "human" if _norm(agent) in {_norm(a) for a in m.human_agents} else "machine"
            stim = str(t[m.stimulus])
            if stim not in stimuli:
                stimuli[stim] = len(stimuli)
                image = Path(stim).name if images is not None and (images / Path(stim).name).is_file() else None
                out.stimuli.append(StimulusIn(stim, text=stim if task == "word" else None, image=image,
                                              fields={"index": stimuli[stim]}))
            slot = "a" if truth == "human" else _slug(agent)
            item = items.get((stim, agent, text))
            if item is None:
                k = per_slot[(stimuli[stim], slot)]
                per_slot[(stimuli[stim], slot)] += 1
                item = items[(stim, agent, text)] = ResponseIn(f"{stimuli[stim]}_{slot}_{k}", stim, text, truth,
                                                               "human" if truth == "human" else agent)
                out.responses.append(item)
            ans: dict[str, Any] = {f: t[f] for f in {m.stimulus, m.agent, m.answer} if f in t}
            for f in ("trial_index", "trial_type", "time_elapsed"):
                if f in t:
                    ans[f] = t[f]
            if m.control_answer and m.control_truth:
                said, right = _lookup(m.control_values, t.get(m.control_answer)), _lookup(m.control_values, t.get(m.control_truth))
                if said is None or right is None:
                    problems.append(f"{at}: fields {m.control_answer!r}/{m.control_truth!r} are "
                                    f"{t.get(m.control_answer)!r}/{t.get(m.control_truth)!r}; the map's control_values "
                                    f"are {m.control_values}")
                    continue
                ans["object_answer"], ans["object_truth"] = said, right
            rt = t.get(m.rt) if m.rt else None
            try:
                rt_ms = None if rt in (None, "", "null") else int(float(rt))
            except (TypeError, ValueError):
                problems.append(f"{at}: field {m.rt!r} is {rt!r}; give milliseconds or leave it out")
                continue
            out.trials.append(ImportTrial(j.label, item.key, seq, answer, rt_ms=rt_ms, answers=ans))
            seq += 1
        if seq:
            out.judges.append(JudgeIn(j.label, demographics={**j.demographics, "source": source}))
    if problems:
        raise ImportProblem(source, problems)
    if not out.trials:
        raise ImportProblem(source, [f"no test trials (phases found: {dict(left_out)}); set the map's phase and "
                                     "test_phases to the phase of the judged trials"])
    if left_out:
        out.notes.append("left out (not a test phase): " + ", ".join(f"{n} {p}" for p, n in sorted(left_out.items())))
    return out
