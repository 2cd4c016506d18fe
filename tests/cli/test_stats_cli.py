"""The `turinglab stats` command line: JSON contract, human output, bad input, console script."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import pytest
from typer.testing import CliRunner

from turinglab.cli import app
from turinglab.stats import interval

runner = CliRunner()


def run_json(*args: str) -> dict:
    result = runner.invoke(app, ["stats", *args, "--json"])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)  # --json prints only JSON


def test_binom_json_contract():
    d = run_json("binom", "9", "10")
    assert {"k", "n", "p0", "alpha", "estimate", "p_value", "interval"} <= set(d)
    assert set(d["interval"]) >= {"method", "low", "high", "pieces", "is_interval"}
    assert d["p_value"] == 0.021484375 and d["estimate"] == 0.9
    assert d["interval"]["low"] == pytest.approx(interval(9, 10).low, abs=1e-15)


def test_binom_options():
    d = run_json("binom", "1", "30")
    assert d["interval"]["is_interval"] is False and len(d["interval"]["pieces"]) == 2
    d = run_json("binom", "9", "10", "--alpha", "0.01", "--grid-step", "0.01")
    assert [d["interval"]["low"], d["interval"]["high"]] == [0.49, 0.99]
    d = run_json("binom", "9", "10", "--alternative", "greater", "--p0", "0.5")
    assert d["p_value"] == pytest.approx(11 / 1024)
    d = run_json("binom", "3", "10", "--method", "wilson")
    assert d["interval"]["method"] == "wilson"


def test_three_player_json_contract():
    d = run_json("three-player", "--machine-chosen", "1/10")
    assert {"format", "n", "machine_success", "threshold", "p_value", "decision", "humanness"} <= set(d)
    assert d["format"] == "three-player" and d["n"] == 10 and d["threshold"] == 0.5
    assert set(d["machine_success"]) == {"estimate", "low", "high"} == set(d["humanness"]) - {"pieces"}
    assert d["humanness"]["pieces"] == [[2 * a, 2 * b] for a, b in d["interval"]["pieces"]]
    assert d["decision"] == "fails"
    assert run_json("three-player", "--machine-chosen", "1/10", "--alpha", "0.01")["decision"] == "inconclusive"


def test_two_player_json_contract():
    d = run_json("two-player", "--machine", "10/30", "--human", "20/30")
    assert {"format", "machine_success", "threshold", "p_value", "decision", "humanness"} <= set(d)
    assert d["format"] == "two-player"
    for key in ("machine_success", "threshold", "humanness"):
        assert set(d[key]) - {"pieces"} == {"estimate", "low", "high"}
    assert d["humanness"]["estimate"] == pytest.approx(0.5)
    assert d["decision"] == "fails"


def test_power_json_contract():
    d = run_json("power", "--rate", "0.7")
    assert d["first_n"] <= d["stable_n"]
    assert d["first_n"] == 49  # enumeration check lives in test_stats_power_bayes_sdt


def test_human_output_states_alpha_method_and_decision():
    r = runner.invoke(app, ["stats", "three-player", "--machine-chosen", "1/10"])
    assert r.exit_code == 0
    text = " ".join(r.stdout.split())
    assert "α = 0.05" in text and "FAILS" in text and "below 50%" in text and "sterne" in text
    r = runner.invoke(app, ["stats", "three-player", "--machine-chosen", "50/100"])
    assert "INCONCLUSIVE" in r.stdout
    r = runner.invoke(app, ["stats", "three-player", "--machine-chosen", "70/100"])
    assert "PASSES" in r.stdout


def test_demo_walks_through_the_paper():
    r = runner.invoke(app, ["stats", "demo"])
    assert r.exit_code == 0
    text = " ".join(r.stdout.split())
    for piece in ("0.021484375", "[0.56, 0.99]", "[0.49, 0.99]", "0.01 to 0.44", "2% to 88%", "FAILS", "INCONCLUSIVE"):
        assert piece in text, piece


@pytest.mark.parametrize(
    "args, needle",
    [
        (["binom", "11", "10"], "between 0 and n"),
        (["binom", "3", "0"], "at least 1"),
        (["binom", "x", "10"], "whole number"),
        (["binom", "3", "10", "--alpha", "1.5"], "--alpha"),
        (["binom", "3", "10", "--alpha", "abc"], "--alpha"),
        (["binom", "3", "10", "--method", "wald"], "unknown method"),
        (["binom", "3", "10", "--alternative", "up"], "alternative"),
        (["three-player", "--machine-chosen", "10/3"], "cannot exceed"),
        (["three-player", "--machine-chosen", "3/0"], "at least 1"),
        (["three-player", "--machine-chosen", "three/10"], "K/N"),
        (["three-player", "--machine-chosen", "1/10", "--alpha", "0"], "--alpha"),
        (["two-player", "--machine", "3/10", "--human", "12/10"], "cannot exceed"),
        (["two-player", "--machine", "3/10", "--human", "5/10", "--ratio-method", "x"], "ratio_method"),
        (["power", "--rate", "0.5"], "no difference"),
        (["power", "--rate", "high"], "--rate"),
        (["power", "--rate", "0.6", "--method", "wilson"], "exact method"),
        (["two-player", "--machine", "0/10", "--human", "5/10", "--ratio-method", "katz"], "koopman"),
        (["three-player", "--machine-chosen", "1/10", "--method", "exact"], "unknown method"),
    ],
)
def test_bad_input_exits_2_with_one_clear_message(args, needle):
    r = runner.invoke(app, ["stats", *args])
    assert r.exit_code == 2
    assert r.stdout == ""
    assert len(r.stderr.strip().splitlines()) == 1  # fits one 80-column line
    err = r.stderr.strip()
    assert err.startswith("error:") and needle in err
    assert "Traceback" not in r.stderr


def _console_script() -> list[str]:
    exe = shutil.which("turinglab")
    return [exe] if exe else [sys.executable, "-m", "turinglab"]


def test_console_script_subprocess():
    env = {**os.environ, "COLUMNS": "200"}
    out = subprocess.run(_console_script() + ["stats", "binom", "9", "10", "--json"], capture_output=True, text=True, env=env, timeout=60)
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["p_value"] == 0.021484375
    bad = subprocess.run(_console_script() + ["stats", "binom", "11", "10"], capture_output=True, text=True, env=env, timeout=60)
    assert bad.returncode == 2
    assert len(bad.stderr.strip().splitlines()) == 1 and bad.stderr.startswith("error:")
    assert "Traceback" not in bad.stderr


def test_json_is_strict_when_the_ratio_is_unbounded():
    r = runner.invoke(app, ["stats", "two-player", "--machine", "3/10", "--human", "0/10", "--json"])
    assert r.exit_code == 0

    def reject(name):
        raise AssertionError(f"non-standard JSON constant {name}")

    d = json.loads(r.stdout, parse_constant=reject)
    assert d["humanness"]["high"] is None and d["humanness"]["low"] > 0
    assert d["decision"] == "inconclusive"
