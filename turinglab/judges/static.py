"""Items and human-judge trials of a stored static study (turinglab/store/static.py) as the
judges' tables. The AI judge is given only what a human judge sees (the stimulus and the response);
truth and agent stay beside it for training labels and scoring. Control items and trials outside
the test phase (feedback, practice) are left out, as in the static analysis.
"""

from __future__ import annotations

import json

import pandas as pd

from turinglab.judges.items import ITEM_COLUMNS


def load_study(url: str | None, study: str) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(items, human-judge trials) of the static study named `study` (or its id)."""
    from turinglab.store import Store
    from turinglab.store.db import UnknownId

    store = Store(url)
    try:
        try:
            info = store.static_study(study)
        except UnknownId as exc:
            raise LookupError(str(exc)) from None
        rows = []
        for it in store.items(info.id):
            if it.control:
                continue
            response = it.text if it.text is not None else json.dumps(it.payload or {}, sort_keys=True)
            rows.append({"item_id": str(it.id), "stimulus_id": str(it.stimulus_id), "task": info.task,
                         "stimulus": it.stimulus_text or it.stimulus_image or "", "response": response,
                         "truth": it.truth, "agent": "human" if it.truth == "human" else it.agent})
        if not rows:
            raise LookupError(f"static study {info.name!r} has no items; import some with `turinglab static import`")
        items = pd.DataFrame(rows, columns=ITEM_COLUMNS)
        truth = dict(zip(items["item_id"], items["truth"]))
        agent = dict(zip(items["item_id"], items["agent"]))
        trials = [{"judge_id": t.judge_id, "item_id": str(t.response_id), "verdict": t.answer}
                  for t in store.trials(info.id) if t.phase == "test" and str(t.response_id) in truth]
        trials = pd.DataFrame(trials, columns=["judge_id", "item_id", "verdict"])
        trials["truth"] = trials["item_id"].map(truth)
        trials["agent"] = trials["item_id"].map(agent)
        return items, trials
    finally:
        store.close()
