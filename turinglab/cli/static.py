"""`turinglab static`: static Turing tests (Zhang et al.): import, summary, from-games."""

from __future__ import annotations

import typer

from turinglab.cli.common import DB_HELP, console, fail, read_study, static_store


app = typer.Typer(no_args_is_help=True, help="Static Turing tests: import items and judge trials, summarise them.")
_TASKS = "word|caption|object|color|fv|conversation"


@app.command("import")
def static_import(
    task: str = typer.Option(..., "--task", help=_TASKS),
    responses: str = typer.Option(None, "--responses", help="Zhang response dictionary (JSON), e.g. color.json (not needed for word or conversation judge trials alone); with --format plain, your items (CSV or JSONL)."),
    study: str = typer.Option(..., "--study", help="Name of the static study to create."),
    images: str = typer.Option(None, "--images", help="Folder with the stimulus images (vision tasks)."),
    judge_trials: str = typer.Option(None, "--judge-trials", help="Zhang human-judge trial file (JSON); for --task conversation without --responses, the verdict file trials_all.json."),
    study_file: str = typer.Option(None, "--study-file", help="Static study YAML (default: preset zhang-2023)."),
    skip_unknown_truth: bool = typer.Option(False, "--skip-unknown-truth", help="Conversation judge results: leave out (and count) trials whose conversation the look-up (--responses) does not name."),
    fmt: str = typer.Option("zhang", "--format", help="zhang (Zhang's JSON files) or plain (your own items: "
                            "--responses items.csv|.jsonl, --images folder; see docs/static.md)."),
    db: str = typer.Option(None, "--db", help=DB_HELP),
) -> None:
    """Import a response dictionary (and published judge trials), or your own items: all or nothing.

    Zhang's conversation judge results (compiled_prolific.json): --task conversation --judge-trials
    RESULTS --responses LOOKUP (correct_answers_lookup.ipynb or correct_answers.json)."""
    from pathlib import Path

    from turinglab.statictests.config import TASKS, load_static_study, preset_study
    from turinglab.statictests.importing import parse_import
    from turinglab.statictests.zhang import ImportProblem
    from turinglab.store import StoreError

    if task not in TASKS:
        fail(f"--task must be one of {', '.join(TASKS)}, got {task!r}")
    img = Path(images).resolve() if images else None
    if img is not None and not img.is_dir():
        fail(f"--images {images}: no such folder; give the folder holding the image files")
    cfg = read_study(load_static_study, study_file) if study_file else read_study(preset_study, study, task)
    cfg = cfg.model_copy(update={"name": study, "task": task, **({"image_dir": str(img)} if img else {})})
    try:
        parsed = parse_import(task, responses, judge_trials, img, fmt, skip_unknown_truth=skip_unknown_truth)
    except ImportProblem as exc:
        fail(str(exc))
    store = static_store(db, write=True)
    try:
        sid = store.import_static(cfg, parsed.stimuli, parsed.responses, parsed.judges, parsed.trials)
    except StoreError as exc:
        fail(str(exc))
    finally:
        store.close()
    console.print(f"static study {study!r} (id {sid}, task {task}): {len(parsed.stimuli)} stimuli, "
                  f"{len(parsed.responses)} items, {len(parsed.judges)} judges, {len(parsed.trials)} trials",
                  markup=False, highlight=False, soft_wrap=True)
    for note in parsed.notes:
        console.print(f"note: {note}", markup=False, highlight=False, soft_wrap=True)


@app.command("summary")
def static_summary(
    study: str = typer.Option(..., "--study", help="Static study name or id."),
    db: str = typer.Option(None, "--db", help=DB_HELP),
    as_json: bool = typer.Option(False, "--json", help="print JSON"),
    alpha: float = typer.Option(0.05, "--alpha", help="1 - confidence level of the intervals."),
) -> None:
    """Trials, judges, the confusion matrix and each agent's judged-human rate."""
    import json

    from turinglab.statictests.answers import static_extras
    from turinglab.statictests.summary import control_answers, count_table, summary
    from turinglab.store import StoreError

    if not 0 < alpha < 1:
        fail(f"--alpha must be between 0 and 1 (e.g. 0.05), got {alpha}")
    store = static_store(db, write=False)
    try:
        info = store.static_study(study)
        out = summary(count_table(store, info.id), alpha, study=info.name, task=info.task)
        out.update(static_extras(store, info, alpha))
        out["control_answers"] = control_answers(store, info.id, alpha)
    except StoreError as exc:
        fail(str(exc))
    finally:
        store.close()
    if as_json:
        print(json.dumps(out, indent=2))
        return
    c = out["confusion"]
    console.print(f"{out['study']} ({out['task']}): {out['trials']} trials by {out['judges']} judges", markup=False)
    console.print(f"truth human:   judged human {c['human']['human']}, machine {c['human']['machine']}", markup=False)
    console.print(f"truth machine: judged human {c['machine']['human']}, machine {c['machine']['machine']}", markup=False)
    if out["control_answers"]:
        ca = out["control_answers"]
        console.print(f"control answers: {ca['correct']} of {ca['trials']} right ({ca['accuracy']['estimate']:.3f}); "
                      f"per judge mean {ca['judge_mean']:.3f}, lowest {ca['judge_min']:.3f}", markup=False)
    for a in out["agents"]:
        r = a["judged_human_rate"]
        console.print(f"  {a['agent']:24} n={a['n']:6}  judged human {r['estimate']:.3f} "
                      f"[{r['low']:.3f}, {r['high']:.3f}]", markup=False, highlight=False)


@app.command("from-games")
def static_from_games(
    from_study: str = typer.Option(..., "--from-study", help="Live study (name or id) whose stored games to use."),
    lengths: str = typer.Option("3,6,9", "--lengths", help="Chunk lengths in exchanges, e.g. 3,6,9."),
    study: str = typer.Option(..., "--study", help="Name of the static (conversation) study to create."),
    topics: str = typer.Option(None, "--topics", help="CSV file game_id,topic: each game's true topic (one of Zhang's "
                               "nine), asked as a control among 5; games not listed get no topic question."),
    db: str = typer.Option(None, "--db", help=DB_HELP),
) -> None:
    """The displaced Turing test: conversation items cut from stored live games."""
    from turinglab.statictests.config import preset_study
    from turinglab.statictests.displaced import build
    from turinglab.statictests.topics import TopicsError
    from turinglab.store import StoreError

    try:
        ks = tuple(int(x) for x in lengths.split(",") if x.strip())
        if not ks or min(ks) < 1 or list(ks) != sorted(set(ks)):
            raise ValueError
    except ValueError:
        fail(f"--lengths must be increasing positive whole numbers separated by commas (e.g. 3,6,9), got {lengths!r}")
    cfg = preset_study(study, "conversation").model_copy(update={"conversation_lengths": ks})
    store = static_store(db, write=False)
    try:
        sid, n_stim, n_items, n_topic = build(store, from_study, cfg, topics)
    except (StoreError, TopicsError) as exc:
        fail(str(exc))
    finally:
        store.close()
    console.print(f"static study {study!r} (id {sid}, conversation): {n_items} items from {n_stim} conversations "
                  f"of {from_study!r}, lengths {','.join(map(str, ks))}; {n_topic} of {n_stim} conversations with "
                  "a topic control", markup=False, highlight=False, soft_wrap=True)
