"""The turinglab command line: one Typer app.

Each area owns one section below (marked `# === area ===`); keep commands thin and
put the work in the area's package.
"""

from __future__ import annotations

import sys
from typing import NoReturn

import typer
import typer.core
from rich.console import Console

class _Group(typer.core.TyperGroup):
    """The root group: a database problem in any command is one line on stderr (exit 2), not a traceback."""

    def invoke(self, ctx):  # noqa: ANN001, ANN201 - click.Context
        try:
            return super().invoke(ctx)
        except Exception as exc:
            # only a command that used the database can raise these: import them only then, so a
            # command that needs no database (`stats binom`) starts fast
            store_db = sys.modules.get("turinglab.store.db")
            sa_exc = sys.modules.get("sqlalchemy.exc")
            if store_db is not None and isinstance(exc, store_db.StoreError):  # bad URL, missing folder, ...
                fail(str(exc))
            if sa_exc is None or not isinstance(exc, sa_exc.DatabaseError):
                raise
            # a file that is not SQLite, a schema that is not there, no server
            orig = getattr(exc, "orig", None) or exc
            first = (str(orig).strip().splitlines() or [type(orig).__name__])[0]
            fail(f"cannot use the database: {first}; is the URL right (--db or $DATABASE_URL), the file a "
                 "turinglab database and its schema current (`turinglab db upgrade`)?")


app = typer.Typer(
    cls=_Group,
    no_args_is_help=True,
    add_completion=False,
    help="Run Turing tests (live imitation games and static tests) and analyse them correctly.",
)
console = Console()
err_console = Console(stderr=True)


def fail(message: str, code: int = 2) -> NoReturn:
    """Print one clear line on stderr and exit (2 = bad input)."""
    err_console.print(f"error: {message}", markup=False, highlight=False, soft_wrap=True)
    raise typer.Exit(code)


@app.callback()
def _root() -> None:
    """turinglab."""


@app.command()
def version() -> None:
    """Print the turinglab version."""
    from turinglab import __version__

    console.print(__version__)


# === stats ===

stats_app = typer.Typer(
    no_args_is_help=True,
    help="Exact tests, intervals and Turing-test pass criteria (Giunti 2025) from counts.",
)
app.add_typer(stats_app, name="stats")


def _stats_float(value: str, name: str, low: float = 0.0, high: float = 1.0) -> float:
    """A number strictly inside (low, high), or a one-line error."""
    try:
        x = float(value)
    except ValueError:
        fail(f"{name} must be a number, got {value!r}")
    if not low < x < high:
        fail(f"{name} must be strictly between {low:g} and {high:g}, got {value}")
    return x


def _stats_int(value: str, name: str) -> int:
    from turinglab.stats.binomial import MAX_N

    v = value.strip()
    if not (v.isascii() and v.isdigit()):
        fail(f"{name} must be a whole number >= 0, got {value!r}")
    if len(v) > 18 or int(v) > MAX_N:
        fail(f"{name} = {v} is too large: at most {MAX_N:.0e} games are supported")
    return int(v)


def _stats_counts(value: str, name: str) -> tuple[int, int]:
    """Parse 'K/N' (K successes of N games)."""
    import re

    from turinglab.stats.binomial import MAX_N

    m = re.fullmatch(r"\s*(\d+)\s*/\s*(\d+)\s*", value)
    if not m:
        fail(f"{name} must be K/N, e.g. 3/10 (3 of 10 games); got {value!r}")
    if len(m.group(1)) > 18 or len(m.group(2)) > 18 or int(m.group(2)) > MAX_N:
        fail(f"{name} {value}: at most {MAX_N:.0e} games are supported")
    k, n = int(m.group(1)), int(m.group(2))
    if n == 0:
        fail(f"{name} {value}: the number of games N must be at least 1")
    if k > n:
        fail(f"{name} {value}: K cannot exceed N (K of N games)")
    return k, n


def _stats_call(fn, *args, **kwargs):
    """Run a stats function, turning bad input (ValueError) into one line on stderr."""
    try:
        return fn(*args, **kwargs)
    except (ValueError, ArithmeticError, RuntimeError, MemoryError) as e:
        msg = str(e)
        if "different signs" in msg or "converge" in msg or not isinstance(e, ValueError):
            fail("these counts are beyond what the exact computation can resolve (a root could not be "
                 "bracketed); try fewer games or another --method")
        fail(msg)


def _stats_json(result) -> None:
    import json

    typer.echo(json.dumps(result.to_dict(), indent=2, allow_nan=False))


def _pct(x: float) -> str:
    import math

    return "∞" if math.isinf(x) else ("n/a" if math.isnan(x) else f"{100 * x:.1f}%")


@stats_app.command("binom")
def stats_binom(
    k: str = typer.Argument(..., help="successes"),
    n: str = typer.Argument(..., help="trials"),
    p0: str = typer.Option("0.5", "--p0", help="rate under the null hypothesis"),
    alpha: str = typer.Option("0.05", "--alpha", help="significance level"),
    method: str = typer.Option("sterne", "--method", help="sterne|blaker|clopper-pearson|wilson|jeffreys"),
    grid_step: str = typer.Option(None, "--grid-step", help="reproduce the paper's grid walk (e.g. 0.01)"),
    alternative: str = typer.Option("two-sided", "--alternative", help="two-sided|greater|less"),
    as_json: bool = typer.Option(False, "--json", help="print JSON only"),
) -> None:
    """Exact binomial test of p = p0 and the confidence set for the rate."""
    from turinglab.stats import binom_test

    ki, ni = _stats_int(k, "K"), _stats_int(n, "N")
    try:
        p0f = float(p0)
    except ValueError:
        fail(f"--p0 must be a number between 0 and 1, got {p0!r}")
    a = _stats_float(alpha, "--alpha")
    step = None if grid_step is None else _stats_float(grid_step, "--grid-step")
    res = _stats_call(binom_test, ki, ni, p0f, a, method, alternative, step)
    if as_json:
        return _stats_json(res)
    from rich.table import Table

    ci = res.interval
    t = Table(title=f"Exact binomial test: {ki} of {ni}", show_header=False)
    t.add_row("observed rate", _pct(res.estimate))
    t.add_row("null hypothesis", f"rate = {p0f:g} ({alternative})")
    t.add_row("p-value", f"{res.p_value:.6g}")
    t.add_row(f"{100 * (1 - a):g}% confidence set ({ci.method})", " ∪ ".join(f"[{x:.6g}, {y:.6g}]" for x, y in ci.pieces))
    if not ci.is_interval:
        t.add_row("note", "the set has gaps; its hull is " + f"[{ci.low:.6g}, {ci.high:.6g}]")
    console.print(t)
    verdict = "rejected" if res.p_value < a else "not rejected"
    console.print(f"At α = {a:g} the hypothesis rate = {p0f:g} is {verdict} (p = {res.p_value:.4g}).")


def _print_decision(decision: str, alpha: float, fmt: str, what: str, threshold: str, whats: str = "") -> None:
    words = {
        "passes": f"PASSES the {fmt} test: every plausible {what} is at or above {threshold}",
        "fails": f"FAILS the {fmt} test: every plausible {what} is below {threshold}",
        "inconclusive": f"is INCONCLUSIVE on the {fmt} test: plausible {whats or what + 's'} lie both below and "
        f"above {threshold}; more games are needed",
    }[decision]
    prefix = "the machine " if decision != "inconclusive" else "the result "
    console.print(f"At α = {alpha:g} {prefix}{words}.", highlight=False)


@stats_app.command("three-player")
def stats_three_player(
    machine_chosen: str = typer.Option(..., "--machine-chosen", help="K/N: games where the machine was chosen as the human"),
    alpha: str = typer.Option("0.05", "--alpha"),
    method: str = typer.Option("sterne", "--method", help="sterne|blaker|clopper-pearson|wilson|jeffreys"),
    as_json: bool = typer.Option(False, "--json", help="print JSON only"),
) -> None:
    """Three-player test: does the machine reach the 50% pass threshold?"""
    from turinglab.stats import three_player

    k, n = _stats_counts(machine_chosen, "--machine-chosen")
    a = _stats_float(alpha, "--alpha")
    res = _stats_call(three_player, k, n, a, method)
    if as_json:
        return _stats_json(res)
    from rich.table import Table

    ms, hu = res.machine_success, res.humanness
    t = Table(title=f"Three-player Turing test: machine chosen as the human in {k} of {n} games")
    t.add_column("quantity")
    t.add_column("estimate")
    t.add_column(f"plausible range ({100 * (1 - a):g}%, {method})")
    t.add_row("machine success rate", _pct(ms.estimate), f"{_pct(ms.low)} to {_pct(ms.high)}")
    t.add_row("degree of humanness (rate / 50%)", _pct(hu.estimate), f"{_pct(hu.low)} to {_pct(hu.high)}")
    t.add_row("p-value (rate = 50%)", f"{res.p_value:.4g}", "")
    console.print(t)
    if not res.interval.is_interval:
        console.print("Note: the plausible set has gaps: " + " ∪ ".join(f"[{_pct(x)}, {_pct(y)}]" for x, y in res.interval.pieces))
    _print_decision(res.decision, a, "three-player", "success rate", "50%")


@stats_app.command("two-player")
def stats_two_player(
    machine: str = typer.Option(..., "--machine", help="K/N: machine witnesses judged human"),
    human: str = typer.Option(..., "--human", help="K/N: human witnesses judged human"),
    alpha: str = typer.Option("0.05", "--alpha"),
    method: str = typer.Option("sterne", "--method", help="interval for each rate"),
    ratio_method: str = typer.Option("koopman", "--ratio-method", help="koopman|katz|bootstrap"),
    test: str = typer.Option(
        "auto", "--test", help="boschloo (exact) | score | auto (Boschloo unless it would take more than a few seconds)"
    ),
    as_json: bool = typer.Option(False, "--json", help="print JSON only"),
) -> None:
    """Two-player test: is the machine judged human as often as humans are?

    The p-value and the decision come from one two-sided test of equal rates (named in the output).
    """
    from turinglab.stats import two_player

    km, nm = _stats_counts(machine, "--machine")
    kh, nh = _stats_counts(human, "--human")
    a = _stats_float(alpha, "--alpha")
    res = _stats_call(two_player, km, nm, kh, nh, a, method, ratio_method, test)
    if as_json:
        return _stats_json(res)
    from rich.table import Table

    t = Table(title=f"Two-player Turing test: machine {km}/{nm}, humans {kh}/{nh} judged human")
    t.add_column("quantity")
    t.add_column("estimate")
    t.add_column(f"plausible range ({100 * (1 - a):g}%)")
    for label, e in (("machine judged human", res.machine_success), ("humans judged human (threshold)", res.threshold)):
        t.add_row(label, _pct(e.estimate), f"{_pct(e.low)} to {_pct(e.high)}")
    hu = res.humanness
    t.add_row(f"degree of humanness (ratio, {ratio_method})", _pct(hu.estimate), f"{_pct(hu.low)} to {_pct(hu.high)}")
    t.add_row("p-value (H0: machine = humans)", f"{res.p_value:.4g}", res.test)
    console.print(t)
    console.print(f"Test: {res.test}; the decision below comes from this test at α = {a:g}.", highlight=False)
    if res.note:
        console.print(f"Note: {res.note}.", highlight=False)
    _print_decision(
        res.decision, a, "two-player", "ratio of the machine's rate to the humans' rate", "100%",
        whats="ratios of the machine's rate to the humans' rate",
    )


@stats_app.command("power")
def stats_power(
    rate: str = typer.Option(..., "--rate", help="the true success rate to detect"),
    vs: str = typer.Option("0.5", "--vs", help="threshold"),
    alpha: str = typer.Option("0.05", "--alpha"),
    target: str = typer.Option("0.8", "--power", help="target power"),
    method: str = typer.Option("sterne", "--method", help="sterne|blaker|clopper-pearson"),
    as_json: bool = typer.Option(False, "--json", help="print JSON only"),
) -> None:
    """Exact power: how many games are needed to tell RATE from VS?"""
    from turinglab.stats import power

    r = _stats_float(rate, "--rate")
    v = _stats_float(vs, "--vs")
    a = _stats_float(alpha, "--alpha")
    pw = _stats_float(target, "--power")
    res = _stats_call(power, r, v, a, pw, method)
    if as_json:
        return _stats_json(res)
    if res.first_n is None:
        console.print(f"Power {pw:g} is not reached for any n up to {res.n_max}.")
        return
    console.print(
        f"To tell a true rate of {_pct(r)} from {_pct(v)} at α = {a:g} with power {pw:g} ({method} test):\n"
        f"  the first n that reaches it: {res.first_n} games (power {res.power_at_first_n:.3f})\n"
        f"  power never drops below {pw:g} again from n = {res.stable_n} (checked up to n = {res.n_max})\n"
        "Exact power is a sawtooth in n, so plan for the second number.",
        highlight=False,
    )


@stats_app.command("demo")
def stats_demo() -> None:
    """Walk through Giunti's worked example: 9 correct identifications in 10 three-player games."""
    from turinglab.stats import binom_pvalue, interval, three_player

    p = binom_pvalue(9, 10, 0.5)
    say = lambda s="": console.print(s, highlight=False)  # noqa: E731
    say("Giunti's worked example (Restrepo Echavarría's test of ChatGPT-4):")
    say("  10 three-player games; the interrogator found the human 9 times.")
    say("  If the machine were as good as a human, each identification is a coin toss (p = 0.5).")
    say(f"  Exact two-sided p-value of 9 of 10 under p = 0.5: {p:.9f}")
    say("  (the probability of 9, 1, 10 and 0 correct: every outcome no more probable than 9)")
    say()
    for a in (0.05, 0.01):
        grid = interval(9, 10, a, grid_step=0.01)
        exact = interval(9, 10, a)
        res = three_player(1, 10, a)
        say(f"At α = {a:g}: p-value {'<' if p < a else '>='} α, so p = 0.5 is {'rejected' if p < a else 'not rejected'}.")
        say(f"  Sterne's interval for correct identifications, paper's 0.01 grid: [{grid.low:.2f}, {grid.high:.2f}]")
        say(f"  exact bounds (no grid):                                   [{exact.low:.6f}, {exact.high:.6f}]")
        ms, hu = res.machine_success, res.humanness
        say(f"  machine success = 1 - those bounds: paper {1 - grid.high:.2f} to {1 - grid.low:.2f}, "
            f"exact {ms.low:.4f} to {ms.high:.4f}")
        say(f"  degree of humanness = success / 0.5: paper {(1 - grid.high) / 0.5:.0%} to "
            f"{(1 - grid.low) / 0.5:.0%}, exact {_pct(hu.low)} to {_pct(hu.high)}")
        _print_decision(res.decision, a, "three-player", "success rate", "50%")
        say()
    say(
        "For scale: Turing expected interrogators to be right no more than 70% of the time after "
        "five minutes, i.e. machine success 30% and degree of humanness 30% / 50% = 60%."
    )
    say()
    say("Try it on your own counts:  turinglab stats three-player --machine-chosen 1/10")


# === chat / witness ===

_DB_HELP = "database URL (default: $DATABASE_URL, else sqlite:///./turinglab.db)"


@app.command()
def chat(
    witness: str = typer.Option("eliza", "--witness", "-w", help="witness name or codename (e.g. eliza)"),
    study: str | None = typer.Option(None, "--study", help="study YAML file (default: preset jones-bergen-2023)"),
    db: str | None = typer.Option(None, "--db", help=_DB_HELP),
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
    from turinglab.game.study_file import StudyFileError, load_preset, load_study
    from turinglab.terminal import ChatError, run_chat
    from turinglab.store import StoreError

    try:
        spec = load_study(study) if study else load_preset("jones-bergen-2023")
    except StudyFileError as exc:
        fail(str(exc))
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


db_app = typer.Typer(no_args_is_help=True, help="The database: upgrade the schema, list and inspect stored games.")
app.add_typer(db_app, name="db")


def _read_store(db: str | None):  # noqa: ANN202 - Store
    """A Store for a command that only reads: the database must exist and is not migrated
    (a mistyped path must not silently create an empty database)."""
    from turinglab.store import Store
    from turinglab.store.db import existing_database

    return Store(existing_database(db), upgrade=False)


def _db_read_error(db: str | None, exc: Exception) -> str:
    from sqlalchemy.engine import make_url

    from turinglab.store import database_url

    orig = getattr(exc, "orig", None) or exc
    first = (str(orig).strip().splitlines() or [type(orig).__name__])[0]
    shown = make_url(database_url(db)).render_as_string(hide_password=True)
    return (f"cannot read the database at {shown}: {first}; is the URL right (--db or $DATABASE_URL) "
            "and the schema current (`turinglab db upgrade`)?")


@db_app.command("upgrade")
def db_upgrade(db: str | None = typer.Option(None, "--db", help=_DB_HELP)) -> None:
    """Create or upgrade the database schema to the latest migration."""
    from sqlalchemy.exc import DatabaseError

    from turinglab.store import StoreError, database_url, migrate

    try:
        url = database_url(db)
        migrate(url)
    except StoreError as exc:
        fail(str(exc))
    except DatabaseError:
        raise  # one line from the root group (e.g. a file that is not SQLite)
    except Exception as exc:  # noqa: BLE001 - other errors: say which database and why
        fail(f"cannot upgrade {db or url}: {type(exc).__name__}: {str(exc).strip().splitlines()[0]}", code=1)
    err_console.print(f"database at head: {database_url(db)}", markup=False, highlight=False)


@db_app.command("show")
def db_show(
    game_id: str = typer.Argument(..., help="the game id (see `turinglab db games`)"),
    db: str | None = typer.Option(None, "--db", help=_DB_HELP),
    as_json: bool = typer.Option(False, "--json", help="print JSON (game, seats, verdict, every event)"),
) -> None:
    """Print a stored game: header (seats, verdict, flags) and every event."""
    import json

    from sqlalchemy.exc import OperationalError

    from turinglab.store import StoreError, UnknownId
    from turinglab.store.inspect import game_json, game_table

    try:
        with _read_store(db) as store:
            if as_json:
                print(json.dumps(game_json(store, game_id), ensure_ascii=False, indent=2))
                return
            head, table = game_table(store, game_id)
    except UnknownId as exc:
        fail(f"{exc}; list the stored games with: turinglab db games")
    except StoreError as exc:
        fail(str(exc))
    except OperationalError as exc:
        fail(_db_read_error(db, exc))
    console.print(head, markup=False, highlight=False)
    console.print(table)


@db_app.command("games")
def db_games(
    db: str | None = typer.Option(None, "--db", help=_DB_HELP),
    study_id: int | None = typer.Option(None, "--study-id", help="only this study's games"),
) -> None:
    """List the stored games."""
    from sqlalchemy.exc import OperationalError

    from turinglab.store import StoreError
    from turinglab.store.inspect import games_table

    try:
        with _read_store(db) as store:
            games = store.games(study_id)
    except StoreError as exc:
        fail(str(exc))
    except OperationalError as exc:
        fail(_db_read_error(db, exc))
    console.print(games_table(games))


flag_app = typer.Typer(no_args_is_help=True, help="Exclusion flags set by hand: logged with the game, kept in exports, never deletions.")
app.add_typer(flag_app, name="flag")


def _flag(game_id: str, flag: str, value: bool, reason: str | None, db: str | None) -> None:
    from sqlalchemy.exc import OperationalError

    from turinglab.store import StoreError, UnknownId
    from turinglab.store.db import now_ms

    try:
        with _read_store(db) as store:
            flags = store.flag_game(game_id, flag, value, reason, now_ms())
    except UnknownId as exc:
        fail(f"{exc}; list the stored games with: turinglab db games")
    except StoreError as exc:
        fail(str(exc))
    except OperationalError as exc:
        fail(_db_read_error(db, exc))
    shown = ", ".join(sorted(k for k, v in flags.items() if v is True)) or "none"
    err_console.print(f"game {game_id}: {flag} {'set' if value else 'cleared'} by hand (logged); flags now: {shown}",
                      markup=False, highlight=False)


@flag_app.command("set")
def flag_set(
    game_id: str = typer.Argument(..., help="the game id (see `turinglab db games`)"),
    flag: str = typer.Argument(..., help="flag name, e.g. knows_witness (or one of your own: off_topic)"),
    reason: str | None = typer.Option(None, "--reason", help="why (kept in the log and the export)"),
    db: str | None = typer.Option(None, "--db", help=_DB_HELP),
) -> None:
    """Flag an ended game by hand (an exclusion the report can apply with --exclude FLAG)."""
    _flag(game_id, flag, True, reason, db)


@flag_app.command("unset")
def flag_unset(
    game_id: str = typer.Argument(..., help="the game id (see `turinglab db games`)"),
    flag: str = typer.Argument(..., help="flag name, e.g. knows_witness"),
    reason: str | None = typer.Option(None, "--reason", help="why (kept in the log and the export)"),
    db: str | None = typer.Option(None, "--db", help=_DB_HELP),
) -> None:
    """Clear a flag by hand; this overrides the rule that computes it (e.g. a knows_witness false alarm)."""
    _flag(game_id, flag, False, reason, db)


witness_app = typer.Typer(no_args_is_help=True, help="The named witnesses: list them, show one's settings and prompt.")
app.add_typer(witness_app, name="witness")


@witness_app.command("list")
def witness_list(as_json: bool = typer.Option(False, "--json", help="print JSON")) -> None:
    """List the witnesses `--witness NAME` accepts (LLM personas need OPENAI_API_KEY or OPENAI_BASE_URL)."""
    import json

    from rich.table import Table

    from turinglab.witnesses.describe import rows
    from turinglab.witnesses.registry import available, llm_configured

    table_rows = rows(available())
    if as_json:
        print(json.dumps(table_rows, indent=2))
        return
    table = Table("name", "codename", "kind", "model", "prompt")
    for r in table_rows:
        table.add_row(*(r[k] for k in ("name", "codename", "kind", "model", "prompt")))
    console.print(table)
    if not llm_configured():
        err_console.print("(set OPENAI_API_KEY or OPENAI_BASE_URL to add the LLM personas young, baseline, ai-aware)",
                          markup=False, highlight=False)


@witness_app.command("show")
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


@witness_app.command("probe")
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
) -> None:
    """Bot games against one witness: persona breaks, refusals, blocked replies, lengths, judged-human rate."""
    import json

    from rich.progress import Progress

    from turinglab.bots.interrogator import KINDS
    from turinglab.bots.probe import probe
    from turinglab.witnesses.registry import UnknownWitness, resolve

    if strategy not in KINDS:
        fail(f"--strategy must be one of {', '.join(KINDS)}, got {strategy!r}")

    filter_words: tuple[str, ...] = ()
    max_chars, rules = 300, None
    if study:
        from turinglab.game.study_file import StudyFileError, load_study

        try:
            s = load_study(study)
        except StudyFileError as exc:
            fail(str(exc))
        found = [w for w in s.witnesses if w.codename.lower() == name.lower()]
        if not found:
            fail(f"study {study} has no witness {name!r}; its witnesses: {', '.join(w.codename for w in s.witnesses)}")
        spec, filter_words, max_chars, rules = found[0], tuple(s.content_filter), s.rules.max_chars, s.rules
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
    with Progress(console=err_console, transient=True) as bar:
        task = bar.add_task(f"probing {spec.codename}", total=games)
        res = probe(spec, games=games, turns=turns, max_chars=max_chars, seed=seed, judge=judge, content_filter=filter_words, rules=rules,
                    store=store, progress=lambda k: bar.update(task, completed=k), strategy=strategy)
    out = res.to_json()
    if save:
        from pathlib import Path

        try:
            Path(save).write_text(json.dumps({"summary": out, "verdicts": res.verdicts, "replies": res.records},
                                             ensure_ascii=False, indent=1), encoding="utf-8")
        except OSError as exc:
            fail(f"--save {save}: cannot write ({exc.strerror}); give a writable path")
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

# === serve ===


def database_location(db: str | None) -> str:
    """Where the data goes, for people: the absolute path of a SQLite file, else the URL without password."""
    from pathlib import Path

    from sqlalchemy.engine import make_url

    from turinglab.store.db import database_url

    url = make_url(database_url(db))
    if url.get_backend_name() == "sqlite" and url.database and url.database != ":memory:":
        return f"{Path(url.database).expanduser().resolve()} (SQLite; set DATABASE_URL or --db to change)"
    return url.render_as_string(hide_password=True)


def _log_progress() -> None:
    """Show turinglab's INFO lines (e.g. the local model's progress) on stderr during `serve`."""
    import logging

    lg = logging.getLogger("turinglab")
    if not lg.handlers:
        h = logging.StreamHandler()
        h.setFormatter(logging.Formatter("%(levelname)s:     %(message)s"))
        lg.addHandler(h)
    lg.setLevel(logging.INFO)


def _static_to_serve(study: str, db: str | None):  # noqa: ANN202 - StaticStudy | None
    """A static study to serve: a static study file (it has `task:` or a static preset), or the name
    of a static study in the database when no such file exists; None for a live study file."""
    from pathlib import Path

    import yaml

    from turinglab.game.study_file import StudyFileError
    from turinglab.statictests.config import load_static_study, preset_names

    p = Path(study)
    if p.is_file():
        try:
            data = yaml.safe_load(p.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, yaml.YAMLError):
            return None  # the live study loader says what is wrong
        if isinstance(data, dict) and ("task" in data or data.get("preset") in preset_names()):
            try:
                return load_static_study(p)
            except StudyFileError as exc:
                fail(str(exc))
        return None
    if p.suffix.lower() in (".yaml", ".yml") or "/" in study:
        fail(f"--study {study}: no such file; give a study YAML file or the name of a static study "
             "(see `turinglab static import`)")
    from turinglab.store import Store, StoreError
    from turinglab.store.db import existing_database

    try:
        store = Store(existing_database(db))
    except StoreError as exc:
        fail(f"--study {study}: no such file, and no database to look it up in ({exc})")
    try:
        return store.static_study(study).study
    except StoreError as exc:
        fail(f"--study {study}: no such file, and {exc}")
    finally:
        store.close()


@app.command()
def serve(
    study: str = typer.Option(None, "--study", help="Study YAML file (live game or static test), or the name of a "
                              "static study in the database (default: two-player, ELIZA + the local model)."),
    host: str = typer.Option("127.0.0.1", "--host", help="Address to listen on."),
    port: int = typer.Option(8000, "--port", help="Port to listen on."),
    db: str = typer.Option(None, "--db", help="Database URL (default: $DATABASE_URL, else sqlite:///./turinglab.db)."),
    warm_up: bool = typer.Option(True, "--warm-up/--no-warm-up", help="Load the local model at start."),
    workers: int = typer.Option(1, "--workers", help="Worker processes on this port (more than 1 needs --redis "
                                "and PostgreSQL); see docs/deploy.md."),
    redis: str = typer.Option(None, "--redis", help="Redis URL shared by every worker of the study (e.g. "
                              "redis://127.0.0.1:6379/0): workers here and on other hosts serve it together."),
) -> None:
    """Run the live imitation game, or a static test's judge pages, in the browser (with /admin)."""
    import uvicorn

    if workers > 1 or redis:
        from turinglab.server.cluster import serve_cluster

        serve_cluster(study, db, redis, workers, host, port, warm_up, fail)
        return

    from turinglab.server.defaults import default_study
    from turinglab.store.db import StoreError

    static = _static_to_serve(study, db) if study else None
    if static is not None:
        from turinglab.server.judge import create_static_app

        try:
            web = create_static_app(static, db)
        except StoreError as exc:
            fail(str(exc))
        console.print(f"turinglab: static study [bold]{static.name}[/bold] ({static.task}) on http://{host}:{port}/"
                      f"  (admin: /admin)", highlight=False)
        console.print(f"turinglab: database {database_location(db)}", highlight=False)
        from turinglab.server.tuning import tune_gc

        tune_gc()  # full collections of the start-up objects paused the judge pages for 0.1-0.4 s
        uvicorn.run(web, host=host, port=port, log_level="info")
        return
    if study:
        from turinglab.game.study_file import StudyFileError, load_study

        try:
            chosen = load_study(study)
        except StudyFileError as exc:
            fail(str(exc))
    else:
        chosen = default_study()
    from turinglab.server.app import WitnessSetupError, create_app

    _log_progress()  # the local model's first start (assembling, checking, loading) says what it does
    try:
        web = create_app(chosen, db, warm_up=warm_up)
    except (StoreError, WitnessSetupError) as exc:
        fail(str(exc))
    from turinglab.server.tuning import tune_gc

    tune_gc()
    console.print(f"turinglab: study [bold]{chosen.name}[/bold] ({chosen.format}) on http://{host}:{port}/"
                  f"  (admin: /admin)", highlight=False)
    console.print(f"turinglab: database {database_location(db)}", highlight=False)
    from turinglab.server.slowclients import protocol_class
    from turinglab.server.testing import WS_MAX_BYTES

    uvicorn.run(web, host=host, port=port, log_level="info", ws_max_size=WS_MAX_BYTES, http=protocol_class())



@app.command()
def bots(
    study: str = typer.Option(None, "--study", help="Study YAML file (default: the server's default study)."),
    games: int = typer.Option(10, "--games", min=1, help="bot participants to play (each plays one game)"),
    interrogator: str = typer.Option("scripted", "--interrogator", help="scripted or llm (the local model)"),
    url: str = typer.Option(None, "--url", help="a running server (set the same $TURINGLAB_BOT_TOKEN on both); "
                            "default: start one here"),
    db: str = typer.Option(None, "--db", help="database of the server started here (default as serve)"),
    parallel: int = typer.Option(4, "--parallel", min=1, help="bots playing at once"),
    turns: int = typer.Option(5, "--turns", min=1, help="interrogator messages per game"),
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

    from turinglab.bots.play import LLMInterrogator, run_bots

    if interrogator not in ("scripted", "llm"):
        fail(f"--interrogator must be scripted or llm, got {interrogator!r}")
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

        if study:
            from turinglab.game.study_file import StudyFileError, load_study

            try:
                chosen = load_study(study)
            except StudyFileError as exc:
                fail(str(exc))
        else:
            chosen = default_study()
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
        results = asyncio.run(run_bots(base, token, games, parallel=parallel, turns=turns, llm=llm,
                                       progress=lambda r: bar.update(task, advance=1)))
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


# === analysis: report / export / demo-data / tag ===


def _analysis_load(db: str | None, study: str | None):
    from turinglab.analysis.load import LoadError, load

    try:
        loaded = load(db, study)
    except LoadError as exc:
        fail(str(exc))
    if loaded.judgements.empty:
        fail(f"study {loaded.study_name!r} has no games with a verdict yet ({loaded.games_without_verdict} without)")
    return loaded


def _analysis_options(loaded, exclude: list[str] | None, alpha: float):
    from turinglab.analysis.core import Options

    if exclude is None:  # the study's own exclusion flags
        flags = tuple(f for f in loaded.exclusions if "flag_" + f in loaded.judgements.columns)
    else:
        flags = () if [e for e in exclude if e] in ([], ["none"]) else tuple(exclude)
    if not 0 < alpha < 1:
        fail(f"--alpha must be between 0 and 1 (e.g. 0.05), got {alpha}")
    return Options(alpha=alpha, exclude=flags)


def _is_static_study(db: str | None, study: str | None) -> bool:
    """Does --study name a static study (and no live one)? Without --study: no live study has
    games and there is exactly one static study."""
    from turinglab.store import Store, StoreError
    from turinglab.store.db import existing_database

    try:
        with Store(existing_database(db)) as st:
            static = st.static_studies()
            if not static:
                return False
            live = st.studies()
            if study is None:
                return len(static) == 1 and not any(st.games(s.id) for s in live)
            is_live = any(str(s.id) == str(study) or s.name == study for s in live)
            return not is_live and any(str(s.id) == str(study) or s.name == study for s in static)
    except StoreError:
        return False


def _ai_judge_results(db: str | None, study: str) -> list:
    """Cached `judges evaluate` results on exactly this study's items (none if the items are unreadable)."""
    from turinglab.judges.evaluate import results_for
    from turinglab.judges.items import ItemsError
    from turinglab.judges.static import load_study

    try:
        items, _ = load_study(db, study, with_trials=False)
        return results_for(items)
    except (LookupError, ItemsError):
        return []


def _static_report(db: str | None, study: str | None, out: str, alpha: float, fmt: str) -> None:
    from turinglab.analysis.static import analyse_counts, write_static_report
    from turinglab.statictests.summary import judge_counts, judge_table, topic_coverage
    from turinglab.store import StoreError

    if not 0 < alpha < 1:
        fail(f"--alpha must be between 0 and 1 (e.g. 0.05), got {alpha}")
    store = _static_store(db, write=False)
    try:
        info = store.static_study(study if study is not None else store.static_studies()[0].id)
        jc, lc = judge_counts(store, info.id, info.study.exclusions.fast_rt_ms)
        judges = judge_table(store, sorted(jc["judge_id"].unique()))
        a = analyse_counts(jc, lc, judges, study=info.name, task=info.task, alpha=alpha,
                           exclusions=info.study.exclusions,
                           topic_items=topic_coverage(store, info.id) if info.task == "conversation" else None)
    except (StoreError, ValueError) as exc:
        fail(str(exc))
    finally:
        store.close()
    paths = write_static_report(a, out, fmt, ai_results=_ai_judge_results(db, info.name))
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
    exclude: list[str] = typer.Option(None, "--exclude", help="Exclusion flag to apply (repeatable; 'none' for none). Default: the study's."),
    alpha: float = typer.Option(0.05, "--alpha", help="Significance level."),
    fmt: str = typer.Option("html", "--format", help="html (one self-contained file), md (+ a figures folder) or json (every number, keyed)."),
    include_bots: bool = typer.Option(False, "--include-bots", help="Analyse games flagged bot too (by default they are only in the leaderboard)."),
) -> None:
    """Analyse a study's games and write the report (tables, figures, methods)."""
    if fmt not in ("html", "md", "json"):
        fail(f"--format must be html, md or json, got {fmt!r}")
    if _is_static_study(db, study):
        if fmt == "json":
            fail("--format json is for live studies; a static study's numbers: turinglab static summary --json")
        return _static_report(db, study, out, alpha, fmt)
    from rich.progress import Progress  # the live analysis' imports (sklearn among them): not for static reports

    from turinglab.analysis.core import analyse
    from turinglab.analysis.report import write_report

    loaded = _analysis_load(db, study)
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
        bar.update(task, description="figures and report")
        paths = write_report(a, out, fmt)
        bar.update(task, advance=1)
    console.print(f"wrote {paths[0]} ({a.n_games} games, exclusions: {', '.join(opt.exclude) or 'none'})")


@app.command("export")
def export_cmd(
    out: str = typer.Option(..., "--out", help="New directory for the dataset."),
    db: str = typer.Option(None, "--db", help="Database URL (default: $DATABASE_URL or ./turinglab.db)."),
    study: str = typer.Option(None, "--study", help="Study id or name."),
) -> None:
    """Export a study as a pseudonymous dataset (CSV + Parquet, codebook, report, rebuild.py)."""
    from turinglab.analysis.export import export

    loaded = _analysis_load(db, study)
    try:
        res = export(loaded, out)
    except FileExistsError as exc:
        fail(str(exc))
    rows = ", ".join(f"{k} {v}" for k, v in res["rows"].items())
    console.print(f"wrote {res['out']} ({rows}); check it with: python {out}/rebuild.py")


@app.command("demo-data")
def demo_data(
    db: str = typer.Option(None, "--db", help="Database URL (default: $DATABASE_URL or ./turinglab.db)."),
    games: int = typer.Option(200, "--games", help="Number of games to play."),
    seed: int = typer.Option(0, "--seed", help="Random seed."),
    three_player: bool = typer.Option(False, "--three-player", help="Three-player games instead of two-player."),
    static: bool = typer.Option(False, "--static", help="Instead: a playable static study for each of Zhang's six tasks."),
    images_dir: str = typer.Option("./turinglab-static-images", "--images-dir", help="--static: where to put the images."),
    zhang_data: str = typer.Option(None, "--zhang-data", help="--static: folder of Zhang's data (word.json...)."),
) -> None:
    """Play synthetic games with known true rates through the real engine and store (or, with
    --static, build a static study per task from shipped images and Zhang's real data)."""
    from rich.progress import Progress

    if static:
        return _demo_static(db, images_dir, zhang_data, seed)

    from turinglab.analysis.demo import TAG_SHARE, DemoSpec, generate

    if games < 1:
        fail(f"--games must be at least 1, got {games}")
    spec = DemoSpec(n_games=games, seed=seed, format="three-player" if three_player else "two-player",
                    tag_share=TAG_SHARE)
    with Progress(console=err_console, transient=True) as bar:
        task = bar.add_task("playing demo games", total=games)
        res = generate(db, spec, progress=lambda i: bar.update(task, completed=i))
    rates = ", ".join(f"{k} {v:.2f}" for k, v in res["true_rates"].items())
    human = "" if three_player else f", Human {res['human_rate']:.2f}"
    console.print(f"study {res['study_id']} ({res['study']}): {games} games; true rates judged human: {rates}{human}")


def _demo_static(db: str | None, images_dir: str, zhang_data: str | None, seed: int) -> None:
    from turinglab.statictests.demo import build_all
    from turinglab.statictests.zhang import ImportProblem
    from turinglab.store import StoreError

    store = _static_store(db, write=True)
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
    from turinglab.analysis import taxonomy as tx

    if taxonomy not in tx.FILES:
        fail(f"--taxonomy must be one of {', '.join(tx.FILES)}, got {taxonomy!r}")
    if target == "list":
        for code, name in tx.codes(taxonomy).items():
            console.print(f"{code:4} {name}", markup=False, highlight=False)
        return
    import pandas as pd

    from turinglab.store import Store, StoreError
    from turinglab.store.api import UnknownId
    from turinglab.store.db import existing_database

    try:  # `tag agreement` only reads: it neither creates nor migrates the database
        store = Store(existing_database(db), upgrade=target != "agreement")
    except StoreError as exc:
        fail(str(exc))
    try:
        if target == "agreement":
            rows = [{"game_id": t.game_id, "taxonomy": t.taxonomy, "category": t.category, "tagger": t.tagger}
                    for t in store.tags(taxonomy=taxonomy)]
            df = pd.DataFrame(rows, columns=["game_id", "taxonomy", "category", "tagger"])
            try:
                r = tx.agreement(df, taxonomy, a, b, level)
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


# === judges ===

judges_app = typer.Typer(no_args_is_help=True, help="AI judges: trained (SVM, random forest, TF-IDF) and zero-shot LLM judges, beside the human judges.")
app.add_typer(judges_app, name="judges")


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


def _judges_run(items, trials, cfg, source: str, as_json: bool, no_cache: bool, items_out: str | None) -> None:
    import json

    from turinglab.judges.evaluate import evaluate
    from turinglab.judges.features import FeaturesError
    from turinglab.judges.items import ItemsError
    from turinglab.judges.llm import LLMJudgeError
    from turinglab.judges.trained import JudgeError
    from turinglab.judges.vectors import VectorsError

    try:
        res = evaluate(items, cfg, trials, progress=True, use_cache=not no_cache, source=source)
    except (JudgeError, FeaturesError, ItemsError, LLMJudgeError, VectorsError) as exc:
        fail(str(exc))
    per_item = res.pop("item_verdicts", [])
    if items_out:
        import pandas as pd

        pd.DataFrame(per_item).to_csv(items_out, index=False)
    if as_json:
        print(json.dumps(res, indent=2))
        return
    from turinglab.judges.show import render

    render(console, res)


def _judges_config(judge, features, folds, group_by_stimulus, seed, repeats, alpha, limit, model, base_url, api_key_env,
                   prompt, max_tokens):
    from turinglab.judges.evaluate import ALL_JUDGES, Config

    if judge not in ALL_JUDGES:
        fail(f"--judge must be one of {'|'.join(ALL_JUDGES)}, got {judge!r}")
    if folds < 2:
        fail(f"--folds must be at least 2, got {folds}")
    if repeats < 1:
        fail(f"--repeats must be at least 1, got {repeats}")
    if not 0 < alpha < 1:
        fail(f"--alpha must be between 0 and 1 (e.g. 0.05), got {alpha}")
    if limit is not None and limit < 2:
        fail(f"--limit must be at least 2, got {limit}")
    if features and judge in ("tfidf-lr", "llm"):
        fail(f"--features does not apply to --judge {judge} (it reads the text); use svm or rf")
    if group_by_stimulus and judge == "llm":
        fail("--group-by-stimulus does not apply to --judge llm (it is not trained)")
    if limit is not None and judge != "llm":
        fail("--limit applies to --judge llm only (trained judges use every item)")
    spec = {"model": model, "base_url": base_url, "api_key_env": api_key_env, "max_tokens": max_tokens, "seed": seed}
    return Config(judge=judge, features=features, folds=folds, seed=seed, repeats=repeats,
                  group_by_stimulus=group_by_stimulus, alpha=alpha, limit=limit,
                  model=spec if judge == "llm" else {}, prompt=prompt if judge == "llm" else None)


_J_JUDGE = typer.Option(..., "--judge", help="svm | rf | tfidf-lr | llm")
_J_MODEL = typer.Option("local", "--model", help="llm: model name ('local' = the embedded model).")
_J_BASE = typer.Option(None, "--base-url", help="llm: OpenAI-compatible base URL of a remote model.")
_J_KEYENV = typer.Option("OPENAI_API_KEY", "--api-key-env", help="llm: env var holding the API key.")
_J_PROMPT = typer.Option(None, "--prompt", help="llm: a Jinja template file for the judge's instructions.")
_J_LIMIT = typer.Option(None, "--limit", help="llm: judge a random balanced sample of N items.")
_J_TOKENS = typer.Option(24, "--max-tokens", help="llm: answer length cap.")


@judges_app.command("evaluate")
def judges_evaluate(
    judge: str = _J_JUDGE,
    study: str = typer.Option(None, "--study", help="A stored static study (name or id)."),
    responses: str = typer.Option(None, "--responses", help="A Zhang ground-truth JSON file (word.json, caption.json, ...)."),
    task: str = typer.Option(None, "--task", help="word | caption | object | color (with --responses; default: the file name)."),
    human_judges: str = typer.Option(None, "--human-judges", help="Zhang's human-judge trials of the same items (word task), for the side-by-side comparison."),
    db: str = typer.Option(None, "--db", help="Database URL (with --study; default $DATABASE_URL or ./turinglab.db)."),
    features: str = typer.Option(None, "--features", help="Feature sets, comma separated (word: sqdiff,glove,cosine,lexical; text: minilm,mean,lexical)."),
    folds: int = typer.Option(10, "--folds", help="Cross-validation folds."),
    group_by_stimulus: bool = typer.Option(False, "--group-by-stimulus", help="No stimulus in both train and test folds."),
    seed: int = typer.Option(42, "--seed", help="Seed of the folds and groups (and of the LLM)."),
    repeats: int = typer.Option(1, "--repeats", help="Repeat the cross-validation with seeds seed, seed+1, ..."),
    alpha: float = typer.Option(0.05, "--alpha", help="1 - confidence level of the intervals."),
    limit: int = _J_LIMIT,
    model: str = _J_MODEL,
    base_url: str = _J_BASE,
    api_key_env: str = _J_KEYENV,
    prompt: str = _J_PROMPT,
    max_tokens: int = _J_TOKENS,
    items_out: str = typer.Option(None, "--items-out", help="Also write each item's verdict and score to this CSV."),
    no_cache: bool = typer.Option(False, "--no-cache", help="Recompute even if a cached result exists."),
    as_json: bool = typer.Option(False, "--json", help="Print the result as JSON."),
) -> None:
    """Evaluate one AI judge on static items, beside the human judges of the same items."""
    cfg = _judges_config(judge, features, folds, group_by_stimulus, seed, repeats, alpha, limit, model, base_url,
                         api_key_env, prompt, max_tokens)
    items, trials, source = _judges_items(study, responses, task, human_judges, db)
    _judges_run(items, trials, cfg, source, as_json, no_cache, items_out)


@judges_app.command("run")
def judges_run(
    judge: str = typer.Option("llm", "--judge", help="llm (the inverted test; trained judges need static items)."),
    from_study: str = typer.Option(..., "--from-study", help="A live study whose stored transcripts the judge reads."),
    db: str = typer.Option(None, "--db", help="Database URL (default: $DATABASE_URL or ./turinglab.db)."),
    seed: int = typer.Option(42, "--seed", help="Seed of the sample and the LLM."),
    alpha: float = typer.Option(0.05, "--alpha", help="1 - confidence level of the intervals."),
    limit: int = _J_LIMIT,
    model: str = _J_MODEL,
    base_url: str = _J_BASE,
    api_key_env: str = _J_KEYENV,
    prompt: str = _J_PROMPT,
    max_tokens: int = _J_TOKENS,
    items_out: str = typer.Option(None, "--items-out", help="Also write each transcript's verdict to this CSV."),
    no_cache: bool = typer.Option(False, "--no-cache", help="Ask the model again even if answers are cached."),
    as_json: bool = typer.Option(False, "--json", help="Print the result as JSON."),
) -> None:
    """The inverted Turing test: an LLM judges stored live games from the transcripts the interrogators saw."""
    if judge != "llm":
        fail(f"`judges run` takes --judge llm (got {judge!r}); trained judges: `judges evaluate`")
    cfg = _judges_config("llm", None, 10, False, seed, 1, alpha, limit, model, base_url, api_key_env, prompt,
                         max_tokens)
    loaded = _analysis_load(db, from_study)
    from turinglab.judges.live import from_loaded

    items, trials = from_loaded(loaded)
    _judges_run(items, trials, cfg, f"live study {loaded.study_name}", as_json, no_cache, items_out)

@judges_app.command("figure")
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
    from turinglab.judges.figure import detectability

    fig = detectability(loaded)
    Path(out).write_bytes(fig.png) if out.endswith(".png") else Path(out).write_text(fig.svg)
    console.print(f"wrote {out}", markup=False)


# === static: static Turing tests (Zhang et al.) ===

static_app = typer.Typer(no_args_is_help=True, help="Static Turing tests: import items and judge trials, summarise them.")
app.add_typer(static_app, name="static")
_TASKS = "word|caption|object|color|fv|conversation"


def _static_store(db: str | None, *, write: bool):  # noqa: ANN202 - Store
    from turinglab.store import Store, StoreError
    from turinglab.store.db import existing_database

    try:
        return Store(db) if write else Store(existing_database(db))
    except StoreError as exc:
        fail(str(exc))


@static_app.command("import")
def static_import(
    task: str = typer.Option(..., "--task", help=_TASKS),
    responses: str = typer.Option(None, "--responses", help="Zhang response dictionary (JSON), e.g. word.json (needed except for conversation verdicts alone)."),
    study: str = typer.Option(..., "--study", help="Name of the static study to create."),
    images: str = typer.Option(None, "--images", help="Folder with the stimulus images (vision tasks)."),
    judge_trials: str = typer.Option(None, "--judge-trials", help="Zhang human-judge trial file (JSON); for --task conversation without --responses, the verdict file trials_all.json."),
    study_file: str = typer.Option(None, "--study-file", help="Static study YAML (default: preset zhang-2023)."),
    db: str = typer.Option(None, "--db", help=_DB_HELP),
) -> None:
    """Import a response dictionary (and published judge trials): all or nothing."""
    from pathlib import Path

    from turinglab.game.study_file import StudyFileError
    from turinglab.statictests.config import TASKS, load_static_study, preset_study
    from turinglab.statictests.zhang import (
        ImportProblem,
        parse_conversation_verdicts,
        parse_judge_trials,
        parse_responses,
        read_json,
    )
    from turinglab.store import StoreError

    if task not in TASKS:
        fail(f"--task must be one of {', '.join(TASKS)}, got {task!r}")
    if responses is None and not (task == "conversation" and judge_trials):
        fail("--responses is needed (a Zhang response dictionary, e.g. word.json); only --task conversation "
             "can import a verdict file (trials_all.json) alone with --judge-trials")
    img = Path(images).resolve() if images else None
    if img is not None and not img.is_dir():
        fail(f"--images {images}: no such folder; give the folder holding the image files")
    try:
        cfg = load_static_study(study_file) if study_file else preset_study(study, task)
    except StudyFileError as exc:
        fail(str(exc))
    cfg = cfg.model_copy(update={"name": study, "task": task, **({"image_dir": str(img)} if img else {})})
    try:
        if responses is None:  # Zhang's conversation verdicts: items and trials from one file
            parsed = parse_conversation_verdicts(read_json(judge_trials), judge_trials)
        else:
            parsed = parse_responses(read_json(responses), task, responses, img)
            if judge_trials:
                parsed = parse_judge_trials(read_json(judge_trials), parsed, judge_trials)
    except ImportProblem as exc:
        fail(str(exc))
    store = _static_store(db, write=True)
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


@static_app.command("summary")
def static_summary(
    study: str = typer.Option(..., "--study", help="Static study name or id."),
    db: str = typer.Option(None, "--db", help=_DB_HELP),
    as_json: bool = typer.Option(False, "--json", help="print JSON"),
    alpha: float = typer.Option(0.05, "--alpha", help="1 - confidence level of the intervals."),
) -> None:
    """Trials, judges, the confusion matrix and each agent's judged-human rate."""
    import json

    from turinglab.statictests.summary import count_table, summary
    from turinglab.store import StoreError

    if not 0 < alpha < 1:
        fail(f"--alpha must be between 0 and 1 (e.g. 0.05), got {alpha}")
    store = _static_store(db, write=False)
    try:
        info = store.static_study(study)
        out = summary(count_table(store, info.id), alpha, study=info.name, task=info.task)
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
    for a in out["agents"]:
        r = a["judged_human_rate"]
        console.print(f"  {a['agent']:24} n={a['n']:6}  judged human {r['estimate']:.3f} "
                      f"[{r['low']:.3f}, {r['high']:.3f}]", markup=False, highlight=False)


@static_app.command("from-games")
def static_from_games(
    from_study: str = typer.Option(..., "--from-study", help="Live study (name or id) whose stored games to use."),
    lengths: str = typer.Option("3,6,9", "--lengths", help="Chunk lengths in exchanges, e.g. 3,6,9."),
    study: str = typer.Option(..., "--study", help="Name of the static (conversation) study to create."),
    topics: str = typer.Option(None, "--topics", help="CSV file game_id,topic: each game's true topic (one of Zhang's "
                               "nine), asked as a control among 5; games not listed get no topic question."),
    db: str = typer.Option(None, "--db", help=_DB_HELP),
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
    store = _static_store(db, write=False)
    try:
        sid, n_stim, n_items, n_topic = build(store, from_study, cfg, topics)
    except (StoreError, TopicsError) as exc:
        fail(str(exc))
    finally:
        store.close()
    console.print(f"static study {study!r} (id {sid}, conversation): {n_items} items from {n_stim} conversations "
                  f"of {from_study!r}, lengths {','.join(map(str, ks))}; {n_topic} of {n_stim} conversations with "
                  "a topic control", markup=False, highlight=False, soft_wrap=True)


# === end ===


def main() -> None:  # pragma: no cover - entry point
    app()


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
