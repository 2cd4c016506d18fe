"""`turinglab serve` for real: a subprocess on a free port, migrations at start, pages served."""

from __future__ import annotations

import subprocess
import sys
import time

import httpx

from turinglab.server.defaults import default_study
from turinglab.server.testing import free_port
from turinglab.store.api import Store


def test_default_study_is_offline_eliza_and_local_model():
    s = default_study()
    assert s.format == "two-player"
    assert [w.kind for w in s.witnesses] == ["eliza", "local"]


def test_serve_starts_migrates_and_serves(tmp_path):
    port = free_port()
    db = f"sqlite:///{tmp_path / 'serve.db'}"
    proc = subprocess.Popen([sys.executable, "-m", "turinglab", "serve", "--port", str(port), "--db", db,
                             "--no-warm-up"],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                r = httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=2)
                if r.status_code == 200:
                    break
            except httpx.TransportError:
                pass
            assert proc.poll() is None, proc.stdout.read()
            assert time.monotonic() < deadline, "turinglab serve did not come up within 60 s"
            time.sleep(0.2)
        assert r.json() == {"ok": True, "waiting": 0, "games": 0}
        assert "Start" in httpx.get(f"http://127.0.0.1:{port}/").text
        assert httpx.get(f"http://127.0.0.1:{port}/static/game.js").status_code == 200
    finally:
        proc.terminate()
        proc.wait(timeout=20)
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
