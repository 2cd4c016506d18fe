"""`turinglab participant withdraw ID --reason TEXT` (issue 38): erase a participant's data
(turinglab/store/withdraw.py); the same as /admin's withdrawal form."""

from __future__ import annotations

import getpass

import typer

from turinglab.cli.common import DB_HELP, fail

app = typer.Typer(no_args_is_help=True, help="A participant's rights: withdraw their data.")


@app.command()
def withdraw(participant: str = typer.Argument(..., help="pseudonym (P…, as on /admin), participant id (their "
                                                          "token) or Prolific id"),
             reason: str = typer.Option(None, "--reason", help="why (kept in the withdrawal log)"),
             who: str = typer.Option(None, "--as", help="your researcher name (default: cli:<login name>)"),
             db: str = typer.Option(None, "--db", help=DB_HELP)) -> None:
    """Erase a participant's messages, verdict reasons, survey answers and ids everywhere; their
    games keep their place (and replay), the games they judged leave the analyses (flag withdrawn)."""
    from turinglab.analysis.export.pseudonyms import export_key
    from turinglab.cli.common import read_store
    from turinglab.server.admin_actions import ActionError, find_participant
    from turinglab.store import StoreError
    from turinglab.store.withdraw import withdraw as erase

    if not (reason or "").strip():
        fail("say why with --reason TEXT (it is kept in the withdrawal log; what is erased is not)")
    store = read_store(db)
    try:
        pid = find_participant(store, participant, export_key(store))
        w = erase(store, pid, reason, who or f"cli:{getpass.getuser()}")
    except (ActionError, StoreError) as exc:
        fail(str(exc))
    finally:
        store.close()
    typer.echo(f"withdrawn: {w.games} game(s) erased of their text and ids (withdrawal {w.id}, placeholder "
               f"{w.placeholder}); games not yet ended are ended by the server running them")
