"""How fast the store takes a live game's events, and how fast games replay.

    python benchmarks/store_append.py [--db URL] [--games 50]

Appends each game the way the server does (one committed transaction per action, so every
event is durable when acknowledged), then reloads and replays every game.
"""

from __future__ import annotations

import argparse
import tempfile
import time

from turinglab.game.config import Rules, Study
from turinglab.game.engine import Game, GiveVerdict, Send
from turinglab.store import Store


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--db", default=None, help="database URL (default: a temporary SQLite file)")
    ap.add_argument("--games", type=int, default=50)
    ap.add_argument("--messages", type=int, default=20, help="messages per game")
    args = ap.parse_args()
    url = args.db or f"sqlite:///{tempfile.mkdtemp()}/bench.db"
    store = Store(url)
    sid = store.register_study(Study(name=f"bench-{time.time_ns()}"))
    ids: list[str] = []
    n_tx = n_events = 0
    t0 = time.perf_counter()
    for _ in range(args.games):
        gid = store.create_game(sid, "two-player", {"A": {"kind": "ai", "witness": "ELIZA"}}, None, 0)
        g = Game.start("two-player", Rules(), 0)
        store.append_events(gid, g.log)
        for k in range(args.messages):
            out = g.apply(Send("interrogator" if k % 2 == 0 else "A", f"message number {k}"), 1000 * (k + 1))
            store.append_events(gid, out.events)
            n_tx += 1
        out = g.apply(GiveVerdict("interrogator", "ai", 70), 60_000)
        store.append_events(gid, out.events)
        n_tx += 2
        n_events += len(g.log)
        ids.append(gid)
    append_s = time.perf_counter() - t0
    t1 = time.perf_counter()
    for gid in ids:
        Game.replay(store.events(gid))
    replay_s = time.perf_counter() - t1
    backend = store.engine.dialect.name
    print(f"{backend}: {n_events} events in {n_tx} committed appends: {append_s:.2f} s "
          f"({1000 * append_s / n_tx:.2f} ms per append, {n_events / append_s:.0f} events/s)")
    print(f"{backend}: reload + replay of {len(ids)} games: {replay_s:.2f} s ({1000 * replay_s / len(ids):.1f} ms per game)")
    store.close()


if __name__ == "__main__":
    main()
