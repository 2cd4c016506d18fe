"""`turinglab plugins`: the installed plugins and what each registers through which hook."""

from __future__ import annotations

import typer

from turinglab.cli.common import console, fail

app = typer.Typer()


@app.command("plugins")
def plugins(as_json: bool = typer.Option(False, "--json", help="print JSON")) -> None:
    """List the plugins (built-in and installed) and their hook implementations (docs/plugins.md)."""
    import json

    from rich.table import Table

    from turinglab.plugins.manager import PluginError, listing

    try:
        found = listing()
    except PluginError as exc:
        fail(str(exc))
    if as_json:
        print(json.dumps(found, indent=2))
        return
    table = Table("plugin", "package", "hook", "gives")
    for p in found:
        for n, (hook, names) in enumerate(sorted(p["hooks"].items())):
            table.add_row(p["plugin"] if n == 0 else "", p["package"] if n == 0 else "",
                          hook.removeprefix("turinglab_"), ", ".join(names))
    console.print(table)
