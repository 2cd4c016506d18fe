"""Rebuild every number of this export's report from its CSV files.

    python rebuild.py            # compare with report_numbers.json; exit 1 on any mismatch, and say how
                                 # many of the report's numbers were rebuilt (rebuilt/total) and which not
    python rebuild.py --json     # print the rebuilt numbers

Written independently of turinglab.analysis (with rebuild_more.py beside it): it imports pandas, numpy,
scipy, statsmodels, gpboost (the mixed model's start; rebuild_glmm.py) and turinglab.stats (the exact tests and intervals), nothing
else of turinglab, and reads only files in this folder. The cluster bootstraps repeat the report's
resampling (same seed, same draws), so they are compared like every other number (relative 1e-9);
the GEE is compared to relative 1e-6 and the mixed model, an iterative ML fit, to relative 1e-3
(see RTOL; numbers within 1e-12 of 0 count as 0).
"""

from __future__ import annotations

import json
import math
import sys
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

from turinglab import stats

HERE = Path(__file__).resolve().parent



def _beside(name: str):
    """A module shipped beside this file, loaded from its path (sys.path is left alone)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location(name, HERE / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


more = _beside("rebuild_more")
glmm = _beside("rebuild_glmm")

CHUNK = 25


def degenerate_to_exact(bounds, k, n, alpha):
    """A bootstrap interval of width 0 (or undefined) becomes the exact Sterne interval of k of n."""
    lo, hi = (np.array(b, dtype=float) for b in bounds)
    for i in range(len(lo)):
        if not (np.isfinite(lo[i]) and np.isfinite(hi[i]) and hi[i] - lo[i] > 1e-12) and n[i] >= 1:
            ci = stats.interval(int(round(k[i])), int(round(n[i])), alpha)
            lo[i], hi[i] = ci.low, ci.high
    return lo, hi


def read(name: str) -> pd.DataFrame:
    return pd.read_csv(HERE / f"{name}.csv", keep_default_na=False, na_values=[""])


def read_witnesses() -> pd.DataFrame:
    """The study file's roster (an export older than the roster table has none)."""
    return read("witnesses") if (HERE / "witnesses.csv").exists() else pd.DataFrame(columns=["witness"])


def tf(s: pd.Series) -> pd.Series:
    return s.map({True: True, False: False, "True": True, "False": False}).fillna(False).astype(bool)


def put(out: dict, key: str, v) -> None:
    v = float(v) if v is not None else math.nan
    out[key] = v if math.isfinite(v) else None


def rate(out, key, k, n, alpha):
    put(out, f"{key}.k", k), put(out, f"{key}.n", n)
    if n == 0:
        for c in ("rate", "low", "high"):
            put(out, f"{key}.{c}", math.nan)
        return
    iv = stats.interval(int(k), int(n), alpha=alpha)
    put(out, f"{key}.rate", k / n), put(out, f"{key}.low", iv.low), put(out, f"{key}.high", iv.high)


def clusters(df: pd.DataFrame) -> tuple[np.ndarray, int]:
    first = df[["interrogator_id", "started_ms", "game_id"]].sort_values(["started_ms", "game_id"], kind="mergesort")
    first = first.drop_duplicates("interrogator_id")
    code = dict(zip(first["interrogator_id"], range(len(first))))
    return df["interrogator_id"].map(code).to_numpy(dtype=np.int64), len(first)


def boot_ratio(num: np.ndarray, den: np.ndarray, n_boot: int, seed: int, alpha: float):
    rng = np.random.default_rng(seed)
    reps, done, m_cl = [], 0, num.shape[0]
    while done < n_boot:
        m = min(CHUNK, n_boot - done)
        idx = rng.integers(0, m_cl, size=(m, m_cl))
        w = np.vstack([np.bincount(r, minlength=m_cl) for r in idx]).astype(float)
        with np.errstate(invalid="ignore", divide="ignore"):
            reps.append((w @ num) / (w @ den))
        done += m
    r = np.vstack(reps)
    return np.nanquantile(r, alpha / 2, axis=0), np.nanquantile(r, 1 - alpha / 2, axis=0)


def cluster_test(y_a, c_a, y_b=None, c_b=None):
    """(SE, p) of mean(y_a) = 0.5 (y_b None) or = mean(y_b): CR1 sandwich over interrogators, t with G - 1 df."""
    from scipy.stats import t as t_dist

    if y_b is None:
        infl, labels, diff = (y_a - y_a.mean()) / len(y_a), c_a, y_a.mean() - 0.5
    else:
        if not len(y_a) or not len(y_b):
            return math.nan, math.nan
        infl = np.r_[(y_a - y_a.mean()) / len(y_a), -(y_b - y_b.mean()) / len(y_b)]
        labels, diff = np.r_[c_a, c_b], y_a.mean() - y_b.mean()
    codes, uniq = pd.factorize(labels)
    g = len(uniq)
    if g < 2:
        return math.nan, math.nan
    se = math.sqrt(g / (g - 1) * float(np.sum(np.bincount(codes, weights=infl, minlength=g) ** 2)))
    if se == 0:
        return se, (1.0 if diff == 0 else 0.0)
    return se, float(2 * t_dist.sf(abs(diff / se), g - 1))


def criteria(out: dict, d: pd.DataFrame, prefix: str, alpha: float, three: bool, closed: bool = True) -> None:
    """Giunti's criteria per AI witness on the rows d, Holm over them, and the cluster-robust companion."""
    from statsmodels.stats.multitest import multipletests

    y = d["judged_human"].to_numpy(dtype=float)
    w_all = d["witness"].astype(str).to_numpy()
    c_all = d["interrogator_id"].astype(str).to_numpy()
    h = (d["witness_kind"] == "human").to_numpy()
    k_h, n_h = int(y[h].sum()), int(h.sum())
    ai = {}
    for w in sorted(set(w_all[(d["witness_kind"] == "ai").to_numpy()])):
        m = w_all == w
        ai[w] = (int(y[m].sum()), int(m.sum()))
    crit_p = {}
    for w, (k, n) in ai.items():
        if n == 0:
            continue
        if three:
            r = stats.three_player(k, n, alpha=alpha, closed=closed).to_dict()
            if prefix == "criteria":
                put(out, f"{prefix}.{w}.size", stats.pass_size(n, alpha, closed=closed)[0])
        elif n_h:
            r = stats.two_player(k, n, k_h, n_h, alpha=alpha).to_dict()
        else:
            continue
        thr = r["threshold"]["estimate"] if isinstance(r["threshold"], dict) else r["threshold"]
        for key, v in (("machine_success", r["machine_success"]["estimate"]), ("ms_low", r["machine_success"]["low"]),
                       ("ms_high", r["machine_success"]["high"]), ("threshold", thr), ("p_value", r["p_value"]),
                       ("humanness", r["humanness"]["estimate"]), ("hu_low", r["humanness"]["low"]),
                       ("hu_high", r["humanness"]["high"])):
            put(out, f"{prefix}.{w}.{key}", v)
        crit_p[w] = r["p_value"]
        m = w_all == w
        se, pc = cluster_test(y[m], c_all[m], *((None, None) if three else (y[h], c_all[h])))
        put(out, f"{prefix}.{w}.se_cluster", se), put(out, f"{prefix}.{w}.p_cluster", pc)
    if crit_p:
        for w, ph in zip(crit_p, multipletests(list(crit_p.values()), alpha=alpha, method="holm")[1]):
            put(out, f"{prefix}.{w}.p_holm", ph)


def sums(codes, n_c, groups, n_g, values):
    return np.bincount(codes * n_g + groups, weights=values, minlength=n_c * n_g).reshape(n_c, n_g)


def sources(out: dict, df: pd.DataFrame, alpha: float) -> None:
    """Per AI witness: the share of its replies by source (judgements' replies_* columns) and its
    pass rate in all games and in those where the fallback wrote no reply."""
    if "witness_replies" not in df.columns:  # an export from before sources were recorded
        return
    names = ("model", "regenerated", "brush_off", "fallback", "last_resort", "unknown")
    fell = tf(df["flag_fallback_wrote_reply"]) if "flag_fallback_wrote_reply" in df else pd.Series(False, index=df.index)
    for w, g in df[df["witness_kind"] == "ai"].groupby("witness"):
        n = int(g["witness_replies"].sum())
        put(out, f"sources.{w}.replies", n)
        for s in names:
            put(out, f"sources.{w}.share_{s}", g[f"replies_{s}"].sum() / n if n else math.nan)
        for which, sub in (("all", g), ("without", g[~fell.loc[g.index].to_numpy()])):
            rate(out, f"sources.{w}.pass_{which}", int(sub["judged_human"].sum()), len(sub), alpha)


def rebuild(meta: dict) -> dict:
    alpha, n_boot, seed = meta["alpha"], meta["n_boot"], meta["seed"]
    j, parts = read("judgements"), read("participants")
    for c in ("judged_human", "correct"):
        j[c] = tf(j[c])
    bot = tf(j["flag_bot"]).to_numpy() if "flag_bot" in j else np.zeros(len(j), bool)
    if meta.get("include_bots"):
        bot[:] = False
    drop = bot.copy()  # bot games: only in the leaderboard, apart
    for f in meta["exclude"]:
        drop |= tf(j["flag_" + f]).to_numpy()
    df = j[~drop].copy()
    fmt = df["format"].iloc[0]
    three = fmt == "three-player"
    games = (df[df["witness_kind"] == "ai"] if three else df).drop_duplicates("game_id").reset_index(drop=True)
    out: dict = {}
    put(out, "n_games", df["game_id"].nunique()), put(out, "n_interrogators", df["interrogator_id"].nunique())

    # success rates per witness, all games and first games
    sr = {}
    for (w, kind), g in df.groupby(["witness", "witness_kind"]):
        k, n = int(g["judged_human"].sum()), len(g)
        first = g[g["game_index"] == 1]
        sr[w] = (kind, k, n)
        for suffix, (kk, nn) in (("", (k, n)), ("_first", (int(first["judged_human"].sum()), len(first)))):
            put(out, f"success.{w}.k{suffix}", kk), put(out, f"success.{w}.n{suffix}", nn)
            if nn:
                r = stats.binom_test(kk, nn, 0.5, alpha=alpha)
                vals = (kk / nn, r.interval.low, r.interval.high, r.p_value)
            else:
                vals = (math.nan,) * 4
            for c, v in zip(("sr", "low", "high", "p_value"), vals):
                put(out, f"success.{w}.{c}{suffix}", v)

    sources(out, df, alpha)
    ai = sorted(((w, v) for w, v in sr.items() if v[0] == "ai"), key=lambda x: -x[1][1] / x[1][2])
    hum = [v for v in sr.values() if v[0] == "human"]
    # comparisons (two-player only), Holm over the family
    from statsmodels.stats.multitest import multipletests

    y_all = df["judged_human"].to_numpy(dtype=float)
    c_all = df["interrogator_id"].astype(str).to_numpy()
    ps: list = []
    if not three:
        pairs = [(a, ("Human", hum[0])) for a in ai] if hum else []
        pairs += [(ai[i], ai[q]) for i in range(len(ai)) for q in range(i + 1, len(ai))]
        keys, ps = [], []
        for (wa, (_, ka, na)), (wb, (_, kb, nb)) in pairs:
            ps.append(stats.two_sample_test(ka, na, kb, nb)[0])  # the test the criterion uses
            keys.append(f"compare.{wa}|{wb}")
            put(out, f"compare.{wa}|{wb}.diff", ka / na - kb / nb)
        if ps:
            holm = multipletests(ps, alpha=alpha, method="holm")[1]
            for key, pv, ph in zip(keys, ps, holm):
                put(out, f"{key}.p_value", pv), put(out, f"{key}.p_holm", ph)
    # Giunti's criteria, Holm over the pass decisions, and the cluster-robust companion: all games, first games
    criteria(out, df, "criteria", alpha, three, meta.get("closed_criterion", True))
    criteria(out, df[df["game_index"] == 1], "criteria_first", alpha, three, meta.get("closed_criterion", True))
    if not three and ps:
        cl = []
        for (wa, _), (wb, _) in pairs:
            ma, mb = (df["witness"] == wa).to_numpy(), (df["witness"] == wb).to_numpy()
            cl.append(cluster_test(y_all[ma], c_all[ma], y_all[mb], c_all[mb]))
        pc = np.array([c[1] for c in cl], float)
        holm = np.full(len(pc), math.nan)
        if np.isfinite(pc).any():
            holm[np.isfinite(pc)] = multipletests(pc[np.isfinite(pc)], alpha=alpha, method="holm")[1]
        for key, (se, p_), ph in zip(keys, cl, holm):
            put(out, f"{key}.se_cluster", se), put(out, f"{key}.p_cluster", p_), put(out, f"{key}.p_cluster_holm", ph)
    put(out, "bot_games", j.loc[bot, "game_id"].nunique())

    # accuracy
    rate(out, "accuracy.all games", int(games["correct"].sum()), len(games), alpha)
    if not three:
        for kind, label in (("ai", "AI witness"), ("human", "human witness")):
            g = games[games["witness_kind"] == kind]
            rate(out, f"accuracy.{label}", int(g["correct"].sum()), len(g), alpha)
    idx = games["game_index"].clip(upper=5)
    for i, g in games.groupby(idx):
        rate(out, f"by_index.{'5+' if i == 5 else i}", int(g["correct"].sum()), len(g), alpha)
    if not three:
        for (kind, i), g in games.groupby([games["witness_kind"], idx]):
            rate(out, f"by_index_kind.{kind}.{'5+' if i == 5 else i}", int(g["correct"].sum()), len(g), alpha)
    # d'
    if three:
        put(out, "dprime.pooled", stats.dprime_2afc(float(games["correct"].mean())))
        put(out, "dprime.per_interrogator_mean", math.nan), put(out, "dprime.per_interrogator_median", math.nan)
    else:
        from scipy.stats import norm

        is_ai = games["witness_kind"] == "ai"
        said_ai = ~games["judged_human"]
        hits, fas = int((is_ai & said_ai).sum()), int((~is_ai & said_ai).sum())
        ns, nn = int(is_ai.sum()), int((~is_ai).sum())
        put(out, "dprime.pooled", stats.dprime(hits, ns, fas, nn).d if ns and nn else math.nan)
        per = []
        for _, g in games.groupby("interrogator_id"):
            a_ = g["witness_kind"] == "ai"
            s, t = int(a_.sum()), int((~a_).sum())
            if s and t:
                h = (int((a_ & ~g["judged_human"]).sum()) + 0.5) / (s + 1)
                f_ = (int((~a_ & ~g["judged_human"]).sum()) + 0.5) / (t + 1)
                per.append(norm.ppf(h) - norm.ppf(f_))
        put(out, "dprime.per_interrogator_mean", np.mean(per) if per else math.nan)
        put(out, "dprime.per_interrogator_median", np.median(per) if per else math.nan)
    # calibration: stated probability 0.5 + confidence/200, five bins of confidence
    cg = games.dropna(subset=["confidence"])
    prob = 0.5 + cg["confidence"].clip(0, 100) / 200
    y = cg["correct"].to_numpy(dtype=float)
    kinds = [("all", np.ones(len(cg), bool))]
    if not three:
        kinds += [(k, (cg["witness_kind"] == k).to_numpy()) for k in ("ai", "human")]
    b = np.minimum((cg["confidence"].to_numpy(dtype=float) // 20).astype(int), 4)
    for kind, mask in kinds:
        if mask.any():
            put(out, f"brier.{kind}", np.mean((prob.to_numpy()[mask] - y[mask]) ** 2))
        for i in range(5):
            m = mask & (b == i)
            key = f"calibration.{kind}.{20 * i}–{20 * i + 20}"
            n = int(m.sum())
            put(out, f"{key}.n", n)
            put(out, f"{key}.stated", prob.to_numpy()[m].mean() if n else math.nan)
            put(out, f"{key}.observed", y[m].mean() if n else math.nan)
            iv = stats.interval(int(y[m].sum()), n, alpha=alpha) if n else None
            put(out, f"{key}.low", iv.low if iv else math.nan), put(out, f"{key}.high", iv.high if iv else math.nan)
    # accuracy by demographic group (age in bands)
    p = parts.set_index(parts["participant_id"].astype(str))
    ids = games["interrogator_id"].astype(str)
    for col in ("age", "gender", "education", "chatbot_freq", "llm_knowledge"):
        if col not in p:
            continue
        v = ids.map(p[col])
        if col == "age":
            v = pd.cut(v.astype(float), [0, 25, 35, 45, 55, 200], labels=["<25", "25–34", "35–44", "45–54", "55+"],
                       right=False).astype("object")
        elif col in ("chatbot_freq", "llm_knowledge"):
            v = v.astype(float).map(lambda x: f"{int(x)}" if pd.notna(x) else None)
        for level in v.dropna().unique():
            m = (v == level).to_numpy()
            key = f"demographics.{col}.{level}"
            rate(out, key, int(games.loc[m, "correct"].sum()), int(m.sum()), alpha)
            out.pop(f"{key}.k")
    # regressions
    regress(out, games, parts, alpha, meta)
    # cluster bootstrap: per witness SR and overall accuracy
    names = sorted(df["witness"].unique())
    wi = {w: i for i, w in enumerate(names)}
    codes, n_c = clusters(df)
    g_ = df["witness"].map(wi).to_numpy()
    k = sums(codes, n_c, g_, len(names), df["judged_human"].to_numpy(dtype=float))
    n = sums(codes, n_c, g_, len(names), np.ones(len(df)))
    gc, _ = clusters(games)
    k = np.column_stack([k, np.bincount(gc, weights=games["correct"].to_numpy(dtype=float), minlength=n_c)])
    n = np.column_stack([n, np.bincount(gc, minlength=n_c).astype(float)])
    lo, hi = degenerate_to_exact(boot_ratio(k, n, n_boot, seed, alpha), k.sum(0), n.sum(0), alpha)
    for i, q in enumerate(names + ["accuracy (all games)"]):
        put(out, f"bootstrap.{q}.estimate", k[:, i].sum() / n[:, i].sum())
        put(out, f"bootstrap.{q}.low", lo[i]), put(out, f"bootstrap.{q}.high", hi[i])
    # inverse-probability weighting (Hajek) of AI games by 1/selection_prob
    a = df[(df["witness_kind"] == "ai") & df["selection_prob"].gt(0) & df["selection_prob"].le(1)]
    if len(a):
        names = sorted(a["witness"].unique())
        wi = {w: i for i, w in enumerate(names)}
        codes, n_c = clusters(a)
        g_ = a["witness"].map(wi).to_numpy()
        inv = 1 / a["selection_prob"].to_numpy(dtype=float)
        y = a["judged_human"].to_numpy(dtype=float)
        num, den = sums(codes, n_c, g_, len(names), y * inv), sums(codes, n_c, g_, len(names), inv)
        lo, hi = degenerate_to_exact(boot_ratio(num, den, n_boot, seed + 1, alpha),
                                     np.bincount(g_, weights=y, minlength=len(names)),
                                     np.bincount(g_, minlength=len(names)), alpha)
        for i, w in enumerate(names):
            put(out, f"ipw.{w}.naive", a.loc[a["witness"] == w, "judged_human"].mean())
            put(out, f"ipw.{w}.ipw", num[:, i].sum() / den[:, i].sum())
            put(out, f"ipw.{w}.low", lo[i]), put(out, f"ipw.{w}.high", hi[i])
    # leaderboard (bot games apart), and the further analyses (rebuild_more.py)
    more.leaderboard(out, put, df, fmt, False, alpha, stats)
    if bot.any():
        more.leaderboard(out, put, j[bot], fmt, True, alpha, stats)
    msgs, tags = read("messages"), read("tags")
    codes = json.loads((HERE / "codebook.json").read_text()).get("codes", {})
    more.distribution(out, put, games, parts, codes)
    if not three:
        more.dprime_regression(out, put, games, parts, alpha)
    else:
        more.bradley_terry(out, put, df, alpha)
    more.length(out, put, df, msgs, three)
    more.timing_check(out, put, df, msgs, three)
    more.roster(out, put, {w: v for w, v in sr.items()}, read_witnesses())
    more.tag_tables(out, put, tags, games, three, alpha, stats)
    more.tag_accuracy(out, put, tags, games)
    more.kappa(out, put, tags, set(df["game_id"].astype(str)))
    if (HERE / "beliefs.csv").exists():
        more.beliefs(out, put, df, msgs, read("beliefs"), alpha)
    # participation: games per participant, as interrogator and as human witness
    one = df.drop_duplicates("game_id")
    hw = df[df["witness_kind"] == "human"].dropna(subset=["witness_participant_id"])
    for role, s_ in (("interrogator", one.groupby("interrogator_id").size()),
                     ("human witness", hw.groupby("witness_participant_id")["game_id"].nunique())):
        vals = {"participants": len(s_), "games": s_.sum(), "mean": s_.mean() if len(s_) else math.nan,
                "sd": s_.std(ddof=1) if len(s_) > 1 else math.nan, "median": s_.median() if len(s_) else math.nan,
                "max": s_.max() if len(s_) else 0, "one": (s_ == 1).sum(), "two_to_four": s_.between(2, 4).sum(),
                "five_plus": (s_ >= 5).sum()}
        for c, v in vals.items():
            put(out, f"participation.{role}.{c}", v)
    # game length by witness kind
    seats = games if not three else df  # three-player: both witnesses of each game
    for kind in ("human", "ai"):
        g = seats[seats["witness_kind"] == kind]
        put(out, f"timing.{kind}.n", len(g))
        put(out, f"timing.{kind}.duration_median", g["duration_s"].median() if len(g) else math.nan)
        put(out, f"timing.{kind}.messages_median", g["n_messages"].median() if len(g) else math.nan)
    return out


def regress(out: dict, games: pd.DataFrame, parts: pd.DataFrame, alpha: float, meta: dict) -> None:
    """correct ~ game_index [* ai_witness] [+ demographics], games played centred; ML binomial GLMM (Laplace,
    lme4's deviance, rebuild_glmm.py) with uncorrelated random intercept and games-played slope per interrogator; GEE."""
    import patsy
    import statsmodels.api as sm
    import statsmodels.formula.api as smf
    from scipy.stats import norm

    d = pd.DataFrame({"correct": games["correct"].astype(int).to_numpy(),
                      "game_index": games["game_index"].astype(float).to_numpy(),
                      "interrogator": games["interrogator_id"].astype(str).to_numpy(),
                      "ai_witness": (games["witness_kind"] == "ai").astype(int).to_numpy()})
    terms = ["game_index"] + (["ai_witness", "game_index:ai_witness"] if d["ai_witness"].nunique() > 1 else [])
    p = parts.set_index(parts["participant_id"].astype(str))
    for col, name in (("age", "age_decades"), ("llm_knowledge", "llm_knowledge"), ("chatbot_freq", "chatbot_freq")):
        if col in p:
            v = d["interrogator"].map(p[col].astype(float)) / (10.0 if col == "age" else 1.0)
            if v.notna().sum() >= 20 and v.nunique() > 1:
                d[name] = v.to_numpy()
                terms.append(name)
    refs = more.reference_levels(games, parts)
    for col in ("gender", "education"):
        if col in p:
            v = d["interrogator"].map(p[col].astype("object"))
            vc = v.value_counts()
            keep = vc[vc >= 10].index
            if len(keep) > 1:
                d[col] = v
                terms.append(more.factor(d, col, keep, refs.get(col)))
    d = d.dropna().reset_index(drop=True)
    d["game_index"] = d["game_index"] - d["game_index"].mean()  # centred, as the report's model
    formula = "correct ~ " + " + ".join(terms)
    if len(d) < 20 or d["correct"].nunique() < 2:
        return
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        dm, cap = d, meta["max_games_mixed"]
        if len(d) > cap > 0:  # the report's rule: a seeded random subset of whole interrogators
            ids = pd.unique(d["interrogator"])
            ids = ids[np.random.default_rng(0).permutation(len(ids))]
            sizes = d.groupby("interrogator").size().reindex(ids).to_numpy()
            dm = d[d["interrogator"].isin(set(ids[np.cumsum(sizes) <= cap]))].reset_index(drop=True)
        if cap > 0 and len(dm) >= 20 and dm["correct"].nunique() > 1:
            y, X = patsy.dmatrices(formula, dm, return_type="dataframe")
            grp, z = pd.factorize(dm["interrogator"])[0], dm["game_index"].to_numpy(float)
            mu_, sd, se = glmm.fit(y.to_numpy().ravel(), X.to_numpy(), grp, z)
            var = sd ** 2
            if not np.all(np.isfinite(se)):  # the stated fallback: the random-intercept-only fit
                mu_, sd, se = glmm.fit(y.to_numpy().ravel(), X.to_numpy(), grp, z, slope=False)
                var = np.r_[sd[0] ** 2, np.nan]
            c = np.vstack([mu_, se])
            q = norm.ppf(1 - alpha / 2)
            for t, mu, s in zip(X.columns, c[0], c[1]):
                put(out, f"mixed.{t}.estimate", mu), put(out, f"mixed.{t}.se", s), put(out, f"mixed.{t}.z", mu / s)
                put(out, f"mixed.{t}.p_value", 2 * norm.sf(abs(mu / s)))
                put(out, f"mixed.{t}.low", mu - q * s), put(out, f"mixed.{t}.high", mu + q * s)
            put(out, "mixed.random_effects.intercept_var", var[0]), put(out, "mixed.random_effects.slope_var", var[1])
        if len(d) <= meta["max_games_gee"]:
            r = smf.gee(formula, "interrogator", d, family=sm.families.Binomial(),
                        cov_struct=sm.cov_struct.Exchangeable()).fit()
            ci = r.conf_int(alpha)
            for t in r.params.index:
                put(out, f"gee.{t}.estimate", r.params[t]), put(out, f"gee.{t}.se", r.bse[t])
                put(out, f"gee.{t}.z", r.tvalues[t]), put(out, f"gee.{t}.p_value", r.pvalues[t])
                put(out, f"gee.{t}.low", ci.loc[t, 0]), put(out, f"gee.{t}.high", ci.loc[t, 1])


# Relative tolerance per kind of number (|a - b| <= rtol * max(|a|, |b|)); ZERO is the absolute floor
# for numbers that are 0 up to rounding (a difference of equal rates). Exact and closed-form numbers,
# and the bootstraps (same seed, same draws): 1e-9. Iterative fits: the GEE 1e-6, the mixed model's
# ML fit 1e-3 (its optimiser's tolerance; a GLMM p of 0.0012 against 0.000265 differs).
RTOL = {"mixed.": 1e-3, "gee.": 1e-6}
RTOL_DEFAULT = 1e-9
ZERO = 1e-12


def tolerance(key: str) -> float:
    return next((t for prefix, t in RTOL.items() if key.startswith(prefix)), RTOL_DEFAULT)


def close(a, b, key: str) -> bool:
    if a is None or b is None:
        return a is None and b is None
    return abs(a - b) <= max(tolerance(key) * max(abs(a), abs(b)), ZERO)


def main() -> int:
    saved = json.loads((HERE / "report_numbers.json").read_text())
    new = rebuild(saved["meta"])
    if "--json" in sys.argv:
        print(json.dumps(new, indent=1, sort_keys=True))
        return 0
    old = saved["numbers"]
    bad = [k for k in sorted(set(old) | set(new)) if k in new and not (k in old and close(old[k], new[k], k))]
    for k in bad[:50]:
        print(f"MISMATCH {k}: report {old.get(k, 'missing')} rebuilt {new.get(k, 'missing')}")
    left = sorted(set(old) - set(new))
    sections = sorted({k.split(".")[0] for k in left})
    if bad:
        print("differing sections: " + ", ".join(sorted({k.split(".")[0] for k in bad})))
    print(f"rebuilt {len(set(old) & set(new)) - len(bad)}/{len(old)} of the report's numbers; {len(bad)} differ; "
          f"{len(left)} not rebuilt by this script" + (f" (sections: {', '.join(sections)})" if left else ""))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
