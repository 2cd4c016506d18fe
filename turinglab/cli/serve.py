"""`turinglab serve`: the live game or a static test's judge pages in the browser."""

from __future__ import annotations

import typer
from rich.markup import escape

from turinglab.cli.common import console, database_location, err_console, fail, read_study


app = typer.Typer()  # root command
DEMO_DB = "sqlite:///./turinglab-demo.db"  # `serve --demo` without --db: never the study's database


def _log_progress() -> None:
    """Show turinglab's INFO lines (e.g. the local model's progress) on stderr during `serve`."""
    import logging

    import sys

    class _Stderr(logging.StreamHandler):
        """Writes to whatever sys.stderr is now (a handler bound to a stream that was since
        closed, e.g. a test runner's capture, raised on every later line)."""

        @property
        def stream(self):  # noqa: ANN202
            return sys.stderr

        @stream.setter
        def stream(self, _value) -> None:  # noqa: ANN001
            pass

    lg = logging.getLogger("turinglab")
    if not lg.handlers:
        h = _Stderr()
        h.setFormatter(logging.Formatter("%(levelname)s:     %(message)s"))
        lg.addHandler(h)
    lg.setLevel(logging.INFO)


def _static_to_serve(study: str, db: str | None):  # noqa: ANN202 - StaticStudy | None
    """A static study to serve: a static study file (it has `task:` or a static preset), or the name
    of a static study in the database when no such file exists; None for a live study file."""
    from pathlib import Path

    from turinglab.game.static_config import load_if_static

    p = Path(study)
    if p.is_file():
        return read_study(load_if_static, p)
    if p.suffix.lower() in (".yaml", ".yml") or "/" in study:
        fail(f"--study {study}: no such file; give a study YAML file or the name of a static study "
             "(see `turinglab static import`)")
    from turinglab.store import Store, StoreError
    from turinglab.store.db import existing_database

    try:
        store = Store(existing_database(db))
    except StoreError as exc:
        fail(f"--study {study}: no such file, and no database to look it up in ({exc})")
    try:
        return store.static_study(study).study
    except StoreError as exc:
        fail(f"--study {study}: no such file, and {exc}")
    finally:
        store.close()


def _check_port(host: str, port: int) -> None:
    """Fail in one line when nothing can listen on host:port (a server is already there)."""
    import socket

    try:
        family, kind, proto, _, addr = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0]
    except socket.gaierror as exc:
        fail(f"--host {host}: not an address of this machine ({exc.strerror})")
    with socket.socket(family, kind, proto) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind(addr)
        except OSError as exc:
            fail(f"cannot listen on {host}:{port}: {exc.strerror or exc}; is another server running there? "
                 "Stop it, or choose another port with --port.")


def _is_folder(entry: str) -> bool:
    from pathlib import Path

    return Path(entry).is_dir()


def _study_files(entries: list[str]) -> list[str]:
    """The --study entries with each folder replaced by its study files (*.yaml, *.yml, by name)."""
    from pathlib import Path

    out: list[str] = []
    for entry in entries:
        p = Path(entry)
        if not p.is_dir():
            out.append(entry)
            continue
        files = sorted(f for f in p.iterdir() if f.is_file() and f.suffix.lower() in (".yaml", ".yml"))
        if not files:
            fail(f"--study {entry}: the folder has no study files (*.yaml or *.yml)")
        out += [str(f) for f in files]
    return out


def _serve_several(entries: list[str], db: str | None, host: str, port: int, warm_up: bool, workers: int,
                   redis: str | None, demo: bool, proxy_kw: dict) -> None:
    """Several studies on one server (turinglab/server/studies.py): each under /s/<slug>/."""
    import uvicorn

    if workers > 1 or redis:
        fail("--workers and --redis serve one study: give one --study (run one `turinglab serve --redis ...` "
             "per study to run several studies as clusters)")
    if demo:
        fail("--demo plays one live study: give one --study")
    from turinglab.game.study_file import load_study
    from turinglab.server.app import WitnessSetupError, check_witnesses, create_app
    from turinglab.server.judging.pages import create_static_app
    from turinglab.server.studies import Served, check_slugs, create_multi_app, slug
    from turinglab.store.db import StoreError

    chosen = []
    for entry in entries:
        static = _static_to_serve(entry, db)
        chosen.append((entry, static if static is not None else read_study(load_study, entry)))
    try:
        check_slugs([(f"--study {entry}", st.name) for entry, st in chosen])
        for entry, st in chosen:  # every study's witnesses before any study touches the database
            if not hasattr(st, "task"):
                check_witnesses(st)
    except ValueError as exc:  # WitnessSetupError too
        fail(f"--study {entry}: {exc}" if isinstance(exc, WitnessSetupError) else str(exc))
    _log_progress()
    served = []
    for entry, st in chosen:
        live = not hasattr(st, "task")
        try:
            web = create_app(st, db, warm_up=warm_up) if live else create_static_app(st, db)
            for line in ([] if live else dict.fromkeys([web.state.left_out, web.state.not_ready])):
                if line:
                    err_console.print(f"turinglab: warning: {line}", markup=False, highlight=False, soft_wrap=True)
        except (StoreError, WitnessSetupError) as exc:
            fail(f"--study {entry}: {exc}")
        served.append(Served(slug(st.name), st.display_name or st.name, "live" if live else f"static, {st.task}", web))
        console.print(f"turinglab: study [bold]{escape(st.name)}[/bold] on http://{host}:{port}/s/{slug(st.name)}/"
                      f"  (admin: /s/{slug(st.name)}/admin)", highlight=False)
    console.print(f"turinglab: {len(served)} studies listed at http://{host}:{port}/", highlight=False)
    console.print(f"turinglab: database {database_location(db)}", highlight=False)
    from turinglab.server.slowclients import protocol_class
    from turinglab.server.testing import WS_MAX_BYTES
    from turinglab.server.tuning import tune_gc

    tune_gc()
    uvicorn.run(create_multi_app(served), host=host, port=port, log_level="info", ws_max_size=WS_MAX_BYTES,
                http=protocol_class(), **proxy_kw)


@app.command()
def serve(
    studies: list[str] = typer.Option(None, "--study", help="Study YAML file (live game or static test), or the name of "
                                      "a static study in the database (default: two-player, ELIZA + the local model). "
                                      "Repeat it, or give a folder of study files, to serve several studies, each "
                                      "under /s/<its name>/ with a list of them at /."),
    host: str = typer.Option("127.0.0.1", "--host", help="Address to listen on."),
    port: int = typer.Option(8000, "--port", help="Port to listen on."),
    db: str = typer.Option(None, "--db", help="Database URL (default: $DATABASE_URL, else sqlite:///./turinglab.db)."),
    warm_up: bool = typer.Option(True, "--warm-up/--no-warm-up", help="Load the local model at start."),
    workers: int = typer.Option(1, "--workers", help="Worker processes on this port (more than 1 needs --redis "
                                "and PostgreSQL); see docs/deploy.md."),
    redis: str = typer.Option(None, "--redis", help="Redis URL shared by every worker of the study (e.g. "
                              "redis://127.0.0.1:6379/0): workers here and on other hosts serve it together."),
    forwarded_allow_ips: str = typer.Option(None, "--forwarded-allow-ips", help="addresses of the reverse proxies "
                                            "whose X-Forwarded-For/-Proto are believed, comma-separated (default: "
                                            "$TURINGLAB_FORWARDED_ALLOW_IPS, else none)"),
    demo: bool = typer.Option(False, "--demo", help="Demo mode: /demo opens every role (interrogator, human "
                              "witness, the AI's view) in one browser; every page says DEMO, every game is "
                              f"flagged demo, and the database defaults to {DEMO_DB} (not your study's)."),
) -> None:
    """Run the live imitation game, or a static test's judge pages, in the browser (with /admin)."""
    import os

    import uvicorn

    from turinglab.server.proxies import ENV as PROXY_ENV, proxy_settings

    if forwarded_allow_ips is not None:  # the cluster's worker processes read it from the environment
        os.environ[PROXY_ENV] = forwarded_allow_ips
    proxy_kw = proxy_settings()

    _check_port(host, port)  # before the database is created or a model loaded
    several = len(studies or []) > 1 or any(_is_folder(x) for x in studies or [])
    if several:
        _serve_several(_study_files(studies), db, host, port, warm_up, workers, redis, demo, proxy_kw)
        return
    study = studies[0] if studies else None

    if demo and (workers > 1 or redis):
        fail("--demo runs on one worker: leave out --workers and --redis")
    if demo:
        db = db or DEMO_DB
    if workers > 1 or redis:
        from turinglab.server.workers import serve_cluster

        serve_cluster(study, db, redis, workers, host, port, warm_up, fail)
        return

    from turinglab.server.defaults import default_study
    from turinglab.store.db import StoreError

    static = _static_to_serve(study, db) if study else None
    if static is not None and demo:
        fail(f"--demo plays a live study; {study} is a static study (its judge pages need no demo)")
    if static is not None:
        from turinglab.server.judging.pages import create_static_app

        try:
            web = create_static_app(static, db)
        except StoreError as exc:
            fail(str(exc))
        console.print(f"turinglab: static study [bold]{escape(static.name)}[/bold] ({static.task}) on http://{host}:{port}/"
                      f"  (admin: /admin)", highlight=False)
        for line in dict.fromkeys([web.state.left_out, web.state.not_ready]):  # never dealt; "not ready"
            if line:
                err_console.print(f"turinglab: warning: {line}", markup=False, highlight=False, soft_wrap=True)
        console.print(f"turinglab: database {database_location(db)}", highlight=False)
        from turinglab.server.tuning import tune_gc

        tune_gc()  # full collections of the start-up objects paused the judge pages for 0.1-0.4 s
        uvicorn.run(web, host=host, port=port, log_level="info", **proxy_kw)
        return
    from turinglab.game.study_file import load_study

    chosen = read_study(load_study, study) if study else default_study()
    from turinglab.server.app import WitnessSetupError, create_app

    _log_progress()  # the local model's first start (assembling, checking, loading) says what it does
    try:
        web = create_app(chosen, db, warm_up=warm_up, demo=demo)
    except (StoreError, WitnessSetupError) as exc:
        fail(str(exc))
    from turinglab.server.tuning import tune_gc

    tune_gc()
    console.print(f"turinglab: study [bold]{escape(chosen.name)}[/bold] ({chosen.format}) on http://{host}:{port}/"
                  f"  (admin: /admin)", highlight=False)
    if demo:
        console.print(f"turinglab: DEMO mode: open http://{host}:{port}/demo (every game is flagged demo)",
                      highlight=False)
    console.print(f"turinglab: database {database_location(db)}", highlight=False)
    from turinglab.server.slowclients import protocol_class
    from turinglab.server.testing import WS_MAX_BYTES

    uvicorn.run(web, host=host, port=port, log_level="info", ws_max_size=WS_MAX_BYTES, http=protocol_class(),
                **proxy_kw)
