"""Rebuild every number of this static study's report from its exported trials (shipped as rebuild.py).

    python rebuild.py            # compare with report_numbers.json; exit 1 on any mismatch; print rebuilt/total
    python rebuild.py --json     # print the rebuilt numbers

Written independently of turinglab.analysis: it imports pandas, numpy and turinglab.stats (exact
intervals and Giunti's criteria), reads only trials.csv, items.csv, judges.csv and report_numbers.json's settings.
The judge-clustered bootstrap numbers judges by `cluster` (their place among the study's judge ids)
and draws the report's resamples (numpy's default_rng(seed), 25 replicates per block), so its
intervals are compared like every other number (relative 1e-9).
"""

from __future__ import annotations

import json
import math
import re
import sys
from pathlib import Path

import numpy as np
import pandas as pd

from turinglab import stats

HERE = Path(__file__).resolve().parent
CHUNK = 25
H, M = "human", "machine"


def put(out: dict, key: str, v) -> None:
    try:
        v = float(v)
    except (TypeError, ValueError):
        v = math.nan
    out[key] = v if math.isfinite(v) else None


def tf(s: pd.Series) -> pd.Series:
    return s.map({True: True, False: False, "True": True, "False": False})


def cp(k, n, alpha):
    if not n:
        return math.nan, math.nan
    ci = stats.interval(int(k), int(n), alpha, "clopper-pearson")
    return ci.low, ci.high


def conf(t: pd.DataFrame) -> dict:
    return {tr: {an: int(((t["truth"] == tr) & (t["answer"] == an)).sum()) for an in (H, M)} for tr in (H, M)}


def bal(c: dict) -> float:
    n_h, n_m = sum(c[H].values()), sum(c[M].values())
    return (c[H][H] / n_h + c[M][M] / n_m) / 2 if n_h and n_m else math.nan


def level_row(out, key, t: pd.DataFrame, alpha, judges: bool, extra=()) -> None:
    c = conf(t)
    n_m, k_m, n_h = sum(c[M].values()), c[M][H], sum(c[H].values())
    lo, hi = cp(k_m, n_m, alpha)
    vals = [("trials", len(t)), ("hh", c[H][H]), ("hm", c[H][M]), ("mh", c[M][H]), ("mm", c[M][M]),
            ("machine_judged_human", k_m / n_m if n_m else math.nan), ("low", lo), ("high", hi), *extra,
            ("balanced_accuracy", bal(c))]
    if judges:
        vals.append(("judges", t["judge_id"].nunique()))
    for name, v in vals:
        put(out, f"{key}.{name}", v)
    return c, n_h


def ba(c: np.ndarray, n: np.ndarray) -> np.ndarray:
    """Per agent (its items and all human items, the last column), then all machine items pooled."""
    with np.errstate(invalid="ignore", divide="ignore"):
        acc_h = c[..., -1] / n[..., -1]
        per = (c[..., :-1] / n[..., :-1] + acc_h[..., None]) / 2
        pooled = (c[..., :-1].sum(-1) / n[..., :-1].sum(-1) + acc_h) / 2
    return np.concatenate([per, pooled[..., None]], axis=-1)


def boot(k, c, n, n_boot, seed, alpha):
    m_c = k.shape[0]
    if m_c < 2:
        return tuple(np.full(k.shape[1], np.nan) for _ in range(4))
    rng = np.random.default_rng(seed)
    rates, bas, done = [], [], 0
    while done < n_boot:
        m = min(CHUNK, n_boot - done)
        idx = rng.integers(0, m_c, size=(m, m_c))
        w = np.vstack([np.bincount(r, minlength=m_c) for r in idx]).astype(float)
        kk, cc, nn = w @ k, w @ c, w @ n
        with np.errstate(invalid="ignore", divide="ignore"):
            rates.append(kk / nn)
        bas.append(ba(cc, nn))
        done += m
    r, b = np.vstack(rates), np.vstack(bas)
    q = (alpha / 2, 1 - alpha / 2)
    return (np.nanquantile(r, q[0], axis=0), np.nanquantile(r, q[1], axis=0),
            np.nanquantile(b, q[0], axis=0), np.nanquantile(b, q[1], axis=0))


def zhang_age_bin(value) -> str | None:
    nums = [int(x) for x in re.findall(r"\d+", str(value))] if isinstance(value, str) else []
    if not nums or len(nums) > 2:
        return None
    age = sum(nums) / len(nums)
    return "below 35" if age < 35 else "35-45" if age <= 45 else "above 45"


def judge_flags(t: pd.DataFrame, judges: pd.DataFrame, meta: dict, topic: bool) -> pd.DataFrame:
    ctl, cc = t["control"], t["control_correct"]
    answered, ok = cc.notna(), cc.eq(True)
    if topic:
        answered, ok = answered & ctl, ok & ctl
    d = pd.DataFrame({"j": t["judge_id"], "n": 1, "fast": t["rt_ms"].notna() & (t["rt_ms"] < meta["fast_rt_ms"]),
                      "ctl": answered, "ok": ok, "top": cc.notna() & ~ctl & topic, "top_ok": cc.eq(True) & ~ctl & topic})
    g = d.groupby("j").sum()
    with np.errstate(invalid="ignore", divide="ignore"):
        acc = np.where(g["ctl"] > 0, g["ok"] / g["ctl"].where(g["ctl"] > 0), np.nan)
        tacc = np.where(g["top"] > 0, g["top_ok"] / g["top"].where(g["top"] > 0), np.nan)
    f = pd.DataFrame({"control": ~np.isnan(acc) & (acc < meta["min_control_accuracy"]),
                      "fast": (g["fast"] / g["n"]).to_numpy() > meta["max_fast_share"],
                      "topic": ~np.isnan(tacc) & (tacc < meta["min_topic_accuracy"]) if topic else False,
                      "topic_trials": g["top"].to_numpy(), "native": False}, index=g.index)
    lang = meta.get("native_language")
    if lang and len(judges) and len(judges.columns) > 2:
        demo = judges.set_index("judge_id")

        def not_native(j) -> bool:
            if j not in demo.index:
                return False
            said, zhang = demo.at[j, "native_language"] if "native_language" in demo else None, \
                demo.at[j, "native"] if "native" in demo else None
            if isinstance(said, str) and said.strip():
                return lang.strip().lower() not in said.lower()
            return {"yes": False, "no": True}.get(str(zhang if isinstance(zhang, str) else "").strip().lower(), False)

        f["native"] = [not_native(j) for j in f.index]
    return f


def rebuild(meta: dict) -> dict:
    alpha, task, topic = meta["alpha"], meta["task"], meta["task"] == "conversation"
    t = pd.read_csv(HERE / "trials.csv", keep_default_na=False, na_values=[""],
                    dtype={"judge_id": str, "agent": str, "truth": str, "answer": str})
    t["control"] = tf(t["control"]).fillna(False).astype(bool)
    t["control_correct"] = tf(t["control_correct"])
    judges = pd.read_csv(HERE / "judges.csv", dtype=str, keep_default_na=False, na_values=[""])
    out: dict = {}
    if "phase" in t.columns:  # practice / feedback trials: counted apart, not in the test numbers
        test = t["phase"].astype(str) == "test"
        pr = t[~test & ~t["control"]]
        put(out, "practice.trials", int((~test).sum())), put(out, "practice.scored", len(pr))
        put(out, "practice.correct", int((pr["answer"] == pr["truth"]).sum()))
        put(out, "practice.accuracy", (pr["answer"] == pr["truth"]).mean() if len(pr) else math.nan)
        t = t[test].reset_index(drop=True)
    flags = judge_flags(t, judges, meta, topic)
    main = t[~t["control"]].reset_index(drop=True)
    c_all = conf(main)
    put(out, "n_trials", len(main)), put(out, "n_judges", main["judge_id"].nunique())
    for tr in (H, M):
        for an in (H, M):
            put(out, f"confusion.{tr}.{an}", c_all[tr][an])
    # judged-human rate per agent (human items pooled last), exact and judge-clustered intervals
    agents = sorted(main.loc[main["truth"] == M, "agent"].unique())
    g = np.where(main["truth"] == H, len(agents), pd.Index(agents).get_indexer(main["agent"]))
    code = main["cluster"].rank(method="dense").astype(int).to_numpy() - 1  # the report's judge order
    m_c, n_g = code.max() + 1, len(agents) + 1

    def sums(v):
        return np.bincount(code * n_g + g, weights=v.astype(float), minlength=m_c * n_g).reshape(m_c, n_g)

    said_h = (main["answer"] == H).to_numpy()
    k, n = sums(said_h), sums(np.ones(len(main)))
    c = sums(said_h == (main["truth"] == H).to_numpy())
    rlo, rhi, blo, bhi = boot(k, c, n, meta["n_boot"], meta["seed"], alpha)
    k_h, n_h = int(k[:, -1].sum()), int(n[:, -1].sum())
    for i, a in enumerate(agents + [H]):
        kk, nn = int(k[:, i].sum()), int(n[:, i].sum())
        lo, hi = cp(kk, nn, alpha)
        for name, v in (("n", nn), ("judged_human", kk), ("rate", kk / nn if nn else math.nan), ("low", lo),
                        ("high", hi), ("boot_low", rlo[i]), ("boot_high", rhi[i]), ("judges", (n[:, i] > 0).sum())):
            put(out, f"agents.{a}.{name}", v)
        if a == H:  # no band verdict and no criteria for the human items themselves
            for name in ("zhang_in_band", "giunti_p", "humanness", "humanness_low", "humanness_high"):
                put(out, f"agents.{a}.{name}", None)
            continue
        band = meta["zhang_band"]
        put(out, f"agents.{a}.zhang_in_band", float(band[0] <= kk / nn <= band[1]) if nn else 0.0)
        if nn and n_h:
            method = "sterne" if max(nn, n_h) <= meta["sterne_max_n"] else "clopper-pearson"
            r = stats.two_player(kk, nn, k_h, n_h, alpha, method)
            for name, v in (("giunti_p", r.p_value), ("humanness", r.humanness.estimate),
                            ("humanness_low", r.humanness.low), ("humanness_high", r.humanness.high)):
                put(out, f"agents.{a}.{name}", v)
    est = ba(c.sum(0), n.sum(0))
    for i, grp in enumerate(agents + ["all machine items"]):
        put(out, f"detectability.{grp}.balanced_accuracy", est[i])
        put(out, f"detectability.{grp}.low", blo[i]), put(out, f"detectability.{grp}.high", bhi[i])
    # by conversation length, task and judges' demographic group
    if "length" in main and main["length"].notna().any():
        for lv, part in main.dropna(subset=["length"]).groupby("length", sort=True):
            level_row(out, f"by_length.{int(lv) if float(lv).is_integer() else lv}", part, alpha, False)
    level_row(out, f"by_task.{task}", main, alpha, True)
    demo = judges.drop(columns=["cluster"]).set_index("judge_id")
    if len(demo.columns):
        if "age" in demo:
            demo["age (Zhang's bins)"] = demo["age"].map(zhang_age_bin)
        for var in sorted(v for v in demo.columns if v != "source"):
            col = demo[var].dropna() if var.startswith("age (Zhang") else demo[var]
            col = col.astype(str)
            if not 2 <= col.nunique() <= 12:
                continue
            grp = main["judge_id"].map(col)
            for lv, part in main.assign(grp=grp).dropna(subset=["grp"]).groupby("grp", sort=True):
                level_row(out, f"by_group.{var}.{lv}", part, alpha, True)
    # flags (counted, never removed) and the headline without flagged judges
    for name in ("control", "fast", "native") + (("topic",) if topic else ()):
        put(out, f"flags.{name}", int(flags[name].sum()))
    flagged = set(flags.index[flags["control"] | flags["fast"] | flags["native"]])
    kept = main[~main["judge_id"].isin(flagged)]
    kc = conf(kept)
    put(out, "sensitivity.judges_flagged", len(flagged)), put(out, "sensitivity.trials_without_flagged", len(kept))
    put(out, "sensitivity.balanced_accuracy_without_flagged", bal(kc))
    for tr in (H, M):
        for an in (H, M):
            put(out, f"sensitivity.confusion.{tr}.{an}", kc[tr][an])
    if topic:
        wrong = main["control_correct"].notna() & ~main["control_correct"].eq(True)
        judge_ok = ~main["judge_id"].isin(set(flags.index[flags["topic"]]))
        put(out, "topic.topic_trials", int(main["control_correct"].notna().sum())), put(out, "topic.topic_wrong", int(wrong.sum()))
        put(out, "topic.judges_with_topic", int((flags["topic_trials"] > 0).sum()))
        put(out, "topic.judges_flagged", int(flags["topic"].sum()))
        items = pd.read_csv(HERE / "items.csv", keep_default_na=False, na_values=[""])
        items = items[~tf(items["control"]).fillna(False).astype(bool)]
        put(out, "topic.items", len(items)), put(out, "topic.items_with_topic", int(tf(items["topic"]).fillna(False).sum()))
        for i, keep in enumerate((np.ones(len(main), bool), judge_ok, ~wrong, ~wrong & judge_ok)):
            part = main[np.asarray(keep, bool)]
            cf = conf(part)
            n_hh = sum(cf[H].values())
            level_row(out, f"topic.results.{i}", part, alpha, True,
                      extra=(("human_judged_human", cf[H][H] / n_hh if n_hh else math.nan),))
    return out


def main() -> int:
    saved = json.loads((HERE / "report_numbers.json").read_text())
    new = rebuild(saved["meta"])
    if "--json" in sys.argv:
        print(json.dumps(new, indent=1, sort_keys=True))
        return 0
    old = saved["numbers"]

    def close(a, b):
        return (a is None and b is None) or (a is not None and b is not None and abs(a - b) <= 1e-9 * max(1, abs(a)))

    bad = [k for k in sorted(new) if not (k in old and close(old[k], new[k]))]
    for k in bad[:50]:
        print(f"MISMATCH {k}: report {old.get(k, 'missing')} rebuilt {new.get(k, 'missing')}")
    left = sorted(set(old) - set(new))
    print(f"rebuilt {len(set(old) & set(new)) - len(bad)}/{len(old)} of the report's numbers; {len(bad)} differ; "
          f"{len(left)} not rebuilt by this script" + (f" ({', '.join(left)})" if left else ""))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
