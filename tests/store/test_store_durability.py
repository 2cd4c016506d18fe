"""Nothing acknowledged is lost when the writing process is killed with SIGKILL."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

from turinglab.game.engine import Game
from turinglab.store import Store

WRITER = r"""
import sys, time
from turinglab.game.config import Rules, Study
from turinglab.game.engine import Game, Send
from turinglab.store import Store

url = sys.argv[1]
store = Store(url)
sid = store.register_study(Study(name="kill"))
gid = store.create_game(sid, "two-player", {"A": {"kind": "ai", "witness": "Dragon"}}, None, 0)
g = Game.start("two-player", Rules(time_limit_s=1e9), 0)
store.append_events(gid, g.log)
print(gid, 0, flush=True)
t = 0
while True:
    t += 1
    seat = "interrogator" if t % 2 else "A"
    out = g.apply(Send(seat, f"message {t}"), t)
    store.append_events(gid, out.events)
    print(gid, out.events[-1].seq, flush=True)  # the acknowledgement
"""


def test_acknowledged_events_survive_sigkill(db_url, tmp_path):
    script = tmp_path / "writer.py"
    script.write_text(WRITER)
    proc = subprocess.Popen([sys.executable, str(script), db_url], stdout=subprocess.PIPE, text=True)
    acked: list[tuple[str, int]] = []
    deadline = time.monotonic() + 60
    try:
        while len(acked) < 40 and time.monotonic() < deadline:
            line = proc.stdout.readline()
            if not line:
                break
            gid, seq = line.split()
            acked.append((gid, int(seq)))
    finally:
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
    assert len(acked) >= 40, "the writer did not acknowledge enough events"
    gid, last = acked[-1]
    store = Store(db_url)
    try:
        stored = store.events(gid)
        assert len(stored) >= last + 1  # everything acknowledged (maybe more) is there, in order
        assert [e.seq for e in stored] == list(range(len(stored)))
        game = Game.replay(stored)
        assert len(game.conversations["A"].messages) == len(stored) - 1
    finally:
        store.close()
