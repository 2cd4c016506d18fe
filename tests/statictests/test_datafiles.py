"""Zhang et al.'s data: the shipped files are the pinned ones, and a fetched file is checked and
pseudonymised (served here by a real HTTP server on localhost, standing in for the repository)."""

from __future__ import annotations

import functools
import hashlib
import http.server
import json
import re
import threading
from pathlib import Path

import pytest

from turinglab.statictests import datafiles
from turinglab.statictests.datafiles import DataError, DataFile


@pytest.mark.parametrize("f", datafiles.SHIPPED, ids=lambda f: f.name)
def test_a_shipped_file_is_the_pinned_one(f):
    path = datafiles.SHIPPED_DIR / f.name
    assert hashlib.sha256(path.read_bytes()).hexdigest() == f.sha256
    assert not re.search(r"A[0-9A-Z]{11,20}", path.read_text()), "an MTurk-style worker id is shipped"


def test_every_shipped_json_is_in_the_catalogue_and_the_licence_ships():
    on_disk = {p.name for p in datafiles.SHIPPED_DIR.iterdir() if p.suffix in (".json", ".tsv")}
    assert on_disk == {f.name for f in datafiles.SHIPPED}
    assert (datafiles.SHIPPED_DIR / "LICENSE").read_text().startswith("MIT License")
    import tomllib

    pyproject = tomllib.loads((Path(__file__).resolve().parents[2] / "pyproject.toml").read_text())
    assert "LICENSE" in pyproject["tool"]["setuptools"]["package-data"]["*"]


@pytest.fixture
def mirror(tmp_path):
    """A local HTTP server whose root holds <repo>/<commit>/<path> like the raw-file host."""
    root = tmp_path / "mirror"
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(root))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield root, f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()


def _publish(root: Path, monkeypatch, text: str, chars: int) -> DataFile:
    f = DataFile("humanjudge_Test_testphase.json", "test", "Plot/Data_all/humanjudge Test.json", "c0ffee", chars=chars)
    dest = root / datafiles.REPO / f.commit / f.source
    dest.parent.mkdir(parents=True)
    dest.write_text(text)
    monkeypatch.setitem(datafiles.CATALOGUE, f.name, f)
    return f


def test_a_fetched_judge_file_is_checked_by_size_and_pseudonymised(mirror, monkeypatch, tmp_path):
    root, base = mirror
    trials = {f"Trial_{i}": {"workerID": w, "trialData": {"rt": i}} for i, w in enumerate(["A1B2C3D4E5F6G7", "A9Z8Y7X6W5V4U3", "A1B2C3D4E5F6G7"])}
    text = json.dumps(trials)
    f = _publish(root, monkeypatch, text, len(text))
    dest, note = datafiles.get(f.name, tmp_path / "out", base)
    got = json.loads(dest.read_text())
    assert [t["workerID"] for t in got.values()] == ["judge-0001", "judge-0002", "judge-0001"]
    assert [t["trialData"]["rt"] for t in got.values()] == [0, 1, 2]
    assert hashlib.sha256(text.encode()).hexdigest() in note and "sha256 unknown" in note


def test_a_fetched_file_of_another_size_writes_nothing(mirror, monkeypatch, tmp_path):
    root, base = mirror
    f = _publish(root, monkeypatch, '{"Trial_1": {}}', 999)
    with pytest.raises(DataError, match="has 15 characters, the pinned file 999; nothing written"):
        datafiles.get(f.name, tmp_path / "out", base)
    assert not (tmp_path / "out" / f.name).exists()


def test_no_network_is_one_clear_error(tmp_path):
    with pytest.raises(DataError, match="cannot fetch http://127.0.0.1:9/kreimanlab/TuringTest/.*/fv.json"):
        datafiles.get("fv.json", tmp_path, "http://127.0.0.1:9")
