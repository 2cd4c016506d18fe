"""What `turinglab static import` reads: the right parser for the task, the files and the format."""

from __future__ import annotations

import inspect
from pathlib import Path

from turinglab.plugins.manager import importers
from turinglab.statictests.zhang import (
    ImportProblem,
    Parsed,
    parse_conversation_verdicts,
    parse_judge_trials,
    parse_responses,
    read_json,
)


def parse_import(task: str, responses: str | None, judge_trials: str | None, images: Path | None,
                 fmt: str = "zhang", *, skip_unknown_truth: bool = False, map_file: str | None = None) -> Parsed:
    """The items (and judges and trials) to import, read by the importer plugin named `fmt`
    (`static import --format`); `ImportProblem` lists everything wrong. `map_file` (`--map`) goes
    to importers that read other tools' trials (psiturk, jspsych)."""
    found = importers()
    if fmt not in found:
        raise ImportProblem("--format", [f"unknown format {fmt!r}; use {' or '.join(found)}"])
    extra = {"map_file": map_file} if map_file is not None else {}
    if extra and "map_file" not in inspect.signature(found[fmt].read).parameters:
        raise ImportProblem("--map", [f"--format {fmt} takes no map (psiturk and jspsych do)"])
    return found[fmt].read(task, responses, judge_trials, images, skip_unknown_truth=skip_unknown_truth, **extra)


def read_psiturk_data(task: str, responses: str | None, judge_trials: str | None, images: Path | None, *,
                      skip_unknown_truth: bool = False, map_file: str | None = None) -> Parsed:
    """`--format psiturk`: psiTurk's participants table or trialdata.csv (statictests/rawfiles.py);
    Zhang's colour and object runs with their built-in mapping (zhang_raw.py), else `--map`."""
    from turinglab.statictests.rawfiles import read_psiturk
    from turinglab.statictests.rawmap import load_map, mapped_study
    from turinglab.statictests.zhang_raw import parse_raw_run

    if not judge_trials:
        raise ImportProblem("--format psiturk", ["give psiTurk's data as --judge-trials (participants table CSV, "
                                                 "database file or URL, or trialdata.csv)"])
    m = load_map(map_file)
    judges = read_psiturk(judge_trials, m.table if m else None)
    if m is not None and m.stimulus is not None:
        return mapped_study(judges, m, task, judge_trials, images)
    if responses is None:
        raise ImportProblem("--format psiturk", [f"--task {task} without --map: give the response dictionary the "
                                                 "run's pages were made from as --responses (e.g. object.json), "
                                                 "or a --map file naming the trial fields"])
    return parse_raw_run(judges, parse_responses(read_json(responses), task, responses, images), task, judge_trials)


def read_jspsych_data(task: str, responses: str | None, judge_trials: str | None, images: Path | None, *,
                      skip_unknown_truth: bool = False, map_file: str | None = None) -> Parsed:
    """`--format jspsych`: jsPsych's data (JSON or CSV) with a `--map` naming the trial fields."""
    from turinglab.statictests.rawfiles import read_jspsych
    from turinglab.statictests.rawmap import load_map, mapped_study

    m = load_map(map_file)
    if not judge_trials or m is None:
        raise ImportProblem("--format jspsych", ["give jsPsych's data as --judge-trials (JSON or CSV) and a --map "
                                                 "file naming the trial fields (docs/static.md)"])
    if responses is not None:
        raise ImportProblem("--format jspsych", ["--responses is not read: jsPsych items are made from the trials' "
                                                 "own fields (the map's stimulus, response and agent)"])
    return mapped_study(read_jspsych(judge_trials, m.judge), m, task, judge_trials, images)


def read_plain(task: str, responses: str | None, judge_trials: str | None, images: Path | None, *,
               skip_unknown_truth: bool = False) -> Parsed:
    """`--format plain`: your own items (statictests/plain.py)."""
    from turinglab.statictests.plain import parse_plain, read_rows

    if responses is None or judge_trials:
        raise ImportProblem("--format plain", [("give the items file as --responses (CSV or JSONL); judge trials "
                                                "of your own study come from its judge pages, not a file")])
    return parse_plain(read_rows(responses), task, images, responses)


def read_zhang(task: str, responses: str | None, judge_trials: str | None, images: Path | None, *,
               skip_unknown_truth: bool = False) -> Parsed:
    """`--format zhang`: Zhang et al.'s response dictionaries and judge files."""
    from turinglab.statictests import zhang_judges as zj
    from turinglab.statictests.zhang_conversations import is_results_file, parse_results, read_lookup

    if task == "conversation" and judge_trials:
        results = read_json(judge_trials)
        if is_results_file(results):  # Zhang's conversation judge results, the truth from the look-up
            if responses is None:
                raise ImportProblem(judge_trials, [("--judge-trials is Zhang's conversation judge results: give the "
                                                    "truth look-up with --responses (correct_answers_lookup.ipynb "
                                                    "with its output, or correct_answers.json)")])
            return parse_results(results, read_lookup(read_json(responses), responses), judge_trials,
                                 skip_unknown=skip_unknown_truth)
    if responses is None:
        if task == "conversation" and judge_trials:  # Zhang's verdicts: items and trials from one file
            return parse_conversation_verdicts(read_json(judge_trials), judge_trials)
        if task == "word" and judge_trials:  # e.g. the ChatGPT round, whose words are not published
            return zj.parse_word_trials_alone(read_json(judge_trials), judge_trials)
        raise ImportProblem("--responses", [("--responses is needed (a Zhang response dictionary, e.g. color.json); "
                                             "only --task word and --task conversation can import judge trials alone "
                                             "(--judge-trials)")])
    parsed = parse_responses(read_json(responses), task, responses, images)
    if not judge_trials:
        return parsed
    data = read_json(judge_trials)
    if task in ("color", "object"):
        return zj.parse_image_judge_trials(data, parsed, task, judge_trials)
    if task == "fv":
        return zj.parse_fv_judge_trials(data, parsed, judge_trials)
    return parse_judge_trials(data, parsed, judge_trials)  # word (and pages named <index>_<letter>_<k>)
