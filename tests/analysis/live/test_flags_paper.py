"""The "three previous games against AIs" exclusion as Jones & Bergen define it (every previous game of
the interrogator, in any role), with the interrogator-only reading as its own flag."""

from __future__ import annotations

import numpy as np
import pandas as pd

from turinglab.analysis.live.flags import apply_exclusions, flag_table


def _row(gid, t, interrogator, kind, witness_pid=None):
    return {"game_id": gid, "started_ms": t, "interrogator_id": interrogator, "format": "two-player",
            "witness_kind": kind, "witness_participant_id": witness_pid, "reason": "", "seat": "A"}


def test_a_game_as_witness_breaks_the_run_in_the_papers_reading_only():
    rows = [_row("g1", 1, "p", "ai"), _row("g2", 2, "p", "ai"),
            _row("g3", 3, "q", "human", witness_pid="p"),  # p is the human witness of q's game
            _row("g4", 4, "p", "ai"), _row("g5", 5, "p", "ai"), _row("g6", 6, "p", "ai"), _row("g7", 7, "p", "ai")]
    df = flag_table(pd.DataFrame(rows))
    paper = dict(zip(df["game_id"], df["flag_three_previous_ai"]))
    only = dict(zip(df["game_id"], df["flag_three_previous_ai_interrogated"]))
    # g5: p's previous three games are g2 (AI), g3 (witness: a human interrogator), g4 (AI)
    assert paper == {"g1": False, "g2": False, "g3": False, "g4": False, "g5": False, "g6": False, "g7": True}
    # counting only the games p interrogated, g1, g2, g4 are three AI games before g5
    assert only == {"g1": False, "g2": False, "g3": False, "g4": False, "g5": True, "g6": True, "g7": True}
    kept, ex = apply_exclusions(df, ["three_previous_ai_interrogated"])
    assert ex.games_flagged == {"three_previous_ai_interrogated": 3} and len(kept) == 4


def test_the_papers_reading_matches_a_loop_over_every_game():
    rng = np.random.default_rng(11)
    people = ["a", "b", "c", "d", "e"]
    rows = []
    for k in range(600):
        i = str(rng.choice(people))
        if rng.random() < 0.5:
            rows.append(_row(f"g{k}", int(rng.integers(10**6)), i, "ai"))
        else:
            w = str(rng.choice([p for p in people if p != i]))
            rows.append(_row(f"g{k}", int(rng.integers(10**6)), i, "human", witness_pid=w))
    games = pd.DataFrame(rows).drop_duplicates("started_ms")
    df = flag_table(games)
    timeline: dict[str, list[tuple[int, str, bool, bool]]] = {}
    for r in games.itertuples():
        timeline.setdefault(r.interrogator_id, []).append((r.started_ms, r.game_id, r.witness_kind == "ai", True))
        if r.witness_participant_id:
            timeline.setdefault(r.witness_participant_id, []).append((r.started_ms, r.game_id, False, False))
    expect = {}
    for games_of in timeline.values():
        games_of.sort()
        for pos, (_, gid, _, as_i) in enumerate(games_of):
            if as_i:
                expect[gid] = pos >= 3 and all(a for _, _, a, _ in games_of[pos - 3:pos])
    got = dict(zip(df["game_id"], df["flag_three_previous_ai"]))
    assert got == expect
    assert 0 < sum(expect.values()) < sum(df["flag_three_previous_ai_interrogated"])
