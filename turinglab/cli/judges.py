"""`turinglab judges`: AI judges beside the human judges."""

from __future__ import annotations

import functools
import inspect
from dataclasses import dataclass

import typer

from turinglab.cli.common import analysis_load, console, fail


app = typer.Typer(no_args_is_help=True, help="AI judges: trained (SVM, random forest, TF-IDF) and zero-shot LLM judges, beside the human judges.")


def _judges_items(study: str | None, responses: str | None, task: str | None, human_judges: str | None, db: str | None):
    """(items, human-judge trials or None, source description) from a stored study or a Zhang JSON file."""
    from turinglab.judges.items import ItemsError, load_human_judges, load_zhang

    if (study is None) == (responses is None):
        fail("give either --study NAME (a stored static study) or --responses PATH --task TASK (a Zhang JSON file)")
    try:
        if responses is not None:
            items = load_zhang(responses, task)
            trials = load_human_judges(human_judges, items) if human_judges else None
            return items, trials, f"file {responses}"
        try:
            from turinglab.judges.static import load_study
        except ImportError:
            fail("reading --study needs the static-test store, which this install lacks; use --responses PATH --task word")
        items, trials = load_study(db, study)
        return items, trials, f"study {study}"
    except ItemsError as exc:
        fail(str(exc))
    except LookupError as exc:
        fail(str(exc))


def _judges_run(items, trials, cfg, source: str, opts: _Shared) -> None:
    import json

    from turinglab.judges.trained import JudgeError
    from turinglab.judges.evaluate import evaluate
    from turinglab.judges.features import FeaturesError
    from turinglab.judges.items import ItemsError
    from turinglab.judges.llm import LLMJudgeError
    from turinglab.judges.vectors import VectorsError

    try:
        res = evaluate(items, cfg, trials, progress=True, use_cache=not opts.no_cache, source=source)
    except (JudgeError, FeaturesError, ItemsError, LLMJudgeError, VectorsError) as exc:
        fail(str(exc))
    per_item = res.pop("item_verdicts", [])
    if opts.items_out:
        import pandas as pd

        pd.DataFrame(per_item).to_csv(opts.items_out, index=False)
    if opts.as_json:
        print(json.dumps(res, indent=2))
        return
    from turinglab.judges.show import render

    render(console, res)


def _judges_config(judge, features, folds, group_by_stimulus, seed, repeats, alpha, opts: _Shared):
    from turinglab.judges.evaluate import Config, judge_names
    from turinglab.plugins.manager import ai_judges

    if judge not in judge_names():
        fail(f"--judge must be one of {'|'.join(judge_names())}, got {judge!r}")
    if folds < 2:
        fail(f"--folds must be at least 2, got {folds}")
    if repeats < 1:
        fail(f"--repeats must be at least 1, got {repeats}")
    if not 0 < alpha < 1:
        fail(f"--alpha must be between 0 and 1 (e.g. 0.05), got {alpha}")
    limit, prompt = opts.limit, opts.prompt
    if limit is not None and limit < 2:
        fail(f"--limit must be at least 2, got {limit}")
    if features and ai_judges()[judge].reads_text:
        fail(f"--features does not apply to --judge {judge} (it reads the text); use svm, linear-svm or rf")
    if group_by_stimulus and judge == "llm":
        fail("--group-by-stimulus does not apply to --judge llm (it is not trained)")
    if limit is not None and judge != "llm":
        fail("--limit applies to --judge llm only (trained judges use every item)")
    spec = {"model": opts.model, "base_url": opts.base_url, "api_key_env": opts.api_key_env,
            "max_tokens": opts.max_tokens, "seed": seed}
    return Config(judge=judge, features=features, folds=folds, seed=seed, repeats=repeats,
                  group_by_stimulus=group_by_stimulus, alpha=alpha, limit=limit,
                  model=spec if judge == "llm" else {}, prompt=prompt if judge == "llm" else None)


_J_JUDGE = typer.Option(None, "--judge", help="linear-svm (the paper's) | rbf-svc (the authors' code) | svm | rf | tfidf-lr | "
                        "conversation | llm (the project's own); "
                        "with --protocol zhang: default the paper's judge for the task")


@dataclass
class _Shared:
    """The options `judges evaluate` and `judges run` share: the LLM's and the output's."""

    limit: int | None
    model: str
    base_url: str | None
    api_key_env: str
    prompt: str | None
    max_tokens: int
    items_out: str | None
    no_cache: bool
    as_json: bool


def _shared_options(items_help: str, cache_help: str):
    """Append the shared options to a command's parameters (in this order) and pass them as `opts: _Shared`."""
    shared = [
        ("limit", int, typer.Option(None, "--limit", help="llm: judge a random balanced sample of N items.")),
        ("model", str, typer.Option("local", "--model", help="llm: model name ('local' = the embedded model).")),
        ("base_url", str, typer.Option(None, "--base-url", help="llm: OpenAI-compatible base URL of a remote model.")),
        ("api_key_env", str, typer.Option("OPENAI_API_KEY", "--api-key-env", help="llm: env var holding the API key.")),
        ("prompt", str, typer.Option(None, "--prompt", help="llm: a Jinja template file for the judge's instructions.")),
        ("max_tokens", int, typer.Option(24, "--max-tokens", help="llm: answer length cap.")),
        ("items_out", str, typer.Option(None, "--items-out", help=items_help)),
        ("no_cache", bool, typer.Option(False, "--no-cache", help=cache_help)),
        ("as_json", bool, typer.Option(False, "--json", help="Print the result as JSON.")),
    ]
    names = [name for name, _, _ in shared]

    def decorate(func):
        own = [p for p in inspect.signature(func).parameters.values() if p.name != "opts"]
        params = own + [inspect.Parameter(n, inspect.Parameter.KEYWORD_ONLY, default=d, annotation=t)
                        for n, t, d in shared]

        @functools.wraps(func)
        def command(**kwargs):
            opts = _Shared(**{n: kwargs.pop(n) for n in names})
            return func(**kwargs, opts=opts)

        command.__signature__ = inspect.Signature(params, return_annotation=None)
        command.__annotations__ = {p.name: p.annotation for p in params}
        return command

    return decorate


@app.command("evaluate")
@_shared_options("Also write each item's verdict and score to this CSV.", "Recompute even if a cached result exists.")
def judges_evaluate(
    judge: str = _J_JUDGE,
    study: str = typer.Option(None, "--study", help="A stored static study (name or id)."),
    responses: str = typer.Option(None, "--responses", help="A Zhang ground-truth JSON file (word.json, caption.json, ...)."),
    task: str = typer.Option(None, "--task", help="word | caption | object | color (with --responses; default: the file name)."),
    human_judges: str = typer.Option(None, "--human-judges", help="Zhang's human-judge trials of the same items (word task), for the side-by-side comparison."),
    db: str = typer.Option(None, "--db", help="Database URL (with --study; default $DATABASE_URL or ./turinglab.db)."),
    features: str = typer.Option(None, "--features", help="Feature sets, comma separated (word: sqdiff,glove,cosine,"
                                 "lexical,minilm-sqdiff; text: minilm,mean,lexical; images: cnn,histogram; "
                                 "conversations: turns)."),
    folds: int = typer.Option(10, "--folds", help="Cross-validation folds."),
    group_by_stimulus: bool = typer.Option(False, "--group-by-stimulus", help="No stimulus in both train and test folds."),
    seed: int = typer.Option(42, "--seed", help="Seed of the folds and groups (and of the LLM)."),
    repeats: int = typer.Option(1, "--repeats", help="Repeat the cross-validation with seeds seed, seed+1, ..."),
    alpha: float = typer.Option(0.05, "--alpha", help="1 - confidence level of the intervals."),
    images: str = typer.Option(None, "--images", help="colour, object, caption: the folder of the images (files named "
                               "as the image ids), for the 'cnn' and 'histogram' image features."),
    protocol: str = typer.Option(None, "--protocol", help="zhang: the paper's judge, features, folds, balancing and "
                                 "seeds for the task, as far as the paper states them; zhang-code: the authors' "
                                 "benchmark code (svm_judge.py: SVC(), their data sets and folds) per machine agent "
                                 "(see docs/judges.md)."),
    agent: list[str] = typer.Option(None, "--agent", help="zhang-code: judge only this machine agent (repeatable; "
                                    "default every machine agent in turn)."),
    opts: _Shared = None,
) -> None:
    """Evaluate one AI judge on static items, beside the human judges of the same items."""
    if protocol not in (None, "zhang", "zhang-code"):
        fail(f"--protocol must be zhang (the paper's text) or zhang-code (the authors' code), got {protocol!r}")
    if judge is None and protocol is None:
        fail("give --judge (linear-svm | svm | rbf-svc | rf | tfidf-lr | conversation | llm) or --protocol zhang")
    if agent and protocol != "zhang-code":
        fail("--agent applies to --protocol zhang-code only")
    items, trials, source = _judges_items(study, responses, task, human_judges, db)
    if protocol == "zhang-code":
        if judge not in (None, "rbf-svc"):
            fail(f"--protocol zhang-code runs the authors' judge (rbf-svc); drop --judge {judge}")
        _zhang_code(items, features, images, tuple(agent or ()), alpha, source, opts)
        return
    if protocol == "zhang":
        from turinglab.judges.errors import FeaturesError
        from turinglab.judges.zhang import features_for, preset

        try:
            p = preset(items["task"].iloc[0])
        except FeaturesError as exc:
            fail(str(exc))
        judge = judge or p.judge
        from turinglab.plugins.manager import ai_judges

        if judge in ai_judges() and not ai_judges()[judge].reads_text:  # a judge on feature sets
            features = features or features_for(items["task"].iloc[0], images)
        folds, repeats = p.folds, p.repeats
    cfg = _judges_config(judge, features, folds, group_by_stimulus, seed, repeats, alpha, opts)
    cfg.protocol = protocol
    if images is not None:
        from pathlib import Path

        if not Path(images).is_dir():
            fail(f"--images {images}: no such folder; give the folder holding the colour task's images")
        cfg.images = images
    _judges_run(items, trials, cfg, source, opts)


def _zhang_code(items, features, images, agents, alpha, source: str, opts: _Shared) -> None:
    import json

    from turinglab.judges.errors import FeaturesError
    from turinglab.judges.items import ItemsError
    from turinglab.judges.show import render_code
    from turinglab.judges.vectors import VectorsError
    from turinglab.judges.zhangcode import CodeConfig, CodeProtocolError, evaluate_code

    if images is not None:
        from pathlib import Path

        if not Path(images).is_dir():
            fail(f"--images {images}: no such folder; give the folder holding the task's images")
    try:
        res = evaluate_code(items, CodeConfig(features=features, agents=agents, images=images, alpha=alpha),
                            use_cache=not opts.no_cache, source=source)
    except (CodeProtocolError, FeaturesError, ItemsError, VectorsError) as exc:
        fail(str(exc))
    if opts.as_json:
        print(json.dumps(res, indent=2))
        return
    render_code(console, res)


@app.command("run")
@_shared_options("Also write each transcript's verdict to this CSV.", "Ask the model again even if answers are cached.")
def judges_run(
    judge: str = typer.Option("llm", "--judge", help="llm (the inverted test; trained judges need static items)."),
    from_study: str = typer.Option(..., "--from-study", help="A live study whose stored transcripts the judge reads."),
    db: str = typer.Option(None, "--db", help="Database URL (default: $DATABASE_URL or ./turinglab.db)."),
    seed: int = typer.Option(42, "--seed", help="Seed of the sample and the LLM."),
    alpha: float = typer.Option(0.05, "--alpha", help="1 - confidence level of the intervals."),
    opts: _Shared = None,
) -> None:
    """The inverted Turing test: an LLM judges stored live games from the transcripts the interrogators saw."""
    if judge != "llm":
        fail(f"`judges run` takes --judge llm (got {judge!r}); trained judges: `judges evaluate`")
    cfg = _judges_config("llm", None, 10, False, seed, 1, alpha, opts)
    loaded = analysis_load(db, from_study)
    from turinglab.judges.live import from_loaded

    items, trials = from_loaded(loaded)
    _judges_run(items, trials, cfg, f"live study {loaded.study_name}", opts)

@app.command("fixations")
def judges_fixations(
    fv: str = typer.Option(..., "--fv", help="Zhang's free-viewing scanpaths (fv.json: image -> records with 'response' fixations)."),
    judge: str = typer.Option("svm", "--judge", help="svm (scikit-learn's default kernel) | linear-svm."),
    folds: int = typer.Option(10, "--folds", help="Cross-validation folds (the paper: 10)."),
    seeds: int = typer.Option(5, "--seeds", help="Repeats with seeds 42, 43, ... (the paper: 5)."),
    fixations: int = typer.Option(10, "--fixations", help="The cut: first N fixations; shorter scanpaths are dropped."),
    as_json: bool = typer.Option(False, "--json", help="Print the result as JSON."),
) -> None:
    """The paper's free-viewing AI judge: first 10 fixations, short scanpaths dropped and counted."""
    import json
    from pathlib import Path

    from turinglab.judges.zhang import scanpath_judge

    if folds < 2 or seeds < 1 or fixations < 1:
        fail("--folds must be at least 2, --seeds and --fixations at least 1")
    try:
        data = json.loads(Path(fv).read_text())
        res = scanpath_judge(data, judge, folds, seeds, fixations)
    except OSError as exc:
        fail(f"--fv {fv}: cannot read it ({exc})")
    except ValueError as exc:  # JSON errors and JudgeError
        fail(f"--fv {fv}: {exc}")
    except (KeyError, TypeError) as exc:
        fail(f"--fv {fv}: not Zhang's fv.json form (image -> records with response and groundtruth): {exc}")
    if as_json:
        print(json.dumps(res, indent=2))
        return
    console.print(f"{res['kept']} scanpaths kept, {res['dropped']} dropped (fewer than {fixations} fixations: "
                  f"{res['dropped_by_agent']}); {res['judge']}, {folds} folds, seeds {res['seeds']}: mean accuracy "
                  f"{100 * res['mean_accuracy']:.1f} % (per seed {[round(100 * a, 1) for a in res['per_seed_accuracy']]})"
                  f"\n{res['note']}", highlight=False, markup=False)


@app.command("figure")
def judges_figure(
    results: list[str] = typer.Argument(..., help="JSON results of `judges evaluate/run --json`."),
    out: str = typer.Option(..., "--out", help="Where to write the figure (.png or .svg)."),
) -> None:
    """Draw each judge's balanced accuracy with its interval beside the human judges."""
    import json
    from pathlib import Path

    if not out.endswith((".png", ".svg")):
        fail(f"--out must end in .png or .svg, got {out!r}")
    loaded = []
    for p in results:
        try:
            loaded.append(json.loads(Path(p).read_text()))
        except (OSError, ValueError) as exc:
            fail(f"{p}: not a readable judges result ({exc})")
        if "balanced_accuracy_ci" not in loaded[-1]:
            fail(f"{p}: not a judges result (no balanced_accuracy_ci); make it with `judges evaluate --json`")
    from turinglab.analysis.static.judges_figure import detectability

    fig = detectability(loaded)
    Path(out).write_bytes(fig.png) if out.endswith(".png") else Path(out).write_text(fig.svg)
    console.print(f"wrote {out}", markup=False)
