"""Several studies on one server (issue 27 item 2): the paths, the redirect and cookie rewriting
under a mount, the `serve --study` errors, and one real `turinglab serve` with a folder of two studies."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import httpx
import pytest
from typer.testing import CliRunner

sys.path.insert(0, str(Path(__file__).parents[1]))
from static_judge_data import make_study  # noqa: E402

from turinglab.cli import app  # noqa: E402
from turinglab.server.studies import _moved, check_slugs, slug  # noqa: E402
from turinglab.server.testing import free_port  # noqa: E402
from turinglab.store.api import Store  # noqa: E402

LIVE = "name: {name}\nformat: two-player\nwitnesses:\n  - codename: Eliza\n    kind: eliza\n"


def live_file(folder: Path, file: str, name: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    p = folder / file
    p.write_text(LIVE.format(name=name))
    return p


def serve(*args: str):  # noqa: ANN201 - click Result
    return CliRunner().invoke(app, ["serve", "--port", str(free_port()), "--no-warm-up", *args])


def test_slug_is_the_name_in_lower_case_with_dashes():
    assert slug("Classroom study 2025!") == "classroom-study-2025"
    assert slug("  jones_bergen--2023 ") == "jones-bergen-2023"
    assert slug("日本") == ""


def test_two_studies_with_one_path_or_a_name_without_letters_are_refused():
    with pytest.raises(ValueError, match=r"a\.yaml and b\.yaml would both be served at /s/my-study/"):
        check_slugs([("a.yaml", "My study"), ("b.yaml", "my_study"), ("c.yaml", "other")])
    with pytest.raises(ValueError, match=r"c\.yaml: the study name '\?\?' has no letters or digits"):
        check_slugs([("a.yaml", "fine"), ("c.yaml", "??")])
    check_slugs([("a.yaml", "one"), ("b.yaml", "two")])  # no error


def test_redirects_and_cookie_paths_move_under_the_mount():
    root = b"/s/a"
    assert _moved(b"location", b"/p/x", root) == b"/s/a/p/x"
    assert _moved(b"Location", b"/s/a/p/x", root) == b"/s/a/p/x"  # already inside: not twice
    assert _moved(b"location", b"https://app.prolific.com/x?cc=1", root) == b"https://app.prolific.com/x?cc=1"
    assert _moved(b"location", b"//evil.example/x", root) == b"//evil.example/x"
    assert _moved(b"set-cookie", b"turinglab_p=p1; HttpOnly; Path=/; SameSite=lax", root) == \
        b"turinglab_p=p1; HttpOnly; Path=/s/a; SameSite=lax"
    assert _moved(b"set-cookie", b"dev=1; Path=/admin/login", root) == b"dev=1; Path=/s/a/admin/login"
    assert _moved(b"content-type", b"/p/x", root) == b"/p/x"


def test_serve_refuses_a_shared_path_an_empty_folder_and_a_bad_file(tmp_path):
    db = ["--db", f"sqlite:///{tmp_path / 'x.db'}"]
    a, b = live_file(tmp_path, "a.yaml", "My study"), live_file(tmp_path / "more", "b.yaml", "my-study")
    r = serve("--study", str(a), "--study", str(b), *db)
    assert r.exit_code == 2 and f"--study {a} and --study {b} would both be served at /s/my-study/" in r.output, r.output
    (tmp_path / "empty").mkdir()
    (tmp_path / "empty" / "notes.txt").write_text("not a study")
    r = serve("--study", str(tmp_path / "empty"), *db)
    assert r.exit_code == 2 and "the folder has no study files (*.yaml or *.yml)" in r.output, r.output
    folder = tmp_path / "two"
    live_file(folder, "a.yaml", "first")
    (folder / "b.yml").write_text("name: second\nformat: four-player\n")
    r = serve("--study", str(folder), *db)
    assert r.exit_code == 2 and str(folder / "b.yml") in r.output and "four-player" in r.output, r.output
    (folder / "b.yml").write_text("name: second\nwitnesses:\n  - codename: Sierra\n    kind: llm\n    model: m\n"
                                  "    base_url: http://127.0.0.1:9/v1\n    persona: {name: Sam, events: /no/such.yaml}\n")
    r = serve("--study", str(folder), *db)
    assert r.exit_code == 2 and f"--study {folder / 'b.yml'}: witness 'Sierra' (llm) cannot be built" in r.output, r.output
    assert not (tmp_path / "x.db").exists()  # nothing was created for a refused start


def test_serve_refuses_workers_redis_and_demo_with_several_studies(tmp_path):
    a, b = live_file(tmp_path, "a.yaml", "one"), live_file(tmp_path, "b.yaml", "two")
    for extra in (["--workers", "2"], ["--redis", "redis://127.0.0.1:6379/12"]):
        r = serve("--study", str(a), "--study", str(b), *extra)
        assert r.exit_code == 2 and "--workers and --redis serve one study" in r.output, r.output
    r = serve("--study", str(a), "--study", str(b), "--demo")
    assert r.exit_code == 2 and "--demo plays one live study" in r.output, r.output


def test_serve_a_folder_serves_each_study_under_its_path(tmp_path):
    """One `turinglab serve` process, a folder with a live study file, and a static study (from the
    database) named by a second --study: the list at /, each study's pages under /s/<slug>/."""
    from tests.server.test_server_cli import served

    url = f"sqlite:///{tmp_path / 'db.sqlite'}"
    with Store(url) as st:
        make_study(st, "word", None, name="Words judged")
    live_file(tmp_path / "studies", "chat.yaml", "Chat with us")
    port = free_port()
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([os.getcwd(), os.environ.get("PYTHONPATH", "")]),
           "TURINGLAB_ADMIN_PASSWORD": "pw"}
    proc = subprocess.Popen([sys.executable, "-m", "turinglab", "serve", "--study", str(tmp_path / "studies"),
                             "--study", "Words judged", "--db", url, "--port", str(port), "--no-warm-up"],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, cwd=tmp_path, env=env)
    base = f"http://127.0.0.1:{port}"
    try:
        index = served(proc, base + "/").text
        assert '<a href="/s/chat-with-us/">Chat with us</a> (live)' in index
        assert '<a href="/s/words-judged/">Human or machine? (word)</a> (static, word)' in index
        live = {"ok": True, "database": "ok", "writes": "none", "disk": "ok"}
        assert httpx.get(base + "/s/chat-with-us/healthz").json() == live
        # the root answers a load balancer with each study's own health, and nothing else (issue 41)
        health = httpx.get(base + "/healthz")
        assert health.status_code == 200 and set(health.json()) == {"ok", "studies"} and health.json()["ok"] is True
        assert health.json()["studies"] == {"chat-with-us": live,
                                            "words-judged": httpx.get(base + "/s/words-judged/healthz").json()}
        chat = httpx.get(base + "/s/chat-with-us/").text
        assert 'action="/s/chat-with-us/start"' in chat and 'href="/s/chat-with-us/static/style.css"' in chat
        assert 'action="/s/words-judged/start"' in httpx.get(base + "/s/words-judged/").text
        assert httpx.get(base + "/p/x").status_code == 404  # no study at the root any more
        r = httpx.post(base + "/s/chat-with-us/start")
        assert r.status_code == 303 and r.headers["location"].startswith("/s/chat-with-us/p/")
        assert "Path=/s/chat-with-us;" in r.headers["set-cookie"]
        r = httpx.get(base + "/s/words-judged/admin")  # its login, and back to the page asked for
        assert r.status_code == 303 and r.headers["location"] == "/s/words-judged/admin/login?next=/admin"
    finally:
        proc.terminate()
        out, _ = proc.communicate(timeout=20)
    assert f"{base}/s/chat-with-us/" in out and f"2 studies listed at {base}/" in out, out


def test_the_root_healthz_is_down_when_one_study_is():
    """Two studies, one whose database is down: the root says 503 and which study, with each study's own answer."""
    from fastapi import FastAPI
    from fastapi.responses import JSONResponse
    from fastapi.testclient import TestClient

    from turinglab.server.studies import Served, create_multi_app

    def study_app(ok: bool) -> FastAPI:
        a = FastAPI()
        a.get("/healthz")(lambda: JSONResponse({"ok": ok, "database": "ok" if ok else "down"}, status_code=200 if ok else 503))
        return a

    multi = create_multi_app([Served("up", "Up", "live", study_app(True)), Served("down", "Down", "static", study_app(False))])
    with TestClient(multi) as c:
        r = c.get("/healthz")
    assert r.status_code == 503
    assert r.json() == {"ok": False, "studies": {"up": {"ok": True, "database": "ok"}, "down": {"ok": False, "database": "down"}}}
