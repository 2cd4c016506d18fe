"""`turinglab admin ...` for scripts (issue 27): end a game, remove, block or unblock a participant,
pause or resume recruitment, list the actions, write Prolific's bonus file. The same functions
as /admin (turinglab/server/admin_actions.py): each action is a row the running server applies."""

from __future__ import annotations

import getpass
import sys

import typer

from turinglab.cli.common import DB_HELP, err_console, fail
from turinglab.cli.security import admin_app as app

_DB = typer.Option(None, "--db", help=DB_HELP)
_STUDY = typer.Option(None, "--study", help="study name (default: the database's only study)")
_AS = typer.Option(None, "--as", help="your researcher name, kept with the action (default: cli:<login name>)")
_REASON = typer.Option(None, "--reason", help="why (kept with the action; needed to end, remove or block)")


def _open(db: str | None):  # noqa: ANN202 - Store
    from turinglab.cli.common import read_store
    from turinglab.store import StoreError

    try:
        return read_store(db)
    except StoreError as exc:
        fail(str(exc))


def _study_id(store, name: str | None) -> int:  # noqa: ANN001
    studies = store.studies()
    if name is not None:
        studies = [s for s in studies if s.name == name]
    if not studies:
        fail(f"no study {name!r} in this database" if name else "this database has no study yet")
    names = sorted({s.name for s in studies})
    if len(names) > 1:
        fail(f"this database has several studies ({', '.join(names)}): name one with --study")
    return max(studies, key=lambda s: s.version).id


def _take(db: str | None, study: str | None, who: str | None, action: str, target: str | None,
          reason: str | None) -> tuple:
    from turinglab.analysis.export.pseudonyms import export_key
    from turinglab.server.admin_actions import ActionError, take

    store = _open(db)
    try:
        sid = store.game(target).study_id if action == "end_game" and target and _exists(store, target) \
            else _study_id(store, study)
        row = take(store, sid, who or f"cli:{getpass.getuser()}", action, target, reason, export_key(store))
    except ActionError as exc:
        fail(str(exc))
    return store, row


def _exists(store, game_id: str) -> bool:  # noqa: ANN001
    from turinglab.store.api import UnknownId

    try:
        store.game(game_id)
        return True
    except UnknownId:
        return False


@app.command("end-game")
def end_game(game_id: str = typer.Argument(..., help="the game id (/admin or `turinglab db games`)"),
             reason: str = _REASON, who: str = _AS, db: str = _DB,
             wait: float = typer.Option(10.0, "--wait", help="seconds to wait for the server to end it")) -> None:
    """End a game in progress: its players see the end, the game gets the flag ended_by_researcher."""
    from turinglab.server.admin_actions import wait_ended

    store, row = _take(db, None, who, "end_game", game_id, reason)
    if wait_ended(store, game_id, wait):
        typer.echo(f"game {game_id} ended (action {row.id})")
        return
    err_console.print(f"game {game_id}: end requested (action {row.id}), but no running server ended it within "
                      f"{wait:g} s; is the server running? A game no server runs is ended when it starts again.",
                      markup=False, highlight=False)
    raise typer.Exit(1)


def _participant_command(action: str, doc: str):  # noqa: ANN202 - a Typer command
    def command(participant: str = typer.Argument(..., help="pseudonym (P…, as on /admin), Prolific id or participant id"),
                reason: str = _REASON, study: str = _STUDY, who: str = _AS, db: str = _DB) -> None:
        _, row = _take(db, study, who, action, participant, reason)
        typer.echo(f"{action}: done (action {row.id}); the running server applies it within a second or two")

    command.__doc__ = doc
    return command


app.command("remove")(_participant_command(
    "remove", "Take a participant out of the waiting room and end their game; they may come back."))
app.command("block")(_participant_command(
    "block", "Remove a participant and let them start no more games (their Prolific id too)."))
app.command("unblock")(_participant_command("unblock", "Let a blocked participant play again."))


def _recruitment_command(action: str, doc: str):  # noqa: ANN202 - a Typer command
    def command(reason: str = _REASON, study: str = _STUDY, who: str = _AS, db: str = _DB) -> None:
        _, row = _take(db, study, who, action, None, reason)
        typer.echo(f"recruitment {action}d (action {row.id}); people in games finish them")

    command.__doc__ = doc
    return command


app.command("pause")(_recruitment_command(
    "pause", "Pause recruitment: new arrivals see a friendly page, people in games finish."))
app.command("resume")(_recruitment_command("resume", "Resume recruitment."))


@app.command("actions")
def actions(study: str = _STUDY, db: str = _DB) -> None:
    """The researchers' actions, newest first, as tab-separated lines (participants by pseudonym)."""
    from turinglab.analysis.export.pseudonyms import export_key
    from turinglab.server.admin_actions import shown_actions

    store = _open(db)
    for a in shown_actions(store, _study_id(store, study), export_key(store)):
        sys.stdout.write("\t".join(str(a[k] if a[k] is not None else "")
                                   for k in ("id", "t_ms", "researcher", "action", "target", "reason")) + "\n")


@app.command("bonus")
def bonus(out: str = typer.Argument(..., help="file to write (Prolific's bulk bonus: 'participant id,amount' lines); "
                                        "the games each line pays for go to OUT's name + '.games.csv'"),
          study: str = _STUDY, db: str = _DB,
          per_game: float = typer.Option(None, "--per-game", help="per game played (default: the study file's prolific.bonus_per_game)"),
          per_correct: float = typer.Option(None, "--per-correct", help="per right verdict (default: prolific.bonus_per_correct)")) -> None:
    """Write the bonus payments of a study in Prolific's bulk-bonus format (raw Prolific ids: for payment
    only), and beside it a table of the games each line pays for and the lines not paid, with why."""
    from pathlib import Path

    from turinglab.store.payments import games_csv, payments, prolific_csv

    store = _open(db)
    sid = _study_id(store, study)
    p = store.get_study(sid).study.prolific
    g = per_game if per_game is not None else (p.bonus_per_game if p else 0.0)
    c = per_correct if per_correct is not None else (p.bonus_per_correct if p else 0.0)
    if g < 0 or c < 0 or g + c == 0:
        fail("no bonus to pay: set prolific.bonus_per_game / bonus_per_correct in the study file, or --per-game / --per-correct")
    path = Path(out)
    table = path.with_name(path.name + ".games.csv")
    for f in (path, table):
        if f.exists():
            fail(f"{f} exists; choose a new file (it holds raw Prolific ids)")
    pay = payments(store, sid, g, c)
    path.write_text(prolific_csv(pay), encoding="utf-8")
    table.write_text(games_csv(pay), encoding="utf-8")
    typer.echo(f"{len(pay.paid)} bonuses, {pay.total} in total, written to {out}; the games each pays for in {table}")
    if pay.unpaid:
        typer.echo(f"{len(pay.unpaid)} lines not paid (unverified ids, blocked participants, games that do not "
                   f"count): see {table}")
