"""Database paper cuts: reading commands never create a database; a bad URL, folder or file is one line."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from turinglab.cli import app


def run(*args: str):
    return CliRunner().invoke(app, list(args))


READERS = [
    ["report", "--out", "{tmp}/r.html"],
    ["export", "--out", "{tmp}/export"],
    ["db", "games"],
    ["db", "show", "g1"],
    ["tag", "agreement"],
]


@pytest.mark.parametrize("cmd", READERS, ids=lambda c: " ".join(c[:2]))
def test_reading_commands_do_not_create_a_database(tmp_path, cmd):
    typo = tmp_path / "tyop.db"
    r = run(*[c.format(tmp=tmp_path) for c in cmd], "--db", f"sqlite:///{typo}")
    assert r.exit_code == 2, r.output
    assert "no database at" in r.output and "no studies" not in r.output
    assert not typo.exists()


@pytest.mark.parametrize("cmd", READERS, ids=lambda c: " ".join(c[:2]))
def test_reading_commands_leave_an_empty_file_empty(tmp_path, cmd):
    empty = tmp_path / "empty.db"
    empty.touch()
    run(*[c.format(tmp=tmp_path) for c in cmd], "--db", f"sqlite:///{empty}")
    assert empty.stat().st_size == 0
    assert not (tmp_path / "r.html").exists() and not (tmp_path / "export").exists()
