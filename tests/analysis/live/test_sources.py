"""Replies by source (analysis/live/sources.py) on a demo study whose late replies are the
fallback's (leak late-fallback): the loaded messages, the judgements' counts and flag, and the
per-witness shares and pass rates, each recomputed from the raw stored events."""

from __future__ import annotations

from collections import Counter

from turinglab.analysis.demo.live import DemoSpec, generate
from turinglab.analysis.live.core import Options, analyse
from turinglab.analysis.live.load import load
from turinglab.store import Store


def test_sources_from_the_log_to_the_report_numbers(sqlite_url):
    generate(sqlite_url, DemoSpec(n_games=60, seed=6, leak="late-fallback"))
    raw: Counter = Counter()  # (game, seat, source) straight from the stored events
    with Store(sqlite_url, upgrade=False) as store:
        kinds = {}
        for g in store.games():
            for seat, ident in g.seats.items():
                kinds[(g.id, seat)] = (ident.kind, ident.witness)
            for e in store.events(g.id):
                if e.type == "message" and e.actor != "interrogator":
                    raw[(g.id, e.actor, e.payload["source"])] += 1
    loaded = load(sqlite_url)
    m = loaded.messages
    assert set(m.loc[m["actor"] == "interrogator", "source"]) == {"interrogator"}
    got = Counter((r.game_id, r.actor, r.source) for r in m[m["actor"] != "interrogator"].itertuples())
    assert got == raw
    assert {s for (g, seat, s) in raw if kinds[(g, seat)][0] == "human"} == {"human"}
    assert {s for (g, seat, s) in raw if kinds[(g, seat)][0] == "ai"} == {"model", "fallback"}
    j = loaded.judgements
    fell = {g for (g, _, s) in raw if s == "fallback"}
    assert 0 < len(fell) < j["game_id"].nunique()
    for r in j.itertuples():
        assert r.replies_fallback == raw[(r.game_id, r.seat, "fallback")]
        assert r.witness_replies == sum(n for (g, seat, _), n in raw.items() if (g, seat) == (r.game_id, r.seat))
        assert bool(r.flag_fallback_wrote_reply) == (r.game_id in fell)
    a = analyse(j, loaded.participants, Options(exclude=(), n_boot=50))
    for row in a.sources.to_dict("records"):
        w = row["witness"]
        mine = [(g, seat) for (g, seat), (kind, name) in kinds.items() if kind == "ai" and name == w
                and g in set(j["game_id"])]
        n = sum(raw[(g, seat, s)] for g, seat in mine for s in ("model", "fallback"))
        assert row["replies"] == n and abs(row["share_fallback"] - sum(raw[(g, s, "fallback")] for g, s in mine) / n) < 1e-12
        rows = j[(j["witness"] == w)]
        clean = rows[~rows["game_id"].isin(fell)]
        assert (row["all_n"], row["all_k"]) == (len(rows), int(rows["judged_human"].sum()))
        assert (row["without_n"], row["without_k"]) == (len(clean), int(clean["judged_human"].sum()))
    # a study that lists the flag excludes those games
    b = analyse(j, loaded.participants, Options(exclude=("fallback_wrote_reply",), n_boot=50))
    assert b.n_games == j["game_id"].nunique() - len(fell)
