"""`turinglab stats`: exact tests, intervals and pass criteria from counts."""

from __future__ import annotations

import typer

from turinglab.cli.common import console, fail


app = typer.Typer(
    no_args_is_help=True,
    help="Exact tests, intervals and Turing-test pass criteria (Giunti 2025) from counts.",
)


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


@app.command("binom")
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


@app.command("three-player")
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


@app.command("two-player")
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


@app.command("power")
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


@app.command("demo")
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
