"""`turinglab data list|get`: the shipped files are listed and copied; a wrong name is one line."""

from __future__ import annotations

import hashlib

from typer.testing import CliRunner

from turinglab.cli import app
from turinglab.statictests.datafiles import CATALOGUE

runner = CliRunner()


def test_list_names_every_file_and_where_it_comes_from():
    r = runner.invoke(app, ["data", "list"])
    assert r.exit_code == 0, r.output
    lines = {line.split()[0]: line.split()[1] for line in r.stdout.splitlines() if len(line.split()) > 1}
    for f in CATALOGUE.values():
        assert lines[f.name] == ("shipped" if f.shipped else "fetched")


def test_get_copies_a_shipped_file(tmp_path):
    r = runner.invoke(app, ["data", "get", "word.json", "--out", str(tmp_path / "d")])
    assert r.exit_code == 0, r.output
    assert hashlib.sha256((tmp_path / "d" / "word.json").read_bytes()).hexdigest() == CATALOGUE["word.json"].sha256


def test_get_of_an_unknown_name_is_one_line():
    r = runner.invoke(app, ["data", "get", "words.json"])
    assert r.exit_code == 2
    assert r.stderr.strip() == "error: no data file 'words.json'; `turinglab data list` shows the names"
