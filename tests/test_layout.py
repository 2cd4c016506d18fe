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
