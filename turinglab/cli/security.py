"""`turinglab filter check` (the content filter's verdict on a text) and `turinglab admin
add-account` (researcher accounts of /admin): issue 24."""

from __future__ import annotations

import sys

import typer

from turinglab.cli.common import fail

filter_app = typer.Typer(no_args_is_help=True, help="The content filter: test a text against the word list.")


@filter_app.command("check")
def filter_check(
    text: str = typer.Argument(..., help="the message to judge, as a participant would type it"),
    study: str | None = typer.Option(None, "--study", help="study YAML file whose content_filter words are added"),
    word: list[str] = typer.Option([], "--word", "-w", help="an extra blocked word or phrase (repeatable)"),
    no_default: bool = typer.Option(False, "--no-default", help="without the shipped word list"),
    as_json: bool = typer.Option(False, "--json", help="one JSON object instead of lines"),
) -> None:
    """Print the verdict (ok, blocked, empty), the normalised text, the rule and the text with its
    personal data masked (as the server would relay it; '-' when there is none). Exit 1 when not ok."""
    import json

    from turinglab.server.content_filter import verdict

    words = list(word)
    if study:
        from turinglab.game.study_file import StudyFileError, load_study

        try:
            words += list(load_study(study).content_filter)
        except StudyFileError as exc:
            fail(str(exc))
    v = verdict(text, words, use_default=not no_default)
    if as_json:
        typer.echo(json.dumps(v, ensure_ascii=False))
    else:
        for k in ("verdict", "shown", "key", "rule", "masked"):
            typer.echo(f"{k}: {v[k] if v[k] is not None else '-'}")
    if v["verdict"] != "ok":
        raise typer.Exit(1)


admin_app = typer.Typer(no_args_is_help=True, help="Researcher accounts of the /admin pages.")


@admin_app.command("add-account")
def admin_add_account(
    name: str = typer.Argument(..., help="account name (letters, digits, . _ -)"),
    file: str = typer.Option(None, "--file", help="accounts file (default: $TURINGLAB_ADMIN_ACCOUNTS); keep it out of git"),
    password_stdin: bool = typer.Option(False, "--password-stdin", help="read the password from the first line of stdin"),
) -> None:
    """Add (or replace) a named account with a scrypt-hashed password; the server reads the file anew."""
    import os
    from pathlib import Path

    from turinglab.server.admin_auth import ACCOUNTS_ENV, AccountsFileError, add_account

    path = file or os.environ.get(ACCOUNTS_ENV)
    if not path:
        fail(f"no accounts file: give --file PATH or set ${ACCOUNTS_ENV} (the server reads the same variable)")
    if password_stdin:
        password = sys.stdin.readline().rstrip("\r\n")
    else:
        password = typer.prompt(f"password for {name}", hide_input=True, confirmation_prompt=True)
    try:
        replaced = add_account(Path(path), name, password)
    except (AccountsFileError, OSError) as exc:
        fail(str(exc))
    typer.echo(f"{'replaced' if replaced else 'added'} admin account {name!r} in {path}")
