"""`turinglab chat`, `turinglab witness` (list, show, probe) and `turinglab bots`."""

from __future__ import annotations

import sys

import typer

from turinglab.cli.common import DB_HELP, console, err_console, fail, read_study


chat_app = typer.Typer()  # root commands, registered in this order: chat ... bots
bots_app = typer.Typer()


@chat_app.command()
def chat(
    witness: str = typer.Option("eliza", "--witness", "-w", help="witness name or codename (e.g. eliza)"),
    study: str | None = typer.Option(None, "--study", help="study YAML file (default: preset jones-bergen-2023)"),
    db: str | None = typer.Option(None, "--db", help=DB_HELP),
    no_delay: bool = typer.Option(False, "--no-delay", help="show replies at once (no human-like delay)"),
    seed: int | None = typer.Option(None, "--seed", help="seed for the witness and the delays"),
    new_version: bool = typer.Option(
        False, "--new-version", help="if the study already has games under another config, store it as a new version"
    ),
) -> None:
    """Play a two-player game in the terminal as the interrogator; the game is stored.

    With --no-delay and input from a pipe, reads one interrogator message per line and prints
    one witness reply per line (the game id goes to stderr); a line
    `/verdict human|ai CONFIDENCE [reason]` gives the verdict.
    """
    from turinglab.game.study_file import load_preset, load_study
    from turinglab.cli.chat_terminal import ChatError, run_chat
    from turinglab.store import StoreError

    spec = read_study(load_study, study) if study else read_study(load_preset, "jones-bergen-2023")
    script = no_delay and not sys.stdin.isatty()
    try:
        # the default preset may change between releases: then it simply becomes a new version
        game_id = run_chat(witness, spec, db, delay=not no_delay, seed=seed, script=script,
                           new_version=new_version or study is None)
    except (ChatError, StoreError) as exc:
        fail(str(exc))
    except KeyboardInterrupt:
        raise typer.Exit(130) from None
    if script:
        print(game_id, file=sys.stderr)


app = typer.Typer(no_args_is_help=True, help="The named witnesses: list them, show one's settings and prompt.")


@app.command("list")
def witness_list(as_json: bool = typer.Option(False, "--json", help="print JSON"),
                 kinds: bool = typer.Option(False, "--kinds", help="list the witness kinds (`kind:` of a study "
                                            "file) and the plugins giving them, instead of the named witnesses")) -> None:
    """List the witnesses `--witness NAME` accepts (LLM personas need OPENAI_API_KEY or OPENAI_BASE_URL),
    then the witness kinds of the installed plugins."""
    import json

    from rich.table import Table

    from turinglab.witnesses.describe import kind_rows, rows
    from turinglab.witnesses.registry import available, llm_configured

    table_rows = kind_rows() if kinds else rows(available())
    if as_json:
        print(json.dumps(table_rows, indent=2))
        return
    if not kinds:
        table = Table("name", "codename", "kind", "model", "prompt")
        for r in table_rows:
            table.add_row(*(r[k] for k in ("name", "codename", "kind", "model", "prompt")))
        console.print(table)
    table = Table("kind", "plugin", "options", "description", title="witness kinds")
    for r in kind_rows():
        table.add_row(r["kind"], r["plugin"], ", ".join(r["options"]) or "-", r["description"])
    console.print(table)
    if not llm_configured():
        err_console.print("(set OPENAI_API_KEY or OPENAI_BASE_URL to add the LLM personas young, baseline, ai-aware)",
                          markup=False, highlight=False)


@app.command("show")
def witness_show(
    name: str = typer.Argument(..., help="witness name or codename (see `turinglab witness list`)"),
    as_json: bool = typer.Option(False, "--json", help="print JSON (spec, model, sample prompt)"),
    events: str | None = typer.Option(None, "--events", help="YAML file of recent events {date, text} to fill in"),
) -> None:
    """Show a witness's settings and its prompt filled for a sample game starting now."""
    import json

    from turinglab.witnesses.describe import show
    from turinglab.witnesses.persona import PersonaError
    from turinglab.witnesses.registry import UnknownWitness, resolve

    try:
        info = show(resolve(name), events_path=events)
    except (UnknownWitness, PersonaError) as exc:
        fail(str(exc))
    if as_json:
        print(json.dumps(info, ensure_ascii=False, indent=2))
        return
    spec = info["spec"]
    console.print(f"{name}: codename {spec['codename']}, kind {spec['kind']}, {info['model']}",
                  markup=False, highlight=False, soft_wrap=True)
    t = spec["timing"]
    console.print(f"timing: {t['base_s']} + {t['s_per_char']}*chars + Gamma({t['gamma_shape']}, {t['gamma_scale']})"
                  f" s; fallback: {spec['fallback']}", markup=False, highlight=False)
    if "prompt" in info:
        console.print(f"--- prompt for a sample game (now {info['sample_game']['now']}) ---", markup=False)
        print(info["prompt"])


@app.command("probe")
def witness_probe(
    name: str = typer.Argument(..., help="witness name or codename (a shipped one, or one of --study's)"),
    study: str | None = typer.Option(None, "--study", help="study YAML file whose witness NAME is probed"),
    games: int = typer.Option(20, "--games", min=1, help="bot games to play"),
    turns: int = typer.Option(5, "--turns", min=1, help="interrogator messages per game"),
    seed: int = typer.Option(0, "--seed", min=0, help="first game's seed (games use seed, seed+1, ...; batches add up)"),
    strategy: str = typer.Option("default", "--strategy", help="the scripted interrogator's: default or adversarial "
                                 "(code, arithmetic, letters, translation, injection, strange, accusation)"),
    no_judge: bool = typer.Option(False, "--no-judge", help="skip the LLM judge (no judged-human rate)"),
    db: str | None = typer.Option(None, "--db", help="a store whose human witnesses' replies are compared"),
    as_json: bool = typer.Option(False, "--json", help="print JSON"),
    save: str | None = typer.Option(None, "--save", help="write every reply (as generated, regenerated, shown) "
                                    "and the judge's verdicts to this JSON file"),
    questions: str | None = typer.Option(None, "--questions", help="a tab-separated file (family, message) asked "
                                         "in order, --turns per game, instead of the scripted interrogator's; "
                                         "e.g. benchmarks/persona/heldout/battery.tsv"),
    start: int = typer.Option(0, "--from", min=0, help="with --questions: the first message asked (0-based), so "
                              "that runs in turn or side by side cover different parts of the file"),
) -> None:
    """Bot games against one witness: persona breaks, refusals, blocked replies, lengths, judged-human rate."""
    import json

    from rich.progress import Progress

    from turinglab.bots.interrogator import KINDS
    from turinglab.bots.probe import probe
    from turinglab.witnesses.registry import UnknownWitness, resolve

    if strategy not in KINDS:
        fail(f"--strategy must be one of {', '.join(KINDS)}, got {strategy!r}")

    battery = None
    if questions:
        from turinglab.bots.interrogator import BatteryError, load_battery

        try:
            battery = load_battery(questions)
        except BatteryError as exc:
            fail(f"--questions {exc}")
        if start >= len(battery):
            fail(f"--from {start}: {questions} has only {len(battery)} messages")
        battery = battery[start:]
    elif start:
        fail("--from needs --questions")
    filter_words: tuple[str, ...] = ()
    max_chars, rules, draws = 300, None, False
    if study:
        from turinglab.game.study_file import load_study

        s = read_study(load_study, study)
        found = [w for w in s.witnesses if w.codename.lower() == name.lower()]
        if not found:
            fail(f"study {study} has no witness {name!r}; its witnesses: {', '.join(w.codename for w in s.witnesses)}")
        spec, filter_words, max_chars, rules = found[0], tuple(s.content_filter), s.rules.max_chars, s.rules
        draws = s.draws_persona(spec)  # per-game personas as the study's server games draw them
    else:
        try:
            spec = resolve(name)
        except UnknownWitness as exc:
            fail(str(exc))
    judge = None
    if not no_judge:
        from turinglab.judges.llm import ModelSpec, openai_chat

        judge = openai_chat(ModelSpec(max_tokens=24))
    store = None
    if db:
        from turinglab.store.api import Store

        store = Store(db)

    def write(res, final: bool = True) -> None:  # noqa: ANN001 - a ProbeResult
        from pathlib import Path

        try:
            Path(save).write_text(json.dumps({"summary": res.to_json(), "verdicts": res.verdicts, "replies": res.records,
                                              "personas": res.personas, "complete": final},
                                             ensure_ascii=False, indent=1), encoding="utf-8")
        except OSError as exc:
            fail(f"--save {save}: cannot write ({exc.strerror}); give a writable path")

    with Progress(console=err_console, transient=True) as bar:
        task = bar.add_task(f"probing {spec.codename}", total=games)
        res = probe(spec, games=games, turns=turns, max_chars=max_chars, seed=seed, judge=judge, content_filter=filter_words, rules=rules,
                    store=store, progress=lambda k: bar.update(task, completed=k), strategy=strategy,
                    questions=battery, draw_persona=draws,
                    after_game=(lambda r: write(r, final=False)) if save else None)  # a long run is kept as it goes
    out = res.to_json()
    if save:
        write(res)
    if as_json:
        print(json.dumps(out, ensure_ascii=False, indent=2))
        return
    jh = "skipped" if out["judged_human_rate"] is None else f"{out['judged_human_rate']:.0%} of {res.judged}"
    console.print(f"{spec.codename}: {res.replies} replies in {games} games; persona breaks {res.persona_breaks} "
                  f"({res.persona_break_rate:.1%}) as generated, {res.shown_breaks} ({res.shown_break_rate:.1%}) "
                  f"after the guard ({res.regenerated} regenerated, {res.guard_fallbacks} answered by the fallback, "
                  f"{res.late_guarded} of them later than designed; {res.late} late in all); blocked {res.blocked}; refusals {res.refusals}; fallbacks {res.fallbacks}; "
                  f"judged human {jh}", markup=False, highlight=False, soft_wrap=True)
    for k in ("lengths", "latencies_s", "guarded_elapsed_s", "human_lengths", "human_delays_s"):
        if out[k]:
            console.print(f"{k}: {out[k]}", markup=False, highlight=False)
    for ex in res.examples[:10]:
        console.print(f"  break: {ex['question']!r} -> {ex['reply']!r} ({ex['why']})", markup=False, highlight=False)


@bots_app.command()
def bots(
    study: str = typer.Option(None, "--study", help="Study YAML file (default: the server's default study)."),
    games: int = typer.Option(10, "--games", min=1, help="bot participants to play (each plays one game)"),
    interrogator: str = typer.Option("scripted", "--interrogator", help="scripted or llm (the local model)"),
    url: str = typer.Option(None, "--url", help="a running server (set the same $TURINGLAB_BOT_TOKEN on both); "
                            "default: start one here"),
    db: str = typer.Option(None, "--db", help="database of the server started here (default as serve)"),
    parallel: int = typer.Option(4, "--parallel", min=1, help="bots playing at once"),
    turns: int = typer.Option(5, "--turns", min=1, help="interrogator messages per game"),
    strategy: str = typer.Option("default", "--strategy", help="the scripted interrogator's: default or adversarial "
                                 "(code, arithmetic, letters, translation, injection, strange, accusation)"),
    seed: int = typer.Option(0, "--seed", min=0, help="first bot's seed (bots use seed, seed+1, ...)"),
    as_json: bool = typer.Option(False, "--json", help="print one JSON object per bot"),
) -> None:
    """Bots play the whole participant flow (consent, waiting room, game, verdict, survey) over HTTP and
    websockets; their games are stored with flags.bot = true (a pilot, or load), left out of analyses."""
    import asyncio
    import contextlib
    import dataclasses
    import json
    import os
    import secrets

    from rich.progress import Progress

    from turinglab.bots.interrogator import KINDS
    from turinglab.bots.play import LLMInterrogator, run_bots

    if interrogator not in ("scripted", "llm"):
        fail(f"--interrogator must be scripted or llm, got {interrogator!r}")
    if strategy not in KINDS:
        fail(f"--strategy must be one of {', '.join(KINDS)}, got {strategy!r}")
    if interrogator == "llm" and strategy != "default":
        fail("--strategy is the scripted interrogator's; drop it or use --interrogator scripted")
    llm = None
    if interrogator == "llm":
        from turinglab.judges.llm import ModelSpec, openai_chat

        llm = LLMInterrogator(openai_chat(ModelSpec(temperature=0.8, max_tokens=40)))
    token = os.environ.get("TURINGLAB_BOT_TOKEN") or None
    if url is None:
        from turinglab.server.app import WitnessSetupError, create_app
        from turinglab.server.defaults import default_study
        from turinglab.server.testing import serve_in_thread
        from turinglab.store.db import StoreError

        from turinglab.game.study_file import load_study

        chosen = read_study(load_study, study) if study else default_study()
        token = token or secrets.token_hex(16)  # known only to this process and its server
        try:
            web = create_app(chosen, db, bot_token=token, warm_up=True)
        except (StoreError, WitnessSetupError) as exc:
            fail(str(exc))
        server = serve_in_thread(web)
    else:
        if not token:
            fail("--url needs $TURINGLAB_BOT_TOKEN set to the token the server was started with "
                 "(TURINGLAB_BOT_TOKEN=... turinglab serve); without it the games would not be marked as bot games")
        server = contextlib.nullcontext(url.rstrip("/"))
    with server as base, Progress(console=err_console, transient=True) as bar:
        task = bar.add_task("bot games", total=games)
        results = asyncio.run(run_bots(base, token, games, parallel=parallel, turns=turns, llm=llm, seed=seed,
                                       strategy=strategy, progress=lambda r: bar.update(task, advance=1)))
    if as_json:
        for r in results:
            print(json.dumps(dataclasses.asdict(r)))
    bad = [r for r in results if r.error]
    played = {r.game_id for r in results if r.game_id}
    console.print(f"turinglab bots: {len(results) - len(bad)}/{len(results)} bots finished, {len(played)} games, "
                  f"{sum(r.role == 'interrogator' for r in results)} as interrogator, "
                  f"{sum(r.survey for r in results)} surveys", markup=False, highlight=False)
    for r in bad[:5]:
        console.print(f"  {r.pid}: {r.error}", markup=False, highlight=False)
    if bad:
        raise typer.Exit(1)
