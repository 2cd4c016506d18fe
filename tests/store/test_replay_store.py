"""Many generated games: store every event in random batches, reload, replay, compare."""

from __future__ import annotations

import random

from turinglab.game.config import Rules, Study
from turinglab.game.engine import (
    Disconnect, End, Game, GiveVerdict, Leave, Paste, Reconnect, ReportAbuse, Send, Tick, Typing,
)
from turinglab.store import Store

T0 = 1_700_000_000_000
I = "interrogator"
TEXTS = ["", "hi", "x" * 301, "where are you from?", "  ", "ünïcødé ✓", "<script>alert(1)</script>", "lol"]


def play(rng: random.Random, fmt: str, n: int) -> Game:
    rules = Rules(time_limit_s=rng.choice([20, 300]), max_messages=rng.choice([None, 4]))
    g = Game.start(fmt, rules, T0)
    seats = [I, "A"] + (["B"] if fmt == "three-player" else [])
    t = T0
    for _ in range(n):
        t += rng.choice([0, 3, 700, 4_000, 25_000])
        seat, conv, r = rng.choice(seats), rng.choice([None, "A", "B"]), rng.random()
        if r < 0.7:
            a = Send(seat, rng.choice(TEXTS), conv)
        elif r < 0.8:
            a = GiveVerdict(seat, rng.choice(["human", "ai", "A", "B"]), rng.choice([0, 40, 100, 250]),
                            rng.choice([None, "they were slow", ""]))
        elif r < 0.95:
            a = rng.choice([Paste(seat, 20, conv), Disconnect(seat), Reconnect(seat), Typing(seat, conv), Tick()])
        else:
            a = rng.choice([Leave(seat), ReportAbuse(seat, "rude", conv), End("aborted")])
        g.apply(a, t)
    return g


def test_stored_games_replay_to_the_same_state(db_url):
    rng = random.Random(20231031)
    store = Store(db_url)
    try:
        ids = {}
        for fmt in ("two-player", "three-player"):
            ids[fmt] = store.register_study(Study(name=f"replay-{fmt}", format=fmt))
        games: dict[str, Game] = {}
        for i in range(40):
            fmt = "two-player" if i % 2 else "three-player"
            human = rng.choice(["A", "B"]) if fmt == "three-player" else None
            seats = {s: ({"kind": "human"} if s == human or (fmt == "two-player" and rng.random() < 0.5)
                         else {"kind": "ai", "witness": "Dragon", "selection_prob": 0.5})
                     for s in (("A",) if fmt == "two-player" else ("A", "B"))}
            g = play(rng, fmt, rng.randint(1, 60))
            gid = store.create_game(ids[fmt], fmt, seats, None, T0)
            k = 0
            while k < len(g.log):  # append in random batch sizes, as a server would
                step = rng.randint(1, 6)
                store.append_events(gid, g.log[k:k + step])
                k += step
            games[gid] = g
        for gid, g in games.items():
            again = Game.replay(store.events(gid))
            assert again.state_dict() == g.state_dict()
            info = store.game(gid)
            assert info.status == g.state
            assert info.end_reason == g.end_reason
            if g.verdict is None:
                assert info.verdict is None
            else:
                assert (info.verdict.choice, info.verdict.confidence) == (g.verdict["choice"], g.verdict["confidence"])
        verdicts = [g.verdict for g in games.values() if g.verdict]
        assert len(verdicts) >= 5  # the generator really exercises verdicts
    finally:
        store.close()
