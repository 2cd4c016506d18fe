"""Report sections come through the plugin hook: the built-in blinding audit appears in the HTML and
Markdown report with --audit, and is gone from both when its plugin is unregistered."""

from __future__ import annotations

import importlib

from typer.testing import CliRunner

from turinglab.cli import app
from turinglab.plugins.manager import plugin_manager

SECTIONS = "turinglab.analysis.report.sections"


def test_the_audit_section_comes_through_the_hook(sqlite_url, tmp_path):
    run = CliRunner().invoke
    assert run(app, ["demo-data", "--db", sqlite_url, "--games", "60", "--seed", "8", "--leak", "late-fallback"]).exit_code == 0
    outs = {}
    for fmt, name in (("html", "r.html"), ("md", "r.md")):
        r = run(app, ["report", "--db", sqlite_url, "--out", str(tmp_path / name), "--format", fmt, "--audit"])
        assert r.exit_code == 0, r.output
        outs[fmt] = (tmp_path / name).read_text()
    assert "<h2>Blinding audit</h2>" in outs["html"] and "Blinding audit: What the interrogator" in outs["html"]
    assert "## Blinding audit" in outs["md"]
    pm = plugin_manager()
    pm.unregister(name=SECTIONS)
    try:
        r = run(app, ["report", "--db", sqlite_url, "--out", str(tmp_path / "none.md"), "--format", "md", "--audit"])
        assert r.exit_code == 0, r.output
        assert "Blinding audit" not in (tmp_path / "none.md").read_text()
    finally:
        pm.register(importlib.import_module(SECTIONS), name=SECTIONS)
