"""The test suite's own configuration: no deprecation warning, no fixed shared scratch paths."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_pytest_starts_without_deprecation_warning():
    # configure-time warnings (e.g. pytest-asyncio's unset loop scope) become errors
    r = subprocess.run([sys.executable, "-W", "error::DeprecationWarning", "-m", "pytest",
                        "--collect-only", "-q", "-p", "no:cacheprovider", "-n", "0", "tests/cli/test_cli_root.py"],
                       cwd=ROOT, capture_output=True, text=True, timeout=300,
                       env={k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")})  # not as an xdist worker
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-2000:]
    assert "Warning" not in r.stdout + r.stderr


def test_tests_write_under_per_run_temporary_folders():
    """No test writes to a fixed path such as /tmp/turinglab-shots (shared between runs and users)."""
    fixed = re.compile(r"""["'](/tmp|/var/tmp)(/|["'])""")
    hits = [f"{p.name}:{i}" for p in sorted((ROOT / "tests").glob("*.py"))
            for i, line in enumerate(p.read_text().splitlines(), 1) if fixed.search(line)]
    assert hits == []
