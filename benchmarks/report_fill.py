"""Store N finished two-player demo games in a database fast, for benchmarks/bench_report.py.

The demo's games (turinglab.analysis.demo.live: its study, its participants' answers, its canned chat
played through the engine), but batched: 64 games of each kind are played through the engine as
templates, and each stored game is a template's events shifted to its own start time; games, seats
and events go in through the store's batch calls (create_in, append_in: the same checks and derived
verdict rows as a live append), 5 000 games a transaction, participants a few statements in all.
The witness of each game (the demo's true rates), its interrogator (about 2.5 games each) and its
verdict are drawn per game, so the analysis sees a real spread of interrogators and witnesses.
"""

from __future__ import annotations

import numpy as np

from turinglab.analysis.demo.live import CHATBOT, EDUCATION, GENDERS, KNOWLEDGE, DemoSpec, _play, demo_study
from turinglab.game.engine import Game
from turinglab.game.events import Event, Identity
from turinglab.store import Store
from turinglab.store.models import ParticipantRow
from turinglab.store.rows import NewGame, insert_rows

BATCH = 5_000
TEMPLATES = 16  # per (witness kind, verdict)


def _templates(study, seed: int) -> dict[tuple[bool, str], list[list[Event]]]:
    """Finished games through the engine, by (AI witness?, verdict), their times from 0."""
    out: dict[tuple[bool, str], list[list[Event]]] = {}
    rng = np.random.default_rng([seed, 23])
    for ai in (True, False):
        for choice in ("human", "ai"):
            games = []
            for _ in range(TEMPLATES):
                g = Game.start("two-player", study.rules, 0)
                verdict = (choice, int(rng.integers(30, 101)), str(rng.choice(["", "hunch", "too formal"])))
                _play(g, rng, 0, ["A"], verdict, timing_rng=rng, ai_seats=("A",) if ai else ())
                games.append(list(g.log))
            out[(ai, choice)] = games
    return out


def fill(url: str, n_games: int, seed: int = 0) -> dict:
    """Store n_games finished games of a new demo study at url; returns its id and counts."""
    spec = DemoSpec(n_games=n_games, seed=seed, format="two-player", study_name=f"bench-report-{n_games}-s{seed}")
    study = demo_study(spec)
    rng = np.random.default_rng(seed)
    n_int = max(1, int(round(n_games / 2.5)))
    n_hum = max(4, n_int // 2)
    store = Store(url)
    try:
        study_id = store.register_study(study)
        pids = [f"b{seed}x{i:09d}" for i in range(n_int + n_hum)]
        rows = [{"id": p, "label": None, "prolific_pid": None, "prolific_study_id": None,
                 "prolific_session_id": None, "consent_ms": 1_700_000_000_000, "created_ms": 1_700_000_000_000,
                 "study": None, "consent_hash": None,
                 "demographics": {"age": int(a), "gender": GENDERS[g], "education": EDUCATION[e],
                                  "chatbot_use": CHATBOT[c], "llm_knowledge": KNOWLEDGE[k]}}
                for p, a, g, e, c, k in zip(pids, rng.integers(18, 70, len(pids)), rng.integers(0, len(GENDERS), len(pids)),
                                            rng.integers(0, len(EDUCATION), len(pids)), rng.integers(0, len(CHATBOT), len(pids)),
                                            rng.integers(0, len(KNOWLEDGE), len(pids)))]
        with store._tx() as s:  # the store's own transaction; one statement per 20 000 participants
            for i in range(0, len(rows), 20_000):
                insert_rows(s, ParticipantRow.__table__, rows[i:i + 20_000])
        names = list(spec.rates)
        tpl = _templates(study, seed)
        inter = rng.integers(0, n_int, n_games)
        human_w = rng.integers(0, n_hum, n_games)
        is_human = rng.random(n_games) < spec.human_share
        witness = rng.integers(0, len(names), n_games)
        p_human = np.where(is_human, spec.human_rate, np.array([spec.rates[n] for n in names])[witness])
        judged_human = rng.random(n_games) < p_human
        which = rng.integers(0, TEMPLATES, n_games)
        t0 = 1_700_000_000_000
        for lo in range(0, n_games, BATCH):
            idx = range(lo, min(lo + BATCH, n_games))
            specs, events = [], []
            for i in idx:
                t = t0 + i * 400_000
                seat = (Identity(kind="human", participant_id=pids[n_int + int(human_w[i])]) if is_human[i]
                        else Identity(kind="ai", witness=names[int(witness[i])], selection_prob=1 / len(names)))
                specs.append(NewGame(study_id, "two-player", {"A": seat}, pids[int(inter[i])], t))
                log = tpl[(not is_human[i], "human" if judged_human[i] else "ai")][int(which[i])]
                events.append([Event(e.seq, e.t_ms + t, e.type, e.actor, e.conversation, e.payload) for e in log])
            with store._tx() as s:
                gids = store.create_in(s, specs)
                store.append_in(s, list(zip(gids, events)))
    finally:
        store.close()
    return {"study_id": study_id, "games": n_games, "interrogators": n_int, "events": n_games and sum(
        len(v[0]) for v in tpl.values()) / len(tpl)}
