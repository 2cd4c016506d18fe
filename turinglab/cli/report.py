"""`turinglab report`, `export`, `demo-data` and `tag`: analysing stored studies."""

from __future__ import annotations

from pathlib import Path

import typer

from turinglab.cli.common import analysis_load, console, err_console, fail, static_exclude, static_store


app = typer.Typer()  # root commands


def _analysis_options(loaded, exclude: list[str] | None, alpha: float):
    from turinglab.analysis.live.core import Options

    if exclude is None:  # the study's own exclusion flags
        flags = tuple(f for f in loaded.exclusions if "flag_" + f in loaded.judgements.columns)
    else:
        flags = () if [e for e in exclude if e] in ([], ["none"]) else tuple(exclude)
    if not 0 < alpha < 1:
        fail(f"--alpha must be between 0 and 1 (e.g. 0.05), got {alpha}")
    return Options(alpha=alpha, exclude=flags, pass_decisions=getattr(loaded, "pass_decisions", "holm"),
                   language=getattr(loaded, "language", "en"),
                   closed_criterion=getattr(loaded, "closed_criterion", True))


def _read_prereg(path: str | None):  # noqa: ANN202 - the plan dict or None
    if path is None:
        return None
    from turinglab.analysis.report.prereg import read_plan

    try:
        return read_plan(path)
    except ValueError as exc:
        fail(str(exc))


def _check(kind: str, plan: dict, path: str, a, study, settings: dict) -> dict:  # noqa: ANN001
    from turinglab.analysis.report import prereg_check

    try:
        return getattr(prereg_check, f"{kind}_check")(plan, Path(path).name, a, study, settings)
    except ValueError as exc:
        fail(str(exc))


def _static_report(db: str | None, study: str | None, out: str, alpha: float, fmt: str,
                   exclude: list[str] | None = None, prereg: str | None = None,
                   plan: dict | None = None) -> None:
    from turinglab.analysis.static.report import analyse_stored, write_static_report
    from turinglab.judges.static import cached_results
    from turinglab.store import StoreError

    if not 0 < alpha < 1:
        fail(f"--alpha must be between 0 and 1 (e.g. 0.05), got {alpha}")
    flags = static_exclude(exclude)
    store = static_store(db, write=False)
    try:
        info, a = analyse_stored(store, study, alpha, flags)
    except (StoreError, ValueError) as exc:
        fail(str(exc))
    finally:
        store.close()
    if plan is not None:
        from turinglab.analysis.demo.prereg_dry import static_settings

        a.prereg = _check("static", plan, prereg, a, info.study, static_settings(alpha))
    if fmt == "json":  # every number, keyed as the static export's rebuild.py checks them
        from pathlib import Path

        from turinglab.analysis.export.static_export import render_json

        Path(out).write_text(render_json(info, a), encoding="utf-8")
        console.print(f"wrote {out} (static study {info.name})", markup=False, highlight=False)
        return
    paths = write_static_report(a, out, fmt, ai_results=cached_results(db, info.name))
    console.print(f"wrote {paths[0]} (static study {info.name}: {a.n_trials} trials, {a.n_judges} judges; "
                  f"{a.sensitivity['judges_flagged']} judges flagged"
                  + (f"; topic rule: {a.topic['judges_flagged']} judges and {a.topic['topic_wrong']} trials flagged"
                     if a.topic else "") + ", none removed)", markup=False, highlight=False,
                  soft_wrap=True)


@app.command()
def report(
    out: str = typer.Option(..., "--out", help="Where to write the report (e.g. report.html)."),
    db: str = typer.Option(None, "--db", help="Database URL (default: $DATABASE_URL or ./turinglab.db)."),
    study: str = typer.Option(None, "--study", help="Study id or name (needed when there are several)."),
    exclude: list[str] = typer.Option(None, "--exclude", help="Exclusion flag to apply (repeatable; 'none' for none). Default: the study's (a static study: withdrawn)."),
    alpha: float = typer.Option(0.05, "--alpha", help="Significance level."),
    fmt: str = typer.Option("html", "--format", help="html (one self-contained file), md (+ a figures folder) or json (every number, keyed)."),
    include_bots: bool = typer.Option(False, "--include-bots", help="Analyse games flagged bot too (by default they are only in the leaderboard)."),
    audit: bool = typer.Option(True, "--audit/--no-audit", help="Include the blinding audit (`turinglab audit blinding`)."),
    audit_max_games: int = typer.Option(2000, "--audit-max-games", help="Audit a seeded sample of whole interrogators up to this many games (0: every game; the report says which)."),
    prereg: str = typer.Option(None, "--prereg", help="A pre-registration (`turinglab preregister`): every deviation from it is listed at the top."),
) -> None:
    """Analyse a study's games and write the report (tables, figures, methods)."""
    if fmt not in ("html", "md", "json"):
        fail(f"--format must be html, md or json, got {fmt!r}")
    from turinglab.store.inspect import names_static_study

    plan = _read_prereg(prereg)  # a bad file fails before any work
    if names_static_study(db, study):
        return _static_report(db, study, out, alpha, fmt, exclude, prereg, plan)
    from rich.progress import Progress  # the live analysis' imports (sklearn among them): not for static reports

    from turinglab.analysis.live.core import analyse
    from turinglab.analysis.report.report import write_report

    loaded = analysis_load(db, study)
    opt = _analysis_options(loaded, exclude, alpha)
    opt.include_bots = include_bots
    steps = ["prepare", "success rates", "comparisons", "criteria", "accuracy", "regressions", "bootstrap", "timing",
             "further analyses"]
    with Progress(console=err_console, transient=True) as bar:
        task = bar.add_task("analysing", total=len(steps) + 1)
        try:
            a = analyse(loaded.judgements, loaded.participants, opt, tags=loaded.tags,
                        progress=lambda name: bar.update(task, advance=1, description=name),
                        witnesses=loaded.witness_specs, messages=loaded.messages)
        except ValueError as exc:
            fail(str(exc))
        if audit:
            from turinglab.analysis.audit.audit import audit_blinding

            bar.update(task, description="blinding audit")
            try:
                a.audit = audit_blinding(db, loaded.study_id, alpha=alpha, include_bots=include_bots,
                                         max_games=audit_max_games or None)
            except ValueError as exc:  # too few games of a kind: the report says nothing of it
                err_console.print(f"blinding audit left out: {exc}", markup=False)
        if loaded.beliefs is not None and len(loaded.beliefs):
            from turinglab.analysis.live.belief import analyse_beliefs

            a.beliefs = analyse_beliefs(a.judgements, loaded.messages, loaded.beliefs, loaded.tags, alpha=alpha)
        if plan is not None:
            a.prereg = _prereg_live(plan, prereg, a, db, study, exclude, loaded, audit, audit_max_games, alpha, include_bots)
        bar.update(task, description="figures and report")
        paths = write_report(a, out, fmt)
        bar.update(task, advance=1)
    console.print(f"wrote {paths[0]} ({a.n_games} games, exclusions: {', '.join(opt.exclude) or 'none'})")


def _prereg_live(plan, path, a, db, study, exclude, loaded, audit, audit_max_games, alpha, include_bots) -> dict:  # noqa: ANN001
    from turinglab.analysis.demo.prereg_dry import live_settings
    from turinglab.analysis.live.load import read_study as open_study

    with open_study(db, study) as (_store, info):
        cfg = info.study
    excl = list(loaded.exclusions) if exclude is None else list(a.options.exclude)
    settings = live_settings(cfg, alpha, audit, audit_max_games, exclude=excl, include_bots=include_bots)
    return _check("live", plan, path, a, cfg, settings)


@app.command("export")
def export_cmd(
    out: str = typer.Option(..., "--out", help="New directory for the dataset."),
    db: str = typer.Option(None, "--db", help="Database URL (default: $DATABASE_URL or ./turinglab.db)."),
    study: str = typer.Option(None, "--study", help="Study id or name."),
    redact: bool = typer.Option(False, "--redact", help="Replace personal data in chat text, reasons and free-text "
                                "answers with [NAME], [PLACE], [EMAIL], [PHONE], [HANDLE], [NUMBER]; the review "
                                "file (every redaction with context) is written beside --out."),
    redactions: str = typer.Option(None, "--redactions", help="A reviewed review file: its keep/redact decisions "
                                   "apply (implies --redact)."),
    exclude: list[str] = typer.Option(None, "--exclude", help="A static study: the trials' exclusion flag "
                                      "(default withdrawn: a judge who withdrew is left out; 'none' keeps them). "
                                      "A live export keeps every game, with its flags."),
) -> None:
    """Export a study as a pseudonymous dataset (CSV + Parquet, codebook, report, rebuild.py); a static
    study as its trials and judges (CSV), its numbers and rebuild.py."""
    from turinglab.analysis.export.export import export
    from turinglab.store.inspect import names_static_study

    if names_static_study(db, study):
        return _static_export(db, study, out, exclude)
    if exclude is not None:
        fail("--exclude is for a static study's export; a live export keeps every game with its flags "
             "(the report and rebuild.py apply the study's exclusions)")

    reviewed = None
    if redactions is not None:
        from turinglab.analysis.export.redaction import read_review

        try:
            reviewed = read_review(redactions)
        except (OSError, ValueError) as exc:
            fail(f"cannot use the review file: {exc}")
    loaded = analysis_load(db, study)
    try:
        res = export(loaded, out, key=_export_key(db), redact=redact or reviewed is not None, reviewed=reviewed)
    except FileExistsError as exc:
        fail(str(exc))
    rows = ", ".join(f"{k} {v}" for k, v in res["rows"].items())
    console.print(f"wrote {res['out']} ({rows}); check it with: python {out}/rebuild.py")
    if redact or reviewed is not None:
        from turinglab.analysis.export.redaction import review_path

        console.print(f"redactions listed in {review_path(Path(out))} (holds the original words: review it, "
                      "never share it)", highlight=False)


def _static_export(db: str | None, study: str | None, out: str, exclude: list[str] | None = None) -> None:
    from turinglab.analysis.export.static_export import export_static
    from turinglab.store import StoreError

    flags = static_exclude(exclude)
    store = static_store(db, write=False)
    try:
        res = export_static(store, study, out, key=_export_key(db), exclude=flags)
    except (FileExistsError, StoreError, ValueError) as exc:
        fail(str(exc))
    finally:
        store.close()
    rows = ", ".join(f"{k} {v}" for k, v in res["rows"].items())
    console.print(f"wrote {res['out']} (static study {res['study']}: {rows}); check it with: python {out}/rebuild.py")


def _export_key(db: str | None) -> bytes:
    """The export key of the database (issue 24): $TURINGLAB_EXPORT_KEY, else kept in the database."""
    from turinglab.analysis.export.pseudonyms import export_key
    from turinglab.store import Store
    from turinglab.store.db import existing_database

    with Store(existing_database(db)) as store:
        return export_key(store)


@app.command("export-payment-ids")
def export_payment_ids(
    out: str = typer.Option(..., "--out", help="New CSV file for the RAW Prolific ids (for payment only; never share it)."),
    db: str = typer.Option(None, "--db", help="Database URL (default: $DATABASE_URL or ./turinglab.db)."),
    study: str = typer.Option(None, "--study", help="Study id or name."),
) -> None:
    """Write the RAW Prolific participant/study/session ids beside each participant's pseudonym."""
    from turinglab.analysis.export.export import payment_ids
    from turinglab.store import Store
    from turinglab.store.db import existing_database

    loaded = analysis_load(db, study)
    with Store(existing_database(db)) as store:
        try:
            n = payment_ids(store, out, loaded.study_id)
        except FileExistsError as exc:
            fail(str(exc))
    console.print(f"wrote {out}: RAW ids of {n} participants, for payment only; keep it out of the dataset and of git",
                  highlight=False)


@app.command("demo-data")
def demo_data(
    db: str = typer.Option(None, "--db", help="Database URL (default: $DATABASE_URL or ./turinglab.db)."),
    games: int = typer.Option(200, "--games", help="Number of games to play."),
    seed: int = typer.Option(0, "--seed", help="Random seed."),
    three_player: bool = typer.Option(False, "--three-player", help="Three-player games instead of two-player."),
    static: bool = typer.Option(False, "--static", help="Instead: a playable static study for each of Zhang's six tasks."),
    images_dir: str = typer.Option("./turinglab-static-images", "--images-dir", help="--static: where to put the images."),
    zhang_data: str = typer.Option(None, "--zhang-data", help="--static: folder of Zhang's data (word.json...)."),
    leak: str = typer.Option(None, "--leak", help="A study whose blinding leaks on purpose: late-fallback (AI replies "
                             "late now and then) or no-typing (AI shows no typing indicator); `turinglab audit blinding` catches it."),
    beliefs: bool = typer.Option(False, "--beliefs", help="Belief tracking on: interrogators move the belief slider after most "
                                 "replies, so the report shows belief trajectories and time to detection."),
) -> None:
    """Play synthetic games with known true rates through the real engine and store (or, with
    --static, build a static study per task from shipped images and Zhang's real data)."""
    from rich.progress import Progress

    if static:
        return _demo_static(db, images_dir, zhang_data, seed)

    from turinglab.analysis.demo.live import LEAKS, TAG_SHARE, DemoSpec, generate

    if games < 1:
        fail(f"--games must be at least 1, got {games}")
    if leak is not None and leak not in LEAKS:
        fail(f"--leak must be one of {', '.join(LEAKS)}, got {leak!r}")
    spec = DemoSpec(n_games=games, seed=seed, format="three-player" if three_player else "two-player",
                    tag_share=TAG_SHARE, leak=leak, beliefs=beliefs)
    with Progress(console=err_console, transient=True) as bar:
        task = bar.add_task("playing demo games", total=games)
        res = generate(db, spec, progress=lambda i: bar.update(task, completed=i))
    rates = ", ".join(f"{k} {v:.2f}" for k, v in res["true_rates"].items())
    human = "" if three_player else f", Human {res['human_rate']:.2f}"
    leaked = f"; leaks on purpose: {LEAKS[leak]}" if leak else ""
    moved = "; belief slider moves stored" if beliefs else ""
    console.print(f"study {res['study_id']} ({res['study']}): {games} games; true rates judged human: {rates}{human}{leaked}{moved}")


def _demo_static(db: str | None, images_dir: str, zhang_data: str | None, seed: int) -> None:
    from turinglab.analysis.demo.static import build_all
    from turinglab.statictests.zhang import ImportProblem
    from turinglab.store import StoreError

    store = static_store(db, write=True)
    try:
        made = build_all(store, images_dir, zhang_data, seed)
    except (FileNotFoundError, ImportProblem, StoreError) as exc:
        fail(str(exc))
    finally:
        store.close()
    for m in made:
        console.print(f"{m['study']} (id {m['id']}): {m['items']} items on {m['stimuli']} stimuli, "
                      f"{m['session_items']} per judge; {m['note']}", markup=False, highlight=False, soft_wrap=True)
    console.print(f"images and their licences: {images_dir}/LICENSES.txt", markup=False, soft_wrap=True)


@app.command()
def tag(
    target: str = typer.Argument(..., help="GAME_ID to tag, or 'agreement' (Cohen's kappa), or 'list' (the codes)."),
    taxonomy: str = typer.Option("strategy", "--taxonomy", help="strategy (J&B appendix H) or reason (appendix G)."),
    category: str = typer.Option(None, "--category", help="Sub-category code, e.g. 1a."),
    tagger: str = typer.Option(None, "--tagger", help="Your name (or a pseudonym)."),
    db: str = typer.Option(None, "--db", help="Database URL."),
    a: str = typer.Option(None, "--a", help="agreement: first tagger (default: the only two)."),
    b: str = typer.Option(None, "--b", help="agreement: second tagger."),
    level: str = typer.Option("sub", "--level", help="agreement: sub (codes like 1a) or top (1..6)."),
) -> None:
    """Tag a game with a strategy or reason category; `tag agreement` gives Cohen's kappa."""
    from turinglab.analysis.live import taxonomy as tx

    if taxonomy not in tx.FILES:
        fail(f"--taxonomy must be one of {', '.join(tx.FILES)}, got {taxonomy!r}")
    if target == "list":
        for code, name in tx.codes(taxonomy).items():
            console.print(f"{code:4} {name}", markup=False, highlight=False)
        return
    from turinglab.store import Store, StoreError
    from turinglab.store.api import UnknownId
    from turinglab.store.db import existing_database

    try:  # `tag agreement` only reads: it neither creates nor migrates the database
        store = Store(existing_database(db), upgrade=target != "agreement")
    except StoreError as exc:
        fail(str(exc))
    try:
        if target == "agreement":
            try:
                r = tx.stored_agreement(store, taxonomy, a, b, level)
            except ValueError as exc:
                fail(str(exc))
            console.print(f"{taxonomy} ({r['level']}): {r['tagger_a']} vs {r['tagger_b']} on {r['games']} games: "
                          f"agreement {r['agreement']:.3f}, Cohen's kappa {r['kappa']:.3f}", markup=False)
            return
        if not category or not tagger:
            fail("tagging needs --category CODE and --tagger NAME (see `turinglab tag list --taxonomy ...`)")
        try:
            code = tx.check(taxonomy, category)
            store.add_tag(target, tagger, taxonomy, code)
        except ValueError as exc:
            fail(str(exc))
        except UnknownId as exc:
            fail(f"{exc}; list games with `turinglab db games`")
        console.print(f"tagged {target}: {taxonomy} {code} ({tx.codes(taxonomy)[code]}) by {tagger}", markup=False)
    finally:
        store.close()
