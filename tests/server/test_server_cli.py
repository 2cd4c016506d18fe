"""`turinglab serve` for real: a subprocess on a free port, migrations at start, pages served."""

from __future__ import annotations

import subprocess
import sys
import time

import httpx

from turinglab.server.defaults import default_study
from turinglab.server.testing import free_port
from turinglab.store.api import Store


def served(proc: subprocess.Popen, url: str, wait_s: float = 60) -> httpx.Response:
    """The first 200 answer of `url` from the `turinglab serve` process `proc` (up within wait_s)."""
    deadline = time.monotonic() + wait_s
    while True:
        try:
            r = httpx.get(url, timeout=2)
            if r.status_code == 200:
                return r
        except httpx.TransportError:
            pass
        assert proc.poll() is None, proc.stdout.read()
        assert time.monotonic() < deadline, f"turinglab serve did not answer {url} within {wait_s:.0f} s"
        time.sleep(0.2)


def test_default_study_is_offline_eliza_and_local_model():
    s = default_study()
    assert s.format == "two-player"
    assert [w.kind for w in s.witnesses] == ["eliza", "local"]


def test_serve_starts_migrates_and_serves(tmp_path):
    """Without --db or $DATABASE_URL the database is ./turinglab.db in the working directory, and
    serve says where it is (README: "Where the data goes")."""
    import os

    port = free_port()
    db = f"sqlite:///{tmp_path / 'turinglab.db'}"
    env = {k: v for k, v in os.environ.items() if k != "DATABASE_URL"}
    env["PYTHONPATH"] = os.pathsep.join([os.getcwd(), env.get("PYTHONPATH", "")])
    proc = subprocess.Popen([sys.executable, "-m", "turinglab", "serve", "--port", str(port), "--no-warm-up"],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, cwd=tmp_path, env=env)
    try:
        r = served(proc, f"http://127.0.0.1:{port}/healthz")
        assert r.json() == {"ok": True, "database": "ok", "writes": "none", "disk": "ok"}
        assert "Start" in httpx.get(f"http://127.0.0.1:{port}/").text
        assert httpx.get(f"http://127.0.0.1:{port}/static/game.js").status_code == 200
    finally:
        proc.terminate()
        out, _ = proc.communicate(timeout=20)
    assert f"turinglab: database {tmp_path.resolve() / 'turinglab.db'} (SQLite" in out.replace("\n", ""), out
    with Store(db) as store:
        (study,) = store.studies()
        assert study.name == "turinglab-default"


def test_serve_bad_study_file_is_a_clear_error(tmp_path):
    bad = tmp_path / "study.yaml"
    bad.write_text("name: x\nformat: four-player\n")
    r = subprocess.run([sys.executable, "-m", "turinglab", "serve", "--study", str(bad),
                        "--db", f"sqlite:///{tmp_path / 'x.db'}"], capture_output=True, text=True, timeout=60)
    assert r.returncode == 2
    assert "format" in r.stderr and "four-player" in r.stderr


def test_serve_bad_witness_fails_at_start(tmp_path):
    """A witness whose events file is missing stops `turinglab serve` at start (not mid-game)."""
    study = tmp_path / "study.yaml"
    missing = tmp_path / "no-such-events.yaml"
    study.write_text(f"""name: bad-witness
witnesses:
  - codename: Dragon
    kind: eliza
  - codename: Sierra
    kind: llm
    model: some-model
    base_url: http://127.0.0.1:9/v1
    persona:
      name: Sam
      events: {missing}
""")
    db = tmp_path / "x.db"
    r = subprocess.run([sys.executable, "-m", "turinglab", "serve", "--study", str(study), "--no-warm-up",
                        "--port", str(free_port()), "--db", f"sqlite:///{db}"],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 2, r.stderr
    lines = [x for x in r.stderr.splitlines() if x.strip()]
    assert len(lines) == 1, r.stderr
    assert lines[0].startswith("error: witness 'Sierra' (llm) cannot be built")
    assert str(missing) in lines[0] and "cannot read" in lines[0] and "fix this witness" in lines[0]
    assert not db.exists()  # nothing was stored


def test_create_app_checks_every_witness(tmp_path):
    from turinglab.game.config import Study, WitnessSpec
    from turinglab.server.app import WitnessSetupError, check_witnesses, create_app

    good = Study(name="w", witnesses=(WitnessSpec(codename="Dragon", kind="eliza"),
                                      WitnessSpec(codename="Echo", kind="llm", model="m", base_url="http://x/v1")))
    check_witnesses(good)  # builds, opens nothing
    bad = good.model_copy(update={"witnesses": good.witnesses + (
        WitnessSpec(codename="Foxtrot", kind="llm", model="m", base_url="http://x/v1", prompt="no-such-prompt"),)})
    try:
        create_app(bad, f"sqlite:///{tmp_path / 'y.db'}")
    except WitnessSetupError as exc:
        assert "'Foxtrot'" in str(exc) and "no-such-prompt" in str(exc) and "\n" not in str(exc)
    else:
        raise AssertionError("a bad prompt was accepted")
    script = tmp_path / "bad.txt"
    script.write_text("(((not a script")
    bad_eliza = Study(name="w2", witnesses=(WitnessSpec(codename="Golf", kind="eliza", script=str(script)),))
    try:
        check_witnesses(bad_eliza)
    except WitnessSetupError as exc:
        assert "'Golf' (eliza)" in str(exc)
    else:
        raise AssertionError("a bad ELIZA script was accepted")


def test_serve_on_a_port_in_use_is_one_line_and_creates_nothing(tmp_path):
    """Issue 27: serve on a busy port used to create turinglab.db, then print uvicorn's raw bind error."""
    import os
    import socket

    busy = socket.socket()
    busy.bind(("127.0.0.1", 0))
    busy.listen()
    port = busy.getsockname()[1]
    env = {k: v for k, v in os.environ.items() if k != "DATABASE_URL"}
    env["PYTHONPATH"] = os.pathsep.join([os.getcwd(), env.get("PYTHONPATH", "")])
    try:
        r = subprocess.run([sys.executable, "-m", "turinglab", "serve", "--port", str(port), "--no-warm-up"],
                           capture_output=True, text=True, cwd=tmp_path, env=env, timeout=60)
    finally:
        busy.close()
    assert r.returncode == 2, r.stderr
    assert f"cannot listen on 127.0.0.1:{port}" in r.stderr and "--port" in r.stderr
    assert "Traceback" not in r.stderr and len(r.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "turinglab.db").exists()


def test_serve_demo_uses_its_own_database_and_says_demo(tmp_path):
    """`serve --demo` (issue 27): its own database (not $DATABASE_URL's), /demo and the banner;
    with --workers it refuses in one line."""
    import os

    port = free_port()
    env = {**os.environ, "DATABASE_URL": f"sqlite:///{tmp_path / 'study.db'}"}
    env["PYTHONPATH"] = os.pathsep.join([os.getcwd(), env.get("PYTHONPATH", "")])
    proc = subprocess.Popen([sys.executable, "-m", "turinglab", "serve", "--demo", "--port", str(port), "--no-warm-up"],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, cwd=tmp_path, env=env)
    try:
        r = served(proc, f"http://127.0.0.1:{port}/demo")
        assert "demo-banner" in r.text and "Start a demo" in r.text
        assert "demo-banner" in httpx.get(f"http://127.0.0.1:{port}/").text
    finally:
        proc.terminate()
        out, _ = proc.communicate(timeout=20)
    assert "DEMO mode" in out and "turinglab-demo.db" in out.replace("\n", ""), out
    assert (tmp_path / "turinglab-demo.db").exists() and not (tmp_path / "study.db").exists()
    r = subprocess.run([sys.executable, "-m", "turinglab", "serve", "--demo", "--workers", "2", "--port", str(port)],
                       capture_output=True, text=True, cwd=tmp_path, env=env, timeout=60)
    assert r.returncode == 2 and "--demo runs on one worker" in r.stderr, r.stderr


def test_serve_prints_a_study_name_as_written(tmp_path):
    """A study's name is the researcher's text: `[` in it is printed, not read as Rich markup."""
    import os

    study = tmp_path / "s.yaml"
    study.write_text("name: '[bold]pilot [2]'\nwitnesses:\n  - {codename: Eliza, kind: eliza}\n")
    port = free_port()
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([os.getcwd(), os.environ.get("PYTHONPATH", "")])}
    proc = subprocess.Popen([sys.executable, "-m", "turinglab", "serve", "--study", str(study), "--port", str(port),
                             "--db", f"sqlite:///{tmp_path / 't.db'}", "--no-warm-up"],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, cwd=tmp_path, env=env)
    try:
        served(proc, f"http://127.0.0.1:{port}/healthz")
    finally:
        proc.terminate()
        out, _ = proc.communicate(timeout=20)
    assert "study [bold]pilot [2] (two-player)" in out.replace("\n", ""), out


def test_serve_workers_with_no_redis_is_one_line_naming_it(tmp_path, postgres_url):
    """Issue 35.7: no Redis at --redis: one line naming Redis and the URL, exit 2, no workers started."""
    study = tmp_path / "study.yaml"
    study.write_text("name: nr\nwitnesses:\n  - {codename: Eliza, kind: eliza}\n")
    url = f"redis://127.0.0.1:{free_port()}/0"  # nothing listens there
    r = subprocess.run([sys.executable, "-m", "turinglab", "serve", "--study", str(study), "--workers", "2",
                        "--redis", url, "--port", str(free_port()), "--db", postgres_url],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 2, r.stdout + r.stderr
    lines = [x for x in r.stderr.splitlines() if x.strip()]
    assert len(lines) == 1 and "Redis does not answer" in lines[0] and url in lines[0], r.stderr
    assert "worker" not in r.stdout
