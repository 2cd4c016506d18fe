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


EVERY = READERS + [
    ["db", "upgrade"],
    ["demo-data", "--games", "2"],
    ["tag", "g1", "--category", "1a", "--tagger", "ann"],
    ["chat", "--no-delay"],
    ["serve", "--no-warm-up"],
]


def _bad_urls(tmp: Path) -> dict[str, tuple[str, str]]:
    """kind -> (URL, a word the one line must contain)."""
    notdb = tmp / "notes.db"
    notdb.write_text("these are my notes, not a database\n")
    return {
        "missing folder": (f"sqlite:///{tmp / 'no-such-folder' / 'x.db'}", "no-such-folder"),
        "unparsable": ("::not a url::", "cannot read database URL"),
        "not sqlite": (f"sqlite:///{notdb}", "not a database"),
    }


@pytest.mark.parametrize("kind", ["missing folder", "unparsable", "not sqlite"])
@pytest.mark.parametrize("cmd", EVERY, ids=lambda c: " ".join(c[:2]))
def test_bad_database_is_one_line_for_every_command(tmp_path, cmd, kind):
    url, word = _bad_urls(tmp_path)[kind]
    before = (tmp_path / "notes.db").read_bytes()
    r = CliRunner().invoke(app, [c.format(tmp=tmp_path) for c in cmd] + ["--db", url], input="hello\n")
    lines = [ln for ln in r.output.splitlines() if ln.strip()]
    assert r.exit_code == 2, (r.output, r.exception)
    assert len(lines) == 1 and lines[0].startswith("error: ") and word in lines[0], r.output
    assert (tmp_path / "notes.db").read_bytes() == before  # nothing lost
