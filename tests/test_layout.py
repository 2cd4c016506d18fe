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
