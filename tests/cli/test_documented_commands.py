"""Every `turinglab …` command the README and docs/ show names a real command, real options and
no more positional arguments than the command takes (the README once said
`turinglab serve my-study.yaml`, which `serve` refuses: it takes `--study`)."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest
import typer.main

from turinglab.cli import app

ROOT = Path(__file__).resolve().parents[2]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
SKIP = {"...", "…"}


def documented() -> list[tuple[str, str]]:
    """(where, command line) for each `turinglab` command in inline code and in code blocks."""
    found = []
    for path in DOCS:
        fenced, carry = False, ""
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if line.lstrip().startswith("```"):
                fenced, carry = not fenced, ""
                continue
            spans = [] if fenced else re.findall(r"`(turinglab [^`]+)`", line)
            if fenced:
                line = carry + line.strip()
                if line.endswith("\\"):  # continued on the next line
                    carry = line[:-1] + " "
                    continue
                carry = ""
                bare = re.match(r"^(?:\$\s+)?(turinglab\s.*)$", line)
                spans += [bare.group(1)] if bare else []
            for span in spans:
                for part in re.split(r"\s*(?:;|&&|\|\||\|)\s*", span.split(" #")[0]):
                    if part.startswith("turinglab "):
                        found.append((f"{path.name}:{n}", part.strip()))
    return found


def resolve(words: list[str]):
    """The command the words name (Typer's click command), its path and the words left for it."""
    cmd = typer.main.get_command(app)
    path = []
    while hasattr(cmd, "list_commands") and words and not words[0].startswith("-") and words[0] not in SKIP:
        sub = cmd.get_command(None, words[0])
        assert sub is not None, f"no command {' '.join(path + words[:1])!r}"
        path.append(words.pop(0))
        cmd = sub
    return cmd, path, words


def check(line: str) -> None:
    try:
        words = shlex.split(line)[1:]
    except ValueError:  # an unbalanced quote in prose: not a command line
        return
    cmd, path, rest = resolve(words)
    opts = {o: p for p in cmd.params if p.param_type_name == "option" for o in (*p.opts, *p.secondary_opts)}
    opts["--help"] = None
    args = [p for p in cmd.params if p.param_type_name == "argument"]
    room = float("inf") if any(a.nargs == -1 for a in args) else sum(a.nargs for a in args)
    if rest[:1] and rest[0] in SKIP:  # "turinglab admin ...": a family of commands
        return
    positional = 0
    i, optional = 0, False
    while i < len(rest):
        w = rest[i]
        i += 1
        if w.startswith("["):  # [--db URL]: an optional part of a usage line
            optional = True
        if optional:
            optional = not w.endswith("]")
            w = w.strip("[]")
            if not w.startswith("-"):
                continue
        if w in SKIP or w.startswith("<") or w.startswith(">") or w == "2>&1":
            continue
        if w.startswith("-") and w != "-":
            name = w.split("=", 1)[0]
            assert name in opts, f"{' '.join(['turinglab', *path])} has no option {name}"
            p = opts[name]
            if p is not None and not p.is_flag and not p.count and "=" not in w:
                i += p.nargs  # its value(s)
                optional = optional and not rest[i - 1].endswith("]")
            continue
        positional += 1
    assert positional <= room, f"{' '.join(['turinglab', *path])} takes {room} positional argument(s), got {positional}"


COMMANDS = documented()


def test_the_docs_show_many_commands():
    assert len(COMMANDS) > 40 and any("serve" in c for _, c in COMMANDS)


@pytest.mark.parametrize("where,line", COMMANDS, ids=[w for w, _ in COMMANDS])
def test_a_documented_command_parses(where, line):
    check(line)


def test_the_check_catches_what_serve_refuses():
    with pytest.raises(AssertionError, match="positional"):
        check("turinglab serve my-study.yaml")
    with pytest.raises(AssertionError, match="no option --studdy"):
        check("turinglab serve --studdy x.yaml")
    with pytest.raises(AssertionError, match="no command"):
        check("turinglab servee")
