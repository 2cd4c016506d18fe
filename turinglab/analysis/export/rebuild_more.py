"""The further analyses of the report, rebuilt from this export's files (called by rebuild.py).

Same rule as rebuild.py: pandas, numpy, scipy, statsmodels and turinglab.stats only; nothing of
turinglab.analysis. Sections: demographic distribution, d′ regression, game length, roster,
timing check, tag tables, Cohen's κ, the bot rows of the leaderboard and Bradley–Terry.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pandas as pd
from scipy.stats import norm

from turinglab.stats.factors import ORDERS, factor, interrogators, level_order, reference_levels  # noqa: F401

AGE_BINS, AGE_LABELS = [0, 25, 35, 45, 55, 200], ["<25", "25–34", "35–44", "45–54", "55+"]
VARIABLES = {"age": "age", "gender": "gender", "education": "education", "chatbot_freq": "chatbot use",
             "llm_knowledge": "LLM knowledge"}


def distribution(out, put, games, parts, codes: dict) -> None:
    """Interrogators per demographic group; coded answers under 'label (code)'."""
    it = interrogators(games, parts)
    n = len(it)
    for col, name in VARIABLES.items():
        if col not in it:
            continue
        v = it[col]
        if col == "age":
            v = pd.cut(v.astype(float), AGE_BINS, labels=AGE_LABELS, right=False).astype("object")
            order = AGE_LABELS
        elif col in codes:
            lab = codes[col]
            v = v.astype(float).map(lambda x: f"{lab[int(x)] if 0 <= int(x) < len(lab) else '?'} ({int(x)})"
                                    if pd.notna(x) else None)
            order = [f"{t} ({i})" for i, t in enumerate(lab)]
        else:
            order = sorted(v.dropna().astype(str).unique())
        v = v.astype("object").where(v.notna(), "not answered")
        for level in [*order, "not answered"]:
            k = int((v == level).sum())
            if k or level != "not answered":
                put(out, f"distribution.{name}.{level}.interrogators", k)
                put(out, f"distribution.{name}.{level}.share", k / n if n else math.nan)


def dprime_regression(out, put, games, parts, alpha) -> None:
    """OLS of per-interrogator d′ (rates smoothed (x+0.5)/(n+1)) on demographics; two-player only."""
    import statsmodels.formula.api as smf

    rows = []
    for i, g in games.groupby(games["interrogator_id"].astype(str)):
        ai = (g["witness_kind"] == "ai").to_numpy()
        said_ai = ~g["judged_human"].to_numpy(bool)
        s, t = int(ai.sum()), int((~ai).sum())
        if s and t:
            h, f = ((ai & said_ai).sum() + 0.5) / (s + 1), ((~ai & said_ai).sum() + 0.5) / (t + 1)
            rows.append((i, norm.ppf(h) - norm.ppf(f)))
    d = pd.DataFrame(rows, columns=["interrogator_id", "dprime"]).merge(interrogators(games, parts),
                                                                         on="interrogator_id", how="left")
    terms, numeric = [], []
    if "age" in d and d["age"].notna().any():
        d["age10"] = d["age"].astype(float) / 10
        numeric.append("age10")
    numeric += [c for c in ("chatbot_freq", "llm_knowledge") if c in d and d[c].notna().any()]
    terms += numeric
    refs = reference_levels(games, parts)
    for col in ("gender", "education"):
        if col in d and d[col].dropna().nunique() > 1:
            terms.append(factor(d, col, d[col].dropna().unique(), refs.get(col)))
    d = d.dropna(subset=["dprime", *numeric])
    if len(d) < len(terms) + 3:
        return
    for c in numeric:
        d[c] = d[c].astype(float)
    fit = smf.ols("dprime ~ " + (" + ".join(terms) or "1"), d).fit()
    ci = fit.conf_int(alpha)
    for t in fit.params.index:
        for c, v in (("estimate", fit.params[t]), ("se", fit.bse[t]), ("p_value", fit.pvalues[t]),
                     ("low", ci.loc[t, 0]), ("high", ci.loc[t, 1])):
            put(out, f"dprime_reg.{t}.{c}", v)
    put(out, "dprime_reg.n", len(d)), put(out, "dprime_reg.r2", fit.rsquared)


def words(msgs: pd.DataFrame) -> pd.DataFrame:
    """Words per (game, conversation): the interrogator's and the witness's."""
    if not len(msgs):
        return pd.DataFrame(columns=["game_id", "seat", "wi", "ww"])
    m = msgs.assign(w=msgs["text"].fillna("").astype(str).str.split().str.len(),
                    who=np.where(msgs["actor"] == "interrogator", "wi", "ww"))
    t = m.groupby(["game_id", "conversation", "who"])["w"].sum().unstack("who", fill_value=0)
    t = t.reindex(columns=["wi", "ww"], fill_value=0).reset_index()
    return t.rename(columns={"conversation": "seat"})


def length(out, put, df, msgs, three) -> None:
    d = df.merge(words(msgs), on=["game_id", "seat"], how="left")
    if not three:
        d = d.drop_duplicates("game_id")

    def num(s, fn):
        s = s.astype(float).dropna()
        return fn(s) if len(s) else math.nan

    sd = lambda s: s.std(ddof=1)  # noqa: E731
    for kind in ("ai", "human"):
        g = d[d["witness_kind"] == kind]
        for c, v in (("n", len(g)), ("duration_mean", num(g["duration_s"], np.mean)),
                     ("duration_sd", num(g["duration_s"], sd)), ("duration_median", num(g["duration_s"], np.median)),
                     ("messages_mean", num(g["n_messages"], np.mean)), ("messages_sd", num(g["n_messages"], sd)),
                     ("words_interrogator_mean", num(g["wi"], np.mean)), ("words_witness_mean", num(g["ww"], np.mean)),
                     ("words_witness_sd", num(g["ww"], sd))):
            put(out, f"length.{kind}.{c}", v)


def latency(df, msgs) -> pd.DataFrame:
    """Per game and seat: the median time from an interrogator message to the witness's next message."""
    m = msgs.sort_values(["game_id", "conversation", "seq"], kind="stable").reset_index(drop=True)
    key = m["game_id"].astype(str) + "\x00" + m["conversation"].astype(str)
    same = key.eq(key.shift())  # the previous message is in the same conversation
    asked = m["actor"].shift().eq("interrogator") & m["actor"].ne("interrogator") & same
    lat = pd.DataFrame({"game_id": m["game_id"], "seat": m["conversation"],
                        "latency_s": m["t_ms"].astype(float).diff() / 1000})[asked]
    lat = lat.groupby(["game_id", "seat"], as_index=False)["latency_s"].median()
    return df[["game_id", "seat", "witness_kind"]].drop_duplicates().merge(lat, on=["game_id", "seat"])


def timing_check(out, put, df, msgs, three) -> None:
    from scipy.stats import ks_2samp, wilcoxon

    lat = latency(df, msgs)

    def row(name, ai, hu, p):
        for c, v in (("ai_median", ai.median() if len(ai) else math.nan),
                     ("human_median", hu.median() if len(hu) else math.nan),
                     ("n_ai", len(ai)), ("n_human", len(hu)), ("p_value", p)):
            put(out, f"timing_check.{name}.{c}", v)

    if not three:
        g = df.drop_duplicates("game_id")
        for name, t, col in (("duration", g, "duration_s"), ("latency", lat, "latency_s")):
            ai = t.loc[t["witness_kind"] == "ai", col].astype(float).dropna()
            hu = t.loc[t["witness_kind"] == "human", col].astype(float).dropna()
            row(name, ai, hu, ks_2samp(ai, hu).pvalue if len(ai) > 1 and len(hu) > 1 else math.nan)
        return
    for name, t, col in (("latency", lat, "latency_s"), ("messages", df, "n_messages")):
        w = t.assign(v=t[col].astype(float)).groupby(["game_id", "witness_kind"])["v"].mean().unstack()
        w = w.dropna(subset=["ai", "human"]) if {"ai", "human"} <= set(w.columns) else pd.DataFrame(columns=["ai", "human"])
        diff = w["ai"] - w["human"]
        p = math.nan if len(w) < 2 else 1.0 if (diff == 0).all() else wilcoxon(w["ai"], w["human"]).pvalue
        row(name, w["ai"], w["human"], p)


def roster(out, put, sr: dict, witnesses: pd.DataFrame) -> None:
    """Every witness played (k judged human of n), then every AI witness of the study file not played (0 of 0)."""
    for w, (_, k, n) in sr.items():
        put(out, f"roster.{w}.k", k), put(out, f"roster.{w}.n", n)
    for w in witnesses["witness"].astype(str):
        if w not in sr:
            put(out, f"roster.{w}.k", 0), put(out, f"roster.{w}.n", 0)


def rate(out, put, key, k, n, alpha, stats) -> None:
    iv = stats.interval(int(k), int(n), alpha=alpha) if n else None
    for c, v in (("k", k), ("n", n), ("rate", k / n if n else math.nan), ("low", iv.low if iv else math.nan),
                 ("high", iv.high if iv else math.nan)):
        put(out, f"{key}.{c}", v)


def top_codes(t: pd.DataFrame, n_top: int) -> list[tuple[str, int]]:
    """The n_top categories tagged on the most games (ties: by code), with their game counts."""
    k = t.groupby("category")["game_id"].nunique()
    return sorted(k.items(), key=lambda x: (-x[1], x[0]))[:n_top]


def tag_accuracy(out, put, tags, games) -> None:
    """HTML table "Accuracy in games with each tag": per code, the analysed games with it and accuracy in them."""
    if not len(tags):
        return
    correct = pd.Series(games["correct"].to_numpy(float), index=games["game_id"].astype(str))
    for (tax, cat), g in tags.groupby(["taxonomy", "category"]):
        acc = correct.reindex(g["game_id"].astype(str).unique()).dropna()
        put(out, f"tag_accuracy.{tax}.{cat}.games", len(acc))
        put(out, f"tag_accuracy.{tax}.{cat}.accuracy", acc.mean() if len(acc) else None)


def tag_tables(out, put, tags, games, three, alpha, stats) -> None:
    """Top-10 codes per taxonomy (share of the taxonomy's tagged games, mean game number), and the top 5 by
    verdict × witness kind (reasons) and by game number (strategies), over the analysed games."""
    if not len(tags):
        return
    gid = games["game_id"].astype(str)
    gi = pd.Series(games["game_index"].to_numpy(float), index=gid)
    if three:
        verdict = np.where(games["correct"].to_numpy(bool), "chose the human", "chose the AI")
    else:
        v = np.where(games["judged_human"].to_numpy(bool), "judged human", "judged AI")
        kk = np.where(games["witness_kind"].eq("ai"), "AI witness", "human witness")
        verdict = np.array([f"{a} · {b}" for a, b in zip(v, kk)])
    idx = games["game_index"].clip(upper=5).astype(int).map(lambda i: "5+" if i == 5 else str(i)).to_numpy()
    for tax, by, name in (("strategy", idx, "strategy_by_index"), ("reason", verdict, "reason_by_verdict")):
        t = tags[tags["taxonomy"] == tax].assign(game_id=lambda x: x["game_id"].astype(str))
        n = t["game_id"].nunique()
        if not n:
            continue
        for c, k in top_codes(t, 10):
            rate(out, put, f"{tax}_top.{c}", k, n, alpha, stats)
            ids = t.loc[t["category"] == c, "game_id"].unique()
            put(out, f"{tax}_top.{c}.mean_game_index", pd.Series(ids).map(gi).astype(float).mean())
        tagged = set(t["game_id"])
        for grp in sorted(set(by), key=str):
            ids = set(gid[by == grp]) & tagged
            for c, _ in top_codes(t, 5):
                k = t.loc[(t["category"] == c) & t["game_id"].isin(ids), "game_id"].nunique()
                rate(out, put, f"{name}.{grp}.{c}", k, len(ids), alpha, stats)


def kappa(out, put, tags, analysed: set) -> None:
    """Cohen's κ of the two taggers of each taxonomy over the analysed games both tagged (each tagger's
    first code of a game, by code order), at the sub-category and the top level: (p_o − p_e) / (1 − p_e)."""
    t = tags[tags["game_id"].astype(str).isin(analysed)]
    for tax in sorted(t["taxonomy"].unique()):
        for level in ("sub", "top"):
            x = t[t["taxonomy"] == tax]
            if level == "top":
                x = x.assign(category=x["category"].str.rstrip("abcdefghijklmnopqrstuvwxyz"))
            taggers = sorted(x["tagger"].unique())
            first = x.sort_values("category").groupby(["tagger", "game_id"])["category"].first()
            both = (first[taggers[0]].index.intersection(first[taggers[1]].index)) if len(taggers) == 2 else []
            key = f"kappa.{tax}.{level}"
            if len(both) < 2:
                put(out, f"{key}.games", 0), put(out, f"{key}.agreement", math.nan), put(out, f"{key}.kappa", math.nan)
                continue
            a, b = first[taggers[0]].loc[both].to_numpy(), first[taggers[1]].loc[both].to_numpy()
            po = float((a == b).mean())
            labels = sorted(set(a) | set(b))
            pe = sum(float((a == c).mean()) * float((b == c).mean()) for c in labels)
            put(out, f"{key}.games", len(both)), put(out, f"{key}.agreement", po)
            put(out, f"{key}.kappa", (po - pe) / (1 - pe) if pe < 1 else math.nan)


def leaderboard(out, put, rows: pd.DataFrame, fmt: str, bot: bool, alpha, stats) -> None:
    """Each witness's 'judged human' rate over every seat it held, ranked by rate, then n."""
    lb = pd.DataFrame([(w, int(g["judged_human"].sum()), len(g)) for w, g in rows.groupby("witness")],
                      columns=["w", "k", "n"])
    lb["rate"] = lb["k"] / lb["n"]
    lb = lb.sort_values(["rate", "n"], ascending=[False, False]).reset_index(drop=True)
    for rank, r in enumerate(lb.itertuples(index=False), 1):
        iv = stats.interval(int(r.k), int(r.n), alpha=alpha)
        for c, v in (("rank", rank), ("k", r.k), ("n", r.n), ("rate", r.rate), ("low", iv.low), ("high", iv.high)):
            put(out, f"leaderboard.{fmt}{'.bot' if bot else ''}.{r.w}.{c}", v)


def bradley_terry(out, put, df: pd.DataFrame, alpha) -> None:
    """Three-player games: the witness judged human beat the other. β_Human = 0; a player who won all or none
    of its comparisons is left out (repeatedly); β by Newton–Raphson on the Bradley–Terry likelihood, Wald SEs."""
    pairs = []
    for _, g in df.groupby("game_id", sort=False):
        jh = g["judged_human"].to_numpy(bool)
        if len(g) == 2 and jh.sum() == 1:
            w = g["witness"].astype(str).to_numpy()
            pairs.append((w[jh][0], w[~jh][0]))
    pairs = pd.DataFrame(pairs, columns=["winner", "loser"])
    while len(pairs):
        wins = pairs["winner"].value_counts()
        total = pd.concat([pairs["winner"], pairs["loser"]]).value_counts()
        perfect = [p for p in total.index if p != "Human" and wins.get(p, 0) in (0, total[p])]
        if not perfect:
            break
        pairs = pairs[~pairs["winner"].isin(perfect) & ~pairs["loser"].isin(perfect)]
    if not len(pairs):
        return
    players = sorted(set(pairs["winner"]) | set(pairs["loser"]))
    ref = "Human" if "Human" in players else players[0]
    free = [p for p in players if p != ref]
    if not free:
        return
    col = {p: i for i, p in enumerate(free)}
    x = np.zeros((len(pairs), len(free)))  # +1 winner, −1 loser: P(win) = logistic(x @ β), the observed outcome
    for r, (w, lo) in enumerate(zip(pairs["winner"], pairs["loser"])):
        if w in col:
            x[r, col[w]] += 1
        if lo in col:
            x[r, col[lo]] -= 1
    beta = np.zeros(len(free))
    for _ in range(200):
        p = 1 / (1 + np.exp(-(x @ beta)))
        info = x.T @ (x * (p * (1 - p))[:, None])
        step = np.linalg.solve(info, x.T @ (1 - p))
        beta += step
        if np.max(np.abs(step)) < 1e-12:
            break
    p = 1 / (1 + np.exp(-(x @ beta)))
    se = np.sqrt(np.diag(np.linalg.inv(x.T @ (x * (p * (1 - p))[:, None]))))
    z = norm.ppf(1 - alpha / 2)
    wins = pairs["winner"].value_counts()
    total = pd.concat([pairs["winner"], pairs["loser"]]).value_counts()
    expit = lambda v: 1 / (1 + math.exp(-v))  # noqa: E731
    rows = {ref: (0.0, math.nan, math.nan, math.nan, 0.5, math.nan, math.nan)}
    for pl, i in col.items():
        lo, hi = beta[i] - z * se[i], beta[i] + z * se[i]
        rows[pl] = (beta[i], se[i], lo, hi, expit(beta[i]), expit(lo), expit(hi))
    for pl, vals in rows.items():
        for c, v in zip(("beta", "se", "low", "high", "p_beats_ref", "p_low", "p_high"), vals):
            put(out, f"bradley_terry.{pl}.{c}", v)
        put(out, f"bradley_terry.{pl}.wins", wins.get(pl, 0)), put(out, f"bradley_terry.{pl}.comparisons", total.get(pl, 0))


# --- beliefs (issue 29): the report's belief block, from beliefs.csv, messages.csv and the analysed games ---

CONFIDENT, BELIEF_BOOT = 0.75, 400


def _km_median(t, e, alpha, ci: bool):
    from statsmodels.duration.survfunc import SurvfuncRight

    sf = SurvfuncRight(np.asarray(t, float), np.asarray(e, int))
    med = float(sf.quantile(0.5))
    if not ci:
        return med
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        try:
            lo, hi = sf.quantile_ci(0.5, alpha=alpha)
        except (ValueError, IndexError, ZeroDivisionError):
            lo, hi = np.nan, np.nan
    return med, float(lo), float(hi)


def _boot_median(ids, t, e, alpha):
    rng = np.random.default_rng(0)
    uniq = np.unique(ids)
    rows_of = {u: np.flatnonzero(ids == u) for u in uniq}
    meds = np.empty(BELIEF_BOOT)
    for b in range(BELIEF_BOOT):
        idx = np.concatenate([rows_of[u] for u in rng.choice(uniq, len(uniq))])
        m = _km_median(t[idx], e[idx], alpha, False) if e[idx].any() else np.nan
        meds[b] = np.inf if np.isnan(m) else m
    q = np.quantile(meds, [alpha / 2, 1 - alpha / 2], method="inverted_cdf")
    return float(q[0]), float(q[1])


def beliefs(out, put, df, msgs, moves, alpha) -> None:
    """Time to a confident correct belief (Kaplan-Meier medians, their intervals and the interrogator
    bootstrap), the mean belief in the truth after each reply, and the biggest moves."""
    from scipy import stats as st

    if moves is None or not len(moves):
        return
    df = df.sort_values(["started_ms", "game_id", "seat"], kind="stable")
    games = []
    for gid, g in df.groupby("game_id", sort=False):
        if g["format"].iloc[0] == "two-player":
            kind, witness = str(g["witness_kind"].iloc[0]), str(g["witness"].iloc[0])
            sign = 1 if kind == "ai" else -1
        else:
            ai, hu = g[g["witness_kind"] == "ai"], g[g["witness_kind"] == "human"]
            if len(ai) != 1 or len(hu) != 1:
                continue
            kind, witness, sign = "AI and human", str(ai["witness"].iloc[0]), 1 if hu["seat"].iloc[0] == "B" else -1
        games.append((str(gid), str(g["interrogator_id"].iloc[0]), kind, witness, sign,
                      int(g["started_ms"].iloc[0]), int(g["ended_ms"].iloc[0])))
    ids = {x[0] for x in games}
    mv = moves[moves["game_id"].astype(str).isin(ids)]
    if not len(mv):
        return
    w = msgs[msgs["actor"] != "interrogator"].sort_values(["game_id", "seq"])
    replies = {str(g): x["seq"].astype(int).tolist() for g, x in w.groupby("game_id")}
    by_game = {str(g): b.sort_values("seq") for g, b in mv.groupby("game_id")}
    rows, paths = [], {}
    for gid, who, kind, witness, sign, t0, t1 in games:
        seqs = replies.get(gid, [])
        path, event, time_s, k_det = [0.5] * len(seqs), 0, (t1 - t0) / 1000.0, len(seqs)
        b = by_game.get(gid)
        if b is not None:
            v = b["value"].to_numpy(float) / 100.0
            pc = v if sign > 0 else 1.0 - v
            ks = np.searchsorted(seqs, b["after_seq"].to_numpy(int)) + 1
            for k, p in zip(ks, pc):
                path[int(k) - 1:] = [float(p)] * (len(seqs) - int(k) + 1)
            hit = np.flatnonzero(pc >= CONFIDENT - 1e-12)
            if len(hit):
                event, time_s, k_det = 1, (int(b["t_ms"].iloc[hit[0]]) - t0) / 1000.0, int(ks[hit[0]])
        paths[gid] = path
        rows.append({"game_id": gid, "interrogator_id": who, "kind": kind, "witness": witness,
                     "n_replies": len(seqs), "event": event, "time_s": time_s, "replies": k_det})
    g_all = pd.DataFrame(rows)
    put(out, "beliefs.n_games", len(g_all)), put(out, "beliefs.n_moves", len(mv))
    for by in ("kind", "witness"):
        for group, g in g_all.groupby(by, sort=True):
            key = f"beliefs.detection.{by}.{group}"
            events = int(g["event"].sum())
            put(out, f"{key}.n", len(g)), put(out, f"{key}.events", events)
            for scale, col in (("s", "time_s"), ("k", "replies")):
                m = lo = hi = blo = bhi = np.nan
                if events:
                    m, lo, hi = _km_median(g[col], g["event"], alpha, True)
                    blo, bhi = _boot_median(g["interrogator_id"].to_numpy(), g[col].to_numpy(float),
                                            g["event"].to_numpy(int), alpha)
                for name, v in (("", m), ("_low", lo), ("_high", hi), ("_boot_low", blo), ("_boot_high", bhi)):
                    put(out, f"{key}.median_{scale}{name}", v)
            for k in range(1, int(g["n_replies"].max()) + 1 if len(g) else 1):
                v = np.array([paths[x][k - 1] for x in g["game_id"] if len(paths[x]) >= k])
                m = float(v.mean())
                half = (st.t.ppf(1 - alpha / 2, len(v) - 1) * v.std(ddof=1) / np.sqrt(len(v))
                        if len(v) > 1 and v.std(ddof=1) > 0 else np.nan)
                key_t = f"beliefs.trajectory.{by}.{group}.{k}"
                put(out, f"{key_t}.n", len(v)), put(out, f"{key_t}.mean", m)
                put(out, f"{key_t}.low", max(0.0, m - half))  # as the report: no interval reads [0, 1]
                put(out, f"{key_t}.high", min(1.0, m + half))
    changes = []
    for r in rows:
        path = paths[r["game_id"]]
        for k, p in enumerate(path):
            before = path[k - 1] if k else 0.5
            if p != before:
                changes.append((k + 1, p - before))
    changes.sort(key=lambda x: -abs(x[1]))  # stable: ties keep the games' order
    for i, (k, c) in enumerate(changes[:10], 1):
        put(out, f"beliefs.moves.{i}.k", k), put(out, f"beliefs.moves.{i}.change", c)
