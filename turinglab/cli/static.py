"""`turinglab static`: static Turing tests (Zhang et al.): import, summary, from-games."""

from __future__ import annotations

import typer

from turinglab.cli.common import DB_HELP, STATIC_EXCLUDE_HELP, console, fail, read_study, static_exclude, static_store


app = typer.Typer(no_args_is_help=True, help="Static Turing tests: import items and judge trials, summarise them.")
_TASKS = "word|caption|object|color|fv|conversation, or a plugin's task (`turinglab static tasks`)"


def _lengths(lengths: str) -> tuple[int, ...]:
    """--lengths: increasing positive whole numbers, e.g. "3,6,9"."""
    try:
        ks = tuple(int(x) for x in lengths.split(",") if x.strip())
        if not ks or min(ks) < 1 or list(ks) != sorted(set(ks)):
            raise ValueError
    except ValueError:
        fail(f"--lengths must be increasing positive whole numbers separated by commas (e.g. 3,6,9), got {lengths!r}")
    return ks


@app.command("tasks")
def static_tasks(as_json: bool = typer.Option(False, "--json", help="print JSON")) -> None:
    """List the static tasks (`task:` of a static study file) and the plugins giving them."""
    import json

    from rich.table import Table

    from turinglab.plugins.manager import plugin_of, static_tasks

    rows = [{"task": n, "plugin": plugin_of("turinglab_static_tasks", n), "pictures": t.images,
             "judges see": t.intro} for n, t in static_tasks().items()]
    if as_json:
        print(json.dumps(rows, indent=2))
        return
    table = Table("task", "plugin", "pictures", "judges see")
    for r in rows:
        table.add_row(r["task"], r["plugin"], "yes" if r["pictures"] else "no", r["judges see"])
    console.print(table)


@app.command("import")
def static_import(
    task: str = typer.Option(..., "--task", help=_TASKS),
    responses: str = typer.Option(None, "--responses", help="Zhang response dictionary (JSON), e.g. color.json (not needed for word or conversation judge trials alone); with --format plain, your items (CSV or JSONL)."),
    study: str = typer.Option(..., "--study", help="Name of the static study to create."),
    images: str = typer.Option(None, "--images", help="Folder with the stimulus images (vision tasks)."),
    judge_trials: str = typer.Option(None, "--judge-trials", help="Zhang human-judge trial file (JSON); for --task conversation without --responses, the verdict file trials_all.json."),
    study_file: str = typer.Option(None, "--study-file", help="Static study YAML (default: preset zhang-2023)."),
    skip_unknown_truth: bool = typer.Option(False, "--skip-unknown-truth", help="Conversation judge results: leave out (and count) trials whose conversation the look-up (--responses) does not name."),
    fmt: str = typer.Option("zhang", "--format", help="zhang (Zhang's JSON files), plain (your own items: "
                            "--responses items.csv|.jsonl, --images folder), psiturk or jspsych (judge data of "
                            "those tools as --judge-trials; see docs/static.md)."),
    map_file: str = typer.Option(None, "--map", help="psiturk/jspsych: YAML naming which trial fields are the "
                                 "stimulus, response, agent, answer, control answer and truth, and phase."),
    db: str = typer.Option(None, "--db", help=DB_HELP),
) -> None:
    """Import a response dictionary (and published judge trials), or your own items: all or nothing.

    Zhang's conversation judge results (compiled_prolific.json): --task conversation --judge-trials
    RESULTS --responses LOOKUP (correct_answers_lookup.ipynb or correct_answers.json)."""
    from pathlib import Path

    from turinglab.game.static_config import load_static_study, preset_study, task_names
    from turinglab.statictests.importing import parse_import
    from turinglab.statictests.zhang import ImportProblem
    from turinglab.store import StoreError

    if task not in task_names():
        fail(f"--task must be one of {', '.join(task_names())}, got {task!r}")
    img = Path(images).resolve() if images else None
    if img is not None and not img.is_dir():
        fail(f"--images {images}: no such folder; give the folder holding the image files")
    cfg = read_study(load_static_study, study_file, task) if study_file else read_study(preset_study, study, task)
    cfg = cfg.model_copy(update={"name": study, "task": task, **({"image_dir": str(img)} if img else {})})
    try:
        parsed = parse_import(task, responses, judge_trials, img, fmt, skip_unknown_truth=skip_unknown_truth,
                              map_file=map_file)
    except ImportProblem as exc:
        fail(str(exc))
    notes = list(parsed.notes)
    if parsed.responses:  # a study its items cannot fill would serve "not ready" to every judge
        cfg, fit_notes = _fit_session(cfg, parsed, own_file=bool(study_file))
        notes += fit_notes
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
    for note in notes:
        console.print(f"note: {note}", markup=False, highlight=False, soft_wrap=True)


def _fit_session(cfg, parsed, own_file: bool):  # noqa: ANN001, ANN202 - (StaticStudy, notes)
    """The study with a session its items fill (items without a picture in a picture task are never
    dealt, and a note says so): without a study file the session size follows the items (a note
    says so); with one, the study is kept and a warning says how to fix it."""
    from types import SimpleNamespace

    from turinglab.statictests.fill import dealable, fill_problem, largest_session, with_items

    keys = {s.key: n for n, s in enumerate(parsed.stimuli)}
    pics = {s.key: s.image for s in parsed.stimuli}
    items = [SimpleNamespace(id=n, truth=r.truth, agent=r.agent, control=r.control, stimulus_id=keys.get(r.stimulus_key, -1),
                             stimulus_image=pics.get(r.stimulus_key)) for n, r in enumerate(parsed.responses)]
    items, left_out = dealable(items, cfg.task)
    notes = [left_out] if left_out else []
    problem = fill_problem(items, cfg) if items else None
    if problem is None:
        return cfg, notes
    best = largest_session(items, cfg)
    if own_file or best == 0:
        console.print(f"warning: {problem}", markup=False, highlight=False, soft_wrap=True)
        return cfg, notes
    return with_items(cfg, best), notes + [f"session.items set to {best} (the preset's {cfg.session.items} is more "
                                           "than these items fill); a study file's session.items chooses another size"]


@app.command("summary")
def static_summary(
    study: str = typer.Option(..., "--study", help="Static study name or id."),
    db: str = typer.Option(None, "--db", help=DB_HELP),
    as_json: bool = typer.Option(False, "--json", help="print JSON"),
    alpha: float = typer.Option(0.05, "--alpha", help="1 - confidence level of the intervals."),
    drop_failed: bool = typer.Option(None, "--drop-failed-controls/--keep-failed-controls",
                                     help="Zhang et al.'s rule: count a trial only when its control answer is right "
                                          "(default: the study's drop_failed_controls setting, else keep)."),
    exclude: list[str] = typer.Option(None, "--exclude", help=STATIC_EXCLUDE_HELP),
) -> None:
    """Trials, judges, the confusion matrix and each agent's judged-human rate."""
    import json

    from turinglab.analysis.static.answers import static_extras
    from turinglab.analysis.static.summary import control_answers, count_table, left_out, practice, summary
    from turinglab.store import StoreError

    if not 0 < alpha < 1:
        fail(f"--alpha must be between 0 and 1 (e.g. 0.05), got {alpha}")
    flags = static_exclude(exclude)
    store = static_store(db, write=False)
    try:
        info = store.static_study(study)
        drop = info.study.drop_failed_controls if drop_failed is None else drop_failed
        out = summary(count_table(store, info.id, drop, flags), alpha, study=info.name, task=info.task)
        out["failed_controls_dropped"] = drop
        out.update(static_extras(store, info, alpha, flags))
        out["control_answers"] = control_answers(store, info.id, alpha, flags)
        out["practice"] = practice(store, info.id, alpha, flags)
        out["excluded"] = left_out(store, info.id, flags)
    except StoreError as exc:
        fail(str(exc))
    finally:
        store.close()
    if as_json:
        print(json.dumps(out, indent=2))
        return
    c = out["confusion"]
    console.print(f"{out['study']} ({out['task']}): {out['trials']} trials by {out['judges']} judges"
                  + (" (failed controls dropped)" if drop else ""), markup=False)
    console.print(f"truth human:   judged human {c['human']['human']}, machine {c['human']['machine']}", markup=False)
    console.print(f"truth machine: judged human {c['machine']['human']}, machine {c['machine']['machine']}", markup=False)
    w = out["excluded"]["withdrawn"]
    if w["judges"]:
        console.print(f"judges who withdrew: {w['judges']}, their {w['trials']} trials "
                      + ("left out (flag withdrawn)" if w["left_out"] else "counted (--exclude none)"), markup=False)
    if out["practice"]["trials"]:
        pr = out["practice"]
        console.print(f"practice trials (not counted above): {pr['trials']}; right {pr['correct']} of {pr['scored']}",
                      markup=False)
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
    from turinglab.game.static_config import preset_study
    from turinglab.statictests.displaced import build
    from turinglab.statictests.topics import TopicsError
    from turinglab.store import StoreError

    ks = _lengths(lengths)
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


def _model_config(model: str, base_url: str | None, api_key_env: str, temperature: float, max_tokens: int,
                  seed: int, takes_images: bool = False):  # noqa: ANN202 - ModelConfig
    from turinglab.statictests.generate import ModelConfig

    if not 0 <= temperature <= 2:
        fail(f"--temperature must be between 0 and 2, got {temperature}")
    if max_tokens < 1:
        fail(f"--max-tokens must be at least 1, got {max_tokens}")
    return ModelConfig(model=model, base_url=base_url, api_key_env=api_key_env, temperature=temperature,
                       max_tokens=max_tokens, seed=seed, takes_images=takes_images)


@app.command("generate")
def static_generate(
    study: str = typer.Option(..., "--study", help="Static study (name or id) whose stimuli to answer, e.g. an "
                              "imported word study."),
    task: str = typer.Option("word", "--task", help="word (one word per cue); caption, object, color (a picture per "
                             "stimulus: an OpenAI-compatible vision model, --vision)."),
    model: str = typer.Option("local", "--model", help="'local' (the embedded model) or a model name at --base-url."),
    base_url: str = typer.Option(None, "--base-url", help="OpenAI-compatible server (vLLM, llama.cpp, Ollama, ...)."),
    api_key_env: str = typer.Option("OPENAI_API_KEY", "--api-key-env", help="Environment variable holding the API key."),
    agent: str = typer.Option(None, "--agent", help="Agent name of the items (default: the model's name)."),
    limit: int = typer.Option(None, "--limit", help="Only the first N stimuli of the study."),
    retries: int = typer.Option(3, "--retries", help="Asks again after an unusable answer, at most this many times."),
    prompt: str = typer.Option(None, "--prompt", help="Your own Jinja prompt template (word: variable cue)."),
    temperature: float = typer.Option(0.7, "--temperature"),
    max_tokens: int = typer.Option(None, "--max-tokens", help="Default: word 8, caption 60, object 30, color 8."),
    seed: int = typer.Option(42, "--seed"),
    takes_images: bool = typer.Option(False, "--vision", "--takes-images", help="The model takes images (OpenAI "
                                      "image_url content parts): needed for caption, object and color."),
    report: str = typer.Option(None, "--report", help="Write the run's report (JSON, with every unusable answer) here."),
    db: str = typer.Option(None, "--db", help=DB_HELP),
) -> None:
    """Ask a model for responses to a study's stimuli and store them as items of its agent (resumable, cached)."""
    import json
    from functools import partial
    from pathlib import Path

    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

    from turinglab.statictests.generate import GenerateError, check_task, generate_words
    from turinglab.statictests.vision import MAX_TOKENS, generate_pictures
    from turinglab.store import StoreError

    if limit is not None and limit < 1:
        fail(f"--limit must be at least 1, got {limit}")
    if not 0 <= retries <= 20:
        fail(f"--retries must be between 0 and 20, got {retries}")
    tokens = MAX_TOKENS.get(task, 8) if max_tokens is None else max_tokens
    cfg = _model_config(model, base_url, api_key_env, temperature, tokens, seed, takes_images)
    try:
        check_task(task, cfg)
    except GenerateError as exc:
        fail(str(exc))
    store = static_store(db, write=True)
    try:
        info = store.static_study(study)
        with Progress(TextColumn("generating"), BarColumn(), MofNCompleteColumn(), TimeRemainingColumn(),
                      console=console, transient=True) as bar:
            tid = bar.add_task("cues", total=None)
            run = generate_words if task == "word" else partial(generate_pictures, task=task)
            rep = run(store, info.id, cfg, limit=limit, retries=retries, prompt_file=prompt, agent=agent,
                      progress=lambda done, total: bar.update(tid, completed=done, total=total))
    except (GenerateError, StoreError) as exc:
        fail(str(exc))
    except Exception as exc:  # noqa: BLE001 - the model server: unreachable, bad key, ...
        fail(f"the model call failed ({type(exc).__name__}: {str(exc)[:300]}); what was stored so far is kept: "
             "run the same command again to resume")
    finally:
        store.close()
    out = rep.as_dict()
    if report:
        Path(report).write_text(json.dumps(out, indent=2), encoding="utf-8")
    bad = sum(rep.unusable.values())
    what = "cue" if task == "word" else "picture"
    console.print(f"static study {info.name!r}: {rep.stored} responses stored as agent {rep.agent!r} "
                  f"({rep.asked} {what}s asked, {rep.skipped} already had one; {rep.calls} model calls, "
                  f"{rep.cached_calls} from the cache; {out['responses_per_second']} responses/s)",
                  markup=False, highlight=False, soft_wrap=True)
    console.print(f"unusable answers: {bad} ({', '.join(f'{k} {v}' for k, v in sorted(rep.unusable.items())) or 'none'}), "
                  f"asked again up to {retries} times each", markup=False, highlight=False, soft_wrap=True)
    for f in rep.failed:
        raws = "; ".join(repr(a["raw"][:40]) for a in f["attempts"])
        console.print(f"  {what} {f['cue']!r}: {f['reason']}" if f.get("reason") else
                      f"  no usable answer for {what} {f['cue']!r} after {len(f['attempts'])} attempts: {raws}",
                      markup=False, highlight=False, soft_wrap=True)


@app.command("conversations")
def static_conversations(
    study: str = typer.Option(..., "--study", help="Name of the static (conversation) study to create."),
    pair: list[str] = typer.Option(None, "--pair", help="Two witnesses that talk, A:B (registry names, e.g. "
                                   "local:local, local:eliza); repeat for more pairs."),
    n: int = typer.Option(10, "--n", help="Conversations per pair."),
    exchanges: int = typer.Option(24, "--exchanges", help="Exchanges per conversation (A's message and B's reply)."),
    lengths: str = typer.Option(",".join(map(str, (3, 6, 9, 12, 15, 18, 21, 24))), "--lengths",
                                help="Item lengths in exchanges (the first k exchanges of each conversation)."),
    min_exchanges: int = typer.Option(None, "--min-exchanges", help="A farewell before this exchange is a failure "
                                      "(default: --exchanges)."),
    max_resamples: int = typer.Option(3, "--max-resamples", help="A failed conversation is sampled again at most this often."),
    human: str = typer.Option(None, "--human", help="Human-human conversations to add (JSONL: conversation, speaker, text)."),
    seed: int = typer.Option(1, "--seed"),
    log: str = typer.Option(None, "--log", help="Write every failed attempt (reason and turns) here, JSONL."),
    openers: str = typer.Option(None, "--openers", help="A folder of opener templates (*.j2; variables topic, k, hi) "
                                "instead of the shipped prompts/openers/."),
    db: str = typer.Option(None, "--db", help=DB_HELP),
) -> None:
    """AI-AI conversations (failures detected and re-sampled) and human-human ones, chunked into items."""
    import json
    from pathlib import Path

    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

    from turinglab.statictests import conversations as cv
    from turinglab.game.static_config import preset_study
    from turinglab.statictests.failures import Rules
    from turinglab.statictests.generate import GenerateError
    from turinglab.store import StoreError

    ks = _lengths(lengths)
    pairs = []
    for p in pair or []:
        a, sep, b = p.partition(":")
        if not sep or not a.strip() or not b.strip():
            fail(f"--pair {p!r}: give two witness names as A:B, e.g. local:eliza")
        pairs.append((a.strip().lower(), b.strip().lower()))
    if len(set(pairs)) != len(pairs):
        fail("--pair: the same pair is given twice; raise --n instead")
    if not pairs and not human:
        fail("nothing to make: give --pair A:B (AI-AI conversations) and/or --human FILE.jsonl")
    if n < 1 or exchanges < 1 or max_resamples < 0:
        fail("--n and --exchanges must be at least 1, --max-resamples at least 0")
    rules = Rules(min_exchanges=min_exchanges or exchanges)
    convs: list = []
    out = None
    try:
        if human:
            convs += cv.read_human_jsonl(human)
        if pairs:
            configs = {w: cv.witness_config(w) for p in pairs for w in p}
            with Progress(TextColumn("conversations"), BarColumn(), MofNCompleteColumn(), TimeRemainingColumn(),
                          console=console, transient=True) as bar:
                tid = bar.add_task("conversations", total=len(pairs) * n)
                out = cv.generate(pairs, n, exchanges, rules, max_resamples=max_resamples, seed=seed, configs=configs,
                                  progress=lambda done, total: bar.update(tid, completed=done), openers=openers)
            convs += out.made
    except GenerateError as exc:
        fail(str(exc))
    if out is not None and log:
        Path(log).write_text("".join(json.dumps(e) + "\n" for e in out.log), encoding="utf-8")
    stimuli, items, short = cv.chunk(convs, ks)
    if not items:
        fail(f"no conversation reaches {ks[0]} exchanges: nothing to store; lower --lengths or raise --exchanges")
    cfg = preset_study(study, "conversation").model_copy(update={"conversation_lengths": ks})
    store = static_store(db, write=True)
    try:
        sid = store.import_static(cfg, stimuli, items)
    except StoreError as exc:
        fail(str(exc))
    finally:
        store.close()
    console.print(f"static study {study!r} (id {sid}, conversation): {len(items)} items from {len(stimuli)} "
                  f"conversations, lengths {','.join(map(str, ks))}"
                  + (f"; {short} conversation(s) shorter than {ks[0]} exchanges left out" if short else ""),
                  markup=False, highlight=False, soft_wrap=True)
    if out is not None:
        per_min = 60 * len(out.made) / out.seconds if out.seconds else None
        console.print(f"AI-AI: {len(out.made)} conversations made in {out.attempts} attempts ({out.cached} from the "
                      f"cache), {len(out.log)} failed attempts re-sampled, {len(out.failed)} conversations failed every "
                      f"attempt; {per_min and round(per_min, 2)} conversations/min",
                      markup=False, highlight=False, soft_wrap=True)
        for e in out.log:
            console.print(f"  re-sampled {e['conversation']} attempt {e['attempt']}: {e['reason']}",
                          markup=False, highlight=False, soft_wrap=True)
        for f in out.failed:
            console.print(f"  left out {f['conversation']}: failed all {f['attempts']} attempts", markup=False,
                          highlight=False, soft_wrap=True)
