"""A static study's numbers, keyed (`report --format json`), and its pseudonymous export with
`rebuild_static.py`, which recomputes every one of those numbers from the exported trials.

Judge ids are keyed hashes (`pseudonyms`); each judge also carries `cluster`, its number in the
judge-clustered bootstrap (its place among the study's judge ids, which the analysis sorts), so the
rebuilt intervals draw the very same resamples. `items.csv` lists every item, judged or not (truth,
agent, control item, conversation length, whether it carries a topic control). Not in the numbers (shown by the HTML report
only): the other answers (`analysis.static.answers`) and a conversation study's per-speaker analysis.
"""

from __future__ import annotations

import json
import math
import shutil
from importlib import resources
from pathlib import Path
from typing import Any

import pandas as pd

from turinglab.analysis.export.pseudonyms import export_key, pseudonymise

LEVEL_COLUMNS = ("judges", "trials", "hh", "hm", "mh", "mm", "machine_judged_human", "low", "high", "balanced_accuracy")
AGENT_COLUMNS = ("n", "judged_human", "rate", "low", "high", "boot_low", "boot_high", "judges", "zhang_in_band",
                 "giunti_p", "humanness", "humanness_low", "humanness_high")


CODEBOOK = """# Static study {study} ({task})

- `trials.csv`: one row per judge trial. `judge_id` is a keyed pseudonym (HMAC-SHA256 under the database's
  export key); `cluster` numbers the judge in the judge-clustered bootstrap (its place among the study's judge
  ids); `item` the judged item (`items.csv`); `answer` and `truth` human|machine; `agent` the item's source;
  `control` a vigilance item; `control_correct` the control or topic answer was right (empty: none asked);
  `rt_ms` the answer time; `length` a conversation chunk's exchanges.
- `items.csv`: every item, judged or not: truth, agent, control, length, `topic` (carries a topic control).
- `judges.csv`: the judges' demographics as given, by pseudonym.
- `report_numbers.json`: the settings and every number of `turinglab report --format json`;
  `python rebuild.py` recomputes them all from these files and says how many agree.
- Judges who withdrew (flag `withdrawn`): {withdrawn}
"""


def _num(v: Any) -> float | None:
    try:
        v = float(v)
    except (TypeError, ValueError):
        return None
    return v if math.isfinite(v) else None


def numbers(a) -> dict[str, float | None]:
    """Every number of a `StaticAnalysis`, flat and keyed 'section.row.column'."""
    out: dict[str, Any] = {"n_trials": a.n_trials, "n_judges": a.n_judges}
    for t, row in a.confusion.items():
        for ans, n in row.items():
            out[f"confusion.{t}.{ans}"] = n
    for r in a.agents.to_dict("records"):
        for c in AGENT_COLUMNS:
            if c in r:
                out[f"agents.{r['agent']}.{c}"] = r[c]
    for r in a.detectability.to_dict("records"):
        for c in ("balanced_accuracy", "low", "high"):
            out[f"detectability.{r['group']}.{c}"] = r[c]
    for name, t, key in (("by_length", a.by_length, "length"), ("by_task", a.by_task, "task"),
                         ("by_group", a.by_group, "group")):
        for r in (t.to_dict("records") if len(t) else []):
            row = f"{r['variable']}.{r[key]}" if name == "by_group" else _level(r[key])
            for c in LEVEL_COLUMNS:
                if c in r:
                    out[f"{name}.{row}.{c}"] = r[c]
    for c in ("flag_control", "flag_fast", "flag_native", "flag_topic"):
        if c in a.flags:
            out[f"flags.{c[5:]}"] = int(a.flags[c].sum())
    s = a.sensitivity
    for c in ("judges_flagged", "trials_without_flagged", "balanced_accuracy_without_flagged"):
        out[f"sensitivity.{c}"] = s[c]
    for t, row in s["confusion_without_flagged"].items():
        for ans, n in row.items():
            out[f"sensitivity.confusion.{t}.{ans}"] = n
    if a.topic:
        for c in ("items_with_topic", "items", "topic_trials", "topic_wrong", "judges_with_topic", "judges_flagged"):
            out[f"topic.{c}"] = a.topic[c]
        for i, r in enumerate(a.topic["results"].to_dict("records")):
            for c in ("trials", "judges", "hh", "hm", "mh", "mm", "machine_judged_human", "low", "high",
                      "human_judged_human", "balanced_accuracy"):
                out[f"topic.results.{i}.{c}"] = r[c]
    if a.practice is not None:  # the trials outside the test phase, apart
        pr = a.practice
        for c in ("trials", "scored", "correct"):
            out[f"practice.{c}"] = pr[c]
        out["practice.accuracy"] = pr["accuracy"]["estimate"]
    return {k: _num(v) for k, v in out.items()}


def _level(v: Any) -> str:
    """A level as a key: 3.0 -> '3' (conversation lengths are whole exchanges)."""
    f = _num(v)
    return str(int(f)) if f is not None and f == int(f) else str(v)


def meta(info, a, n_boot: int = 1000, seed: int = 0) -> dict:
    from turinglab.analysis.static.report import MIN_TOPIC_ACCURACY, STERNE_MAX_N, ZHANG_BAND

    ex = info.study.exclusions
    return {"study": info.name, "task": info.task, "alpha": a.alpha, "n_boot": n_boot, "seed": seed,
            "fast_rt_ms": ex.fast_rt_ms, "min_control_accuracy": ex.min_control_accuracy,
            "max_fast_share": ex.max_fast_share, "native_language": getattr(ex, "native_language", None),
            "min_topic_accuracy": MIN_TOPIC_ACCURACY, "sterne_max_n": STERNE_MAX_N, "zhang_band": list(ZHANG_BAND),
            **({"exclude": a.excluded["exclude"], "withdrawn": {k: a.excluded["withdrawn"][k] for k in ("judges", "trials")}}
               if a.excluded else {})}


def render_json(info, a) -> str:
    doc = {"meta": meta(info, a), "numbers": numbers(a)}
    if getattr(a, "prereg", None) is not None:  # the check against a pre-registration (report --prereg)
        doc["prereg"] = a.prereg
    return json.dumps(doc, indent=1, sort_keys=True, allow_nan=False)


def export_static(store, study: str | int | None, out_dir: str | Path, alpha: float = 0.05,
                  key: bytes | None = None, exclude: tuple[str, ...] | None = None) -> dict:
    """Write a static study's trials and judges (pseudonymous), its numbers and rebuild_static.py to `out_dir`;
    the trials of the analysis only (`exclude`: its exclusion flags, default `summary.FLAGS`)."""
    from turinglab.analysis.static.report import analyse_stored
    from turinglab.analysis.static.summary import FLAGS, TEST, _items, judge_table, trial_table

    out = Path(out_dir)
    if out.exists() and any(out.iterdir()):
        raise FileExistsError(f"{out} is not empty; choose a new directory for the export")
    exclude = FLAGS if exclude is None else tuple(exclude)
    info, a = analyse_stored(store, study, alpha, exclude)
    key = key or export_key(store)
    trials = trial_table(store, info.id, exclude)
    with store.engine.connect() as conn:
        items = _items(conn, info.id).rename(columns={"response_id": "item"})
    ids = sorted(trials.loc[trials["phase"] == TEST, "judge_id"].astype(str).unique())  # the analysis's judges
    cluster = {j: i for i, j in enumerate(ids)}
    judges = judge_table(store, ids)
    judges = judges.rename_axis("judge_id").reset_index() if len(judges) else pd.DataFrame({"judge_id": ids})
    judges.insert(1, "cluster", judges["judge_id"].astype(str).map(cluster))
    trials = trials.assign(cluster=trials["judge_id"].astype(str).map(cluster))
    trials["judge_id"] = pseudonymise(trials["judge_id"].astype(str), key)
    judges["judge_id"] = pseudonymise(judges["judge_id"].astype(str), key)
    out.mkdir(parents=True, exist_ok=True)
    cols = ["judge_id", "cluster", "seq", "phase", "answer", "rt_ms", "control_correct", "truth", "agent", "control",
            "stimulus", "length"]
    trials.rename(columns={"response_id": "item"})[["item", *cols]].to_csv(out / "trials.csv", index=False)
    items[["item", "truth", "agent", "control", "length", "topic"]].to_csv(out / "items.csv", index=False)
    judges.to_csv(out / "judges.csv", index=False)
    (out / "report_numbers.json").write_text(json.dumps({"meta": meta(info, a), "numbers": numbers(a)}, indent=1,
                                                        sort_keys=True))
    w = a.excluded["withdrawn"]
    gone = (f"{w['trials']} trials of {w['judges']} judge(s), " + ("left out of every file and number here."
            if w["left_out"] else "kept (exported with --exclude none); their ids and free-text answers are erased.")
            if w["judges"] else "none.")
    (out / "codebook.md").write_text(CODEBOOK.format(study=info.name, task=info.task, withdrawn=gone), encoding="utf-8")
    with resources.as_file(resources.files("turinglab.analysis.export").joinpath("rebuild_static.py")) as path:
        shutil.copyfile(path, out / "rebuild.py")
    return {"out": str(out), "rows": {"trials": len(trials), "items": len(items), "judges": len(judges)},
            "study": info.name}
