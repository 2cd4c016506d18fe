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


TOP = {p.name for p in ROOT.iterdir() if not p.name.startswith(".")} - {"__pycache__"}
PACKAGE_DIRS = {p.name for p in (ROOT / "turinglab").rglob("*") if p.is_dir() and p.name != "__pycache__"}


def repo_paths(text: str) -> list[str]:
    """Paths in inline code that look like the repository's: /-separated plain names starting at a top-level
    entry of the tree, at a folder of the package (`server/app.py`, `guard/task.py`) or at ../ (which
    leaves the clone); wildcards and placeholders are not paths."""
    found = []
    for span in re.findall(r"`([^`\s]+)`", text):
        path = span.rstrip("/.,:;")
        if re.fullmatch(r"(?:\.\./)+[\w.-]+(?:/[\w.-]+)*|[\w.-]+(?:/[\w.-]+)+", path) and (
                path.startswith("../") or path.split("/")[0] in TOP | PACKAGE_DIRS):
            found.append(path)
    return found


def exists(path: str) -> bool:
    first = path.split("/")[0]
    return (first in TOP and (ROOT / path).exists()) or (first in PACKAGE_DIRS and any(ROOT.glob(f"turinglab/**/{path}")))


PATHS = [(f"{doc.name}:{n}", p) for doc in DOCS for n, line in enumerate(doc.read_text(encoding="utf-8").splitlines(), 1)
         for p in repo_paths(line)]


def test_the_docs_name_many_paths():
    assert len(PATHS) > 30 and ("README.md:42", "turinglab/statictests/zhang2023/") not in PATHS


@pytest.mark.parametrize("where,path", PATHS, ids=[f"{w}:{p}" for w, p in PATHS])
def test_a_documented_path_exists_in_a_clone(where, path):
    assert not path.startswith("../"), f"{where}: {path} is outside the repository, so a clone does not have it"
    assert exists(path), f"{where}: {path} does not exist in the repository"


def test_the_path_check_catches_what_a_clone_lacks():
    assert repo_paths("items in `shared/data/zhang2023`, `../shared/data/zhang2023/word.json` and "
                      "`turinglab/statictests/zhang2023/word.json`, `docs/*.md`, `turinglab serve`, `live/host.py`") == [
        "../shared/data/zhang2023/word.json", "turinglab/statictests/zhang2023/word.json", "live/host.py"]
    assert exists("live/host.py") and not exists("live/hosts.py")
    with pytest.raises(AssertionError, match="outside the repository"):
        test_a_documented_path_exists_in_a_clone("x", "../shared/data/zhang2023/word.json")
    with pytest.raises(AssertionError, match="does not exist"):
        test_a_documented_path_exists_in_a_clone("x", "tests/test_adversarial.py")
