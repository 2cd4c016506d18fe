"""`turinglab i18n extract|update|compile`: the participant pages' message catalogues (issue 39)."""

from __future__ import annotations

import typer

from turinglab.cli.common import console, fail

app = typer.Typer(no_args_is_help=True, help="Message catalogues of the participant pages (Babel).")


@app.command()
def extract(check: bool = typer.Option(False, "--check", help="only say whether messages.pot is up to date (exit 1 if not)")) -> None:
    """Collect every message of the code, templates and scripts into turinglab/locale/messages.pot."""
    from turinglab.i18n import tools

    try:
        cat = tools.extract()
    except tools.I18nError as exc:
        fail(str(exc))
    new = {m.id for m in cat if m.id}
    if check:
        old = {m.id for m in tools.read(tools.POT) if m.id} if tools.POT.is_file() else set()
        if old != new:
            fail(f"messages.pot is out of date ({len(new - old)} new, {len(old - new)} gone): run "
                 "`turinglab i18n extract` then `turinglab i18n update`", code=1)
        console.print(f"messages.pot is up to date ({len(new)} messages)")
        return
    tools.write(cat, tools.POT)
    console.print(f"wrote {tools.POT} ({len(new)} messages)")


@app.command()
def update(add: str = typer.Option(None, "--add", help="start the catalogue of a new language, e.g. fr or pt-BR")) -> None:
    """Bring every catalogue in step with messages.pot (new messages left to translate)."""
    from turinglab.i18n import tools

    try:
        for p in tools.update(add):
            s = tools.check(p)
            console.print(f"{p}: {s.total - len(s.missing)} of {s.total} translated")
    except tools.I18nError as exc:
        fail(str(exc))


@app.command(name="compile")
def compile_(check: bool = typer.Option(False, "--check", help="exit 1 if a catalogue has untranslated, fuzzy or mismatched messages")) -> None:
    """Write each catalogue's .mo (the server also compiles a .po on first use) and say what is missing."""
    from turinglab.i18n import tools

    incomplete = []
    for s in tools.compile_all():
        lang = s.path.parent.parent.name
        line = f"{lang}: {s.total - len(s.missing)} of {s.total} translated"
        if s.fuzzy or s.bad_placeholders:
            line += f", {len(s.fuzzy)} fuzzy, {len(s.bad_placeholders)} with placeholders unlike the English"
        console.print(line, markup=False)
        if not s.complete:
            incomplete.append(lang)
            for m in (s.missing + s.fuzzy + s.bad_placeholders)[:5]:
                console.print(f"  to do: {m!r}", markup=False)
    if check and incomplete:
        fail(f"incomplete catalogues: {', '.join(incomplete)}", code=1)
