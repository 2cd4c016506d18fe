"""Items and human-judge trials of a stored static study (turinglab/store/static.py) as the
judges' tables. The AI judge is given only what a human judge sees (the stimulus and the response);
truth and agent stay beside it for training labels and scoring. Control items and trials outside
the test phase (feedback, practice) are left out, as in the static analysis.
"""

from __future__ import annotations

import json
from typing import Any

import pandas as pd

from turinglab.judges.items import ITEM_COLUMNS


def load_study(url: str | None, study: str, *, with_trials: bool = True) -> tuple[pd.DataFrame, pd.DataFrame | None]:
    """(items, human-judge trials) of the static study named `study` (or its id); trials None
    with `with_trials=False` (the report only needs the items to find cached AI-judge results)."""
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
        if not with_trials:
            return items, None
        return items, _test_trials(store, info.id, items)
    finally:
        store.close()


def _test_trials(store: Any, study_id: int, items: pd.DataFrame) -> pd.DataFrame:
    """The test-phase trials on `items`, in stored order: judge_id, item_id, verdict, truth, agent
    (one query of three columns; a study may have millions of trials)."""
    from sqlalchemy import select

    from turinglab.store.db import raw_rows
    from turinglab.store.models import JudgeTrialRow as T
    from turinglab.store.withdraw import kept_trials

    with store.engine.connect() as conn:  # a judge who withdrew is left out, as in the static analyses
        q = (select(T.judge_id, T.response_id, T.answer)
             .where(T.study_id == study_id, T.phase == "test", *kept_trials(conn, study_id)).order_by(T.id))
        t = pd.DataFrame.from_records(raw_rows(conn, q), columns=["judge_id", "item_id", "verdict"])
    t["item_id"] = t["item_id"].astype(str)
    t = t[t["item_id"].isin(items["item_id"])].reset_index(drop=True)
    truth = dict(zip(items["item_id"], items["truth"]))
    agent = dict(zip(items["item_id"], items["agent"]))
    t["truth"] = t["item_id"].map(truth)
    t["agent"] = t["item_id"].map(agent)
    return t


def cached_results(db: str | None, study: str) -> list:
    """Cached `judges evaluate` results on exactly this study's items (none if the items are unreadable)."""
    from turinglab.judges.evaluate import results_for
    from turinglab.judges.items import ItemsError

    try:
        items, _ = load_study(db, study, with_trials=False)
        return results_for(items)
    except (LookupError, ItemsError):
        return []
