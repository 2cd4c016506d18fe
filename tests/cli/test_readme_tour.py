"""The README's static tour, word for word, in a fresh clone (issue 41).

The repository is cloned (`git clone` of this working tree's committed HEAD) into a temporary folder and
installed with `pip install -e .` into a new venv. To keep the test fast and offline, the venv is made with
`--system-site-packages` (the dependencies are those already installed, not downloaded again) and pip runs
with `--no-build-isolation --no-deps`. The README's block under "A static Turing test" is then run line by
line with bash in the clone, with the database in the temporary folder (`DATABASE_URL`): `serve` runs as a
subprocess on a free port (`--port` is the one word added), its judge page is fetched, and it is stopped with
Ctrl-C (SIGINT) before the report is made. A path the README names that a clone lacks fails here.
"""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def static_tour() -> list[str]:
    """The command lines of the README's "A static Turing test" block, comments removed."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    block = re.search(r"A static Turing test.*?```bash\n(.*?)```", text, re.S).group(1)
    return [line.split("  #")[0].strip() for line in block.splitlines() if line.strip()]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_the_tour_is_import_serve_report():
    lines = static_tour()
    assert [re.match(r"(turinglab \w+(?: \w+)?|\w+=)", line).group(1) for line in lines] == [
        "D=", "turinglab static import", "turinglab serve", "turinglab report"]


@pytest.mark.slow
def test_a_fresh_clone_follows_the_static_tour(tmp_path):
    if subprocess.run(["git", "-C", str(ROOT), "rev-parse", "HEAD"], capture_output=True).returncode:
        pytest.skip("not a git checkout")
    clone, venv = tmp_path / "clone", tmp_path / "venv"
    subprocess.run(["git", "clone", "-q", str(ROOT), str(clone)], check=True)
    subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", str(venv)], check=True)
    pip = [str(venv / "bin" / "python"), "-m", "pip", "install", "-q", "--no-build-isolation", "--no-deps", "-e", "."]
    subprocess.run(pip, cwd=clone, check=True, capture_output=True)
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "DATABASE_URL", "VIRTUAL_ENV")}
    env.update(PATH=f"{venv / 'bin'}:{env['PATH']}", DATABASE_URL=f"sqlite:///{tmp_path / 'tour.db'}")
    where = subprocess.run(["python", "-c", "import turinglab; print(turinglab.__file__)"], cwd=tmp_path, env=env,
                           capture_output=True, text=True, check=True).stdout.strip()
    assert Path(where).is_relative_to(clone), f"the venv imports turinglab from {where}, not the clone"

    setup, imp, serve, report = static_tour()

    def bash(line: str, **kw) -> subprocess.CompletedProcess:
        return subprocess.run(["bash", "-c", f"{setup}\n{line}"], cwd=clone, env=env, capture_output=True, text=True, **kw)

    r = bash(imp, timeout=300)
    assert r.returncode == 0, r.stderr
    assert "1500 items, 50 judges, 2000 trials" in r.stdout

    port = free_port()
    server = subprocess.Popen(["bash", "-c", f"{setup}\nexec {serve} --port {port}"], cwd=clone, env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        page, deadline = None, time.monotonic() + 120
        while page is None and time.monotonic() < deadline and server.poll() is None:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=5) as resp:
                    page = (resp.status, resp.read().decode())
            except OSError:
                time.sleep(0.5)
        assert page is not None, f"serve did not answer: {server.poll()=}"
        assert page[0] == 200 and "cue word" in page[1] and 'action="/start"' in page[1]
    finally:
        server.send_signal(signal.SIGINT)
        out = server.communicate(timeout=60)[0]
    assert str(tmp_path / "tour.db") in out  # serve said where the data goes: the temporary database

    r = bash(report, timeout=300)
    assert r.returncode == 0, r.stderr
    html = (clone / "static.html").read_text(encoding="utf-8")
    assert "2000 trials" in r.stdout and "50 judges" in html.replace("\u00a0", " ")
