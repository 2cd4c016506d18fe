"""The layout of the tree: tests beside the package folders they test."""

from __future__ import annotations

from pathlib import Path

def test_tests_mirror_the_package_folders():
    """Issue 22: the tests of turinglab/X/ are in tests/X/, so a newcomer finds them beside the name.
    At the root only the tests of the whole tree (imports, layout, pytest set-up)."""
    tests = Path(__file__).resolve().parent
    pkg = tests.parent / "turinglab"
    loose = sorted(p.name for p in tests.glob("test_*.py"))
    assert loose == ["test_imports.py", "test_layout.py", "test_pytest_config.py"], loose
    for folder in sorted(p for p in tests.rglob("*") if p.is_dir()):
        rel = folder.relative_to(tests)
        if rel.parts[0] in ("data", "__pycache__") or "__pycache__" in rel.parts or not any(folder.glob("test_*.py")):
            continue
        assert rel.parts[0] == "benchmarks" or (pkg / rel).is_dir(), f"tests/{rel} mirrors no folder of turinglab/"


def test_no_merge_markers_are_left_in_the_tree():
    """A merge once left `<<<<<<<` markers in docs/protocol.md for a whole session: none in any
    text file of the tree (the package, docs, tests, benchmarks, the README)."""
    root = Path(__file__).resolve().parents[1]
    files = [root / "README.md", *[p for d in ("turinglab", "docs", "tests", "benchmarks", ".ci") for p in (root / d).rglob("*")
                                   if p.is_file() and p.suffix in {".py", ".md", ".html", ".js", ".css", ".json", ".yaml", ".yml", ""}]]
    marked = [f"{p.relative_to(root)}:{n}" for p in files for n, line in enumerate(p.read_text(errors="replace").splitlines(), 1)
              if line.startswith(("<<<<<<< ", ">>>>>>> ")) or line == "======="]
    assert not marked, marked


def leftovers(paths: list[str]) -> list[str]:
    """Files a merge or an editor leaves behind: `.orig`, `.rej`, `~` backups."""
    return [p for p in paths if p.endswith((".orig", ".rej", "~"))]


def test_no_merge_leftovers_are_tracked():
    """Issue 34: a merge left `turinglab/cli/static.py.orig` in git; no such file may be tracked."""
    import subprocess

    root = Path(__file__).resolve().parents[1]
    out = subprocess.run(["git", "ls-files", "-z"], cwd=root, capture_output=True, text=True, check=True).stdout
    tracked = [p for p in out.split("\0") if p]
    assert len(tracked) > 100, "git ls-files listed too few files; is this a checkout?"
    assert leftovers(tracked) == [], f"merge or editor leftovers tracked in git (git rm them): {leftovers(tracked)}"
    assert leftovers(["a/static.py.orig", "b.py.rej", "c.md~", "d.py", "orig.py"]) == ["a/static.py.orig", "b.py.rej", "c.md~"]


def test_the_walks_in_the_architecture_doc_name_real_functions():
    """Issue 34: docs/architecture.md walks a live message and a static trial through the code; every
    `name()` it names is defined in turinglab/ (a renamed function fails here until the walk follows)."""
    import re

    root = Path(__file__).resolve().parents[1]
    doc = (root / "docs" / "architecture.md").read_text(encoding="utf-8")
    walk = doc[doc.index("## Two walks"):doc.index("## Shared vocabulary")]
    names = set(re.findall(r"`(?:[\w./]+ )?(?:\w+\.)?(\w+)\(\)`", walk))
    assert len(names) >= 20, names
    source = "\n".join(p.read_text(encoding="utf-8") for p in (root / "turinglab").rglob("*.py"))
    source += (root / "turinglab" / "server" / "static" / "game.js").read_text(encoding="utf-8")
    missing = sorted(n for n in names if not re.search(rf"(def|function) {n}\b", source))
    assert not missing, missing


def test_no_file_is_too_long_and_the_game_session_stays_small():
    """Issue 34: no module of the package over 700 lines, and `GameSession`'s class body (its parts
    live in mixins: stored_game.py, presence.py, witness_replies.py) at most 350 lines."""
    import ast

    pkg = Path(__file__).resolve().parents[1] / "turinglab"
    long = {str(p.relative_to(pkg)): n for p in pkg.rglob("*.py") if (n := len(p.read_text().splitlines())) > 700}
    assert not long, f"files over 700 lines: {long}"
    tree = ast.parse((pkg / "server" / "live" / "session.py").read_text())
    cls = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "GameSession")
    assert cls.end_lineno - cls.lineno + 1 <= 350, cls.end_lineno - cls.lineno + 1
