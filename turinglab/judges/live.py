"""Stored live games as judge items: the inverted Turing test.

Each judged witness seat of a game becomes one item whose response is the transcript exactly as the
interrogator saw it (their messages and that witness's, in order, as 'Interrogator:' / 'Witness:'
lines). The interrogators' own verdicts become the human-judge trials of the same items, so the
LLM judge is compared with them pair by pair.
"""

from __future__ import annotations

import pandas as pd

from turinglab.judges.items import ITEM_COLUMNS
from turinglab.game.events import INTERROGATOR


def transcript(messages: pd.DataFrame) -> str:
    lines = []
    for actor, text in zip(messages["actor"], messages["text"]):
        who = "Interrogator" if actor == INTERROGATOR else "Witness"
        lines.append(f"{who}: {' '.join(str(text).split())}")
    return "\n".join(lines) if lines else "(no messages)"


def from_loaded(loaded) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(items, trials) from `turinglab.analysis.live.load.load(...)`'s result."""
    j = loaded.judgements
    msgs = loaded.messages
    by = {k: g for k, g in msgs.groupby(["game_id", "conversation"], sort=False)} if len(msgs) else {}
    rows, trials = [], []
    for r in j.itertuples(index=False):
        m = by.get((r.game_id, r.seat))
        if m is None and r.format == "two-player":  # two-player games may store no conversation label
            m = by.get((r.game_id, "A"))
        text = transcript(m if m is not None else msgs.iloc[0:0])
        item_id = f"{r.game_id}:{r.seat}"
        truth = "human" if r.witness_kind == "human" else "machine"
        agent = "human" if truth == "human" else str(r.witness)
        rows.append({"item_id": item_id, "stimulus_id": str(r.game_id), "task": "transcript",
                     "stimulus": f"game {r.game_id}, seat {r.seat}", "response": text, "truth": truth,
                     "agent": agent})
        trials.append({"judge_id": str(r.interrogator_id), "item_id": item_id,
                       "verdict": "human" if bool(r.judged_human) else "machine", "truth": truth, "agent": agent})
    return (pd.DataFrame(rows, columns=ITEM_COLUMNS),
            pd.DataFrame(trials, columns=["judge_id", "item_id", "verdict", "truth", "agent"]))
