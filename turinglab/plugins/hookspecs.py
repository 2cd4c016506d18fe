"""The hooks a turinglab plugin may implement. Each returns a list of descriptions (`kinds.py`);
the manager joins the lists of every plugin. A plugin implements a hook as a module-level function
of the same name marked `@hookimpl` (see docs/plugins.md for each contract)."""

from __future__ import annotations

import pluggy

PROJECT = "turinglab"
hookspec = pluggy.HookspecMarker(PROJECT)
hookimpl = pluggy.HookimplMarker(PROJECT)


@hookspec
def turinglab_witness_kinds() -> list:
    """Witness kinds (`kinds.WitnessKind`): a name usable as `kind:` in a study file, its options
    model, a factory building a `Witness` from a `WitnessSpec`, and the named witnesses it offers."""


@hookspec
def turinglab_static_tasks() -> list:
    """Static tasks (`kinds.StaticTask`): a name usable as `task:` in a static study file, how its
    items are checked on import, shown on the judge page, questioned and reported."""


@hookspec
def turinglab_importers() -> list:
    """Importers (`kinds.Importer`): a `static import --format` name and its reader."""


@hookspec
def turinglab_ai_judges() -> list:
    """AI judges (`kinds.AIJudge`): a `judges evaluate --judge` name, its features, its model."""


@hookspec
def turinglab_content_filters() -> list:
    """Content filters (`kinds.ContentFilterKind`): each checks every message before it is
    relayed; the composed filter blocks what any of them blocks."""


@hookspec
def turinglab_report_sections() -> list:
    """Report sections (`kinds.ReportSection`): a title and an HTML/Markdown fragment made from a
    study's analysed data, appended to `turinglab report`."""
