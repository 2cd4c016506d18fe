"""The rest of Jones & Bergen's analyses (their figs. 5, 14, 15, appendix F, G, H), beside `accuracy`/`tables`.

Every function takes the tidy tables (`schema`) and returns a DataFrame or dict; exact
intervals go through `turinglab.stats`.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from turinglab.analysis.live import accuracy
from turinglab.game import survey

TOP_N = 10
# coded survey answers -> their labels (the report shows labels, never bare codes)
CODE_LABELS = {"chatbot_freq": dict(enumerate(survey.CHATBOT_USE)),
               "llm_knowledge": dict(enumerate(survey.LLM_KNOWLEDGE))}
VARIABLE_LABELS = {"age": "age", "gender": "gender", "education": "education",
                   "chatbot_freq": "chatbot use", "llm_knowledge": "LLM knowledge"}


def _rate(k: int, n: int, alpha: float) -> dict:
    return accuracy._rate(k, n, alpha)


def group_label(variable: str, group) -> str:
    """'2' on the chatbot-use scale -> 'weekly (2)'; other groups as they are."""
    labels = CODE_LABELS.get(variable)
    if labels is None:
        return str(group)
    try:
        code = int(float(group))
    except (TypeError, ValueError):
        return str(group)
    return f"{labels.get(code, '?')} ({code})"


def by_index_kind(games: pd.DataFrame, alpha: float, cap: int = 5) -> pd.DataFrame:
    """Accuracy by the interrogator's game number, split by the witness kind (two-player)."""
    cols = ["kind", "game_index", "i", "k", "n", "rate", "low", "high"]
    if not (games["format"] == "two-player").all():
        return pd.DataFrame(columns=cols)
    idx = games["game_index"].clip(upper=cap).astype(int)
    rows = []
    for (kind, i), g in games.groupby([games["witness_kind"], idx]):
        rows.append({"kind": kind, "game_index": f"{i}+" if i == cap else str(i), "i": int(i),
                     **_rate(int(g["correct"].sum()), len(g), alpha)})
    return pd.DataFrame(rows, columns=cols)


def interrogator_table(games: pd.DataFrame, participants: pd.DataFrame | None) -> pd.DataFrame:
    """One row per interrogator: their demographics (age in years, ordinal codes) and games."""
    ids = games["interrogator_id"].astype(str).unique()
    out = pd.DataFrame({"interrogator_id": ids})
    if participants is not None and not participants.empty:
        p = participants.assign(participant_id=participants["participant_id"].astype(str))
        out = out.merge(p, left_on="interrogator_id", right_on="participant_id", how="left")
    return out


def demographic_distribution(games: pd.DataFrame, participants: pd.DataFrame | None) -> pd.DataFrame:
    """How many interrogators fall in each demographic group (Jones & Bergen fig. 14)."""
    cols = ["variable", "group", "interrogators", "share"]
    it = interrogator_table(games, participants)
    rows = []
    n = len(it)
    for col in accuracy.DEMOGRAPHICS:
        if col not in it.columns:
            continue
        v = it[col]
        if col == "age":
            v = pd.cut(v.astype(float), accuracy.AGE_BINS, labels=accuracy.AGE_LABELS, right=False).astype("object")
            order = accuracy.AGE_LABELS
        elif col in CODE_LABELS:
            v = v.astype(float).map(lambda x: group_label(col, x) if pd.notna(x) else None)
            order = [group_label(col, c) for c in CODE_LABELS[col]]
        else:
            from turinglab.stats.factors import level_order

            order = level_order(col, v.dropna().astype(str).unique())  # education from none to doctorate
        v = v.fillna("not answered")
        for level in [*order, "not answered"]:
            k = int((v == level).sum())
            if k or level != "not answered":
                rows.append({"variable": VARIABLE_LABELS[col], "group": level, "interrogators": k,
                             "share": k / n if n else np.nan})
    return pd.DataFrame(rows, columns=cols)


def per_interrogator_dprime(games: pd.DataFrame) -> pd.DataFrame:
    """d′ per interrogator who met both witness kinds, rates smoothed (x+0.5)/(n+1) (appendix F)."""
    from scipy.stats import norm

    ai = games["witness_kind"].eq("ai")
    jai = ~games["judged_human"].astype(bool)
    g = pd.DataFrame({"i": games["interrogator_id"].astype(str), "ai": ai, "hit": ai & jai, "fa": ~ai & jai})
    agg = g.groupby("i").agg(n_sig=("ai", "sum"), n=("ai", "size"), hits=("hit", "sum"), fas=("fa", "sum"))
    agg = agg[(agg["n_sig"] > 0) & (agg["n"] > agg["n_sig"])]
    h = (agg["hits"] + 0.5) / (agg["n_sig"] + 1)
    f = (agg["fas"] + 0.5) / (agg["n"] - agg["n_sig"] + 1)
    return pd.DataFrame({"interrogator_id": agg.index, "dprime": norm.ppf(h) - norm.ppf(f), "games": agg["n"].to_numpy()})


def dprime_regression(games: pd.DataFrame, participants: pd.DataFrame | None, alpha: float) -> dict:
    """OLS of per-interrogator d′ on demographics (Jones & Bergen appendix F, fig. 15).

    Age per 10 years, chatbot use and LLM knowledge as their ordinal codes (per step);
    gender and education as categories against a stated reference level."""
    import statsmodels.formula.api as smf

    out: dict = {"n": 0, "table": pd.DataFrame(columns=["term", "label", "estimate", "se", "p_value", "low", "high"]),
                 "note": "", "references": {}}
    if not (games["format"] == "two-player").all():
        out["note"] = "not fitted: three-player d′ is one number per game design (2AFC), not per interrogator"
        return out
    d = per_interrogator_dprime(games)
    it = interrogator_table(games, participants)
    d = d.merge(it, on="interrogator_id", how="left")
    terms, labels, refs = [], {"Intercept": "intercept (reference levels, age 0)"}, {}
    if "age" in d and d["age"].notna().any():
        d["age10"] = d["age"].astype(float) / 10
        terms.append("age10")
        labels["age10"] = "age (per 10 years)"
    for col in ("chatbot_freq", "llm_knowledge"):
        if col in d and d[col].notna().any():
            terms.append(col)
            labels[col] = f"{VARIABLE_LABELS[col]} (per step of {' < '.join(CODE_LABELS[col].values())})"
    from turinglab.stats.factors import factor, reference_levels

    refs_all = reference_levels(games, participants)  # the same reference in every table (issue 41)
    for col in ("gender", "education"):
        if col in d and d[col].dropna().nunique() > 1:
            present = d[col].dropna().unique()
            name = factor(d, col, present, refs_all.get(col))
            ref = refs[col] = name.split("reference=")[1][1:-3]
            terms.append(name)
            for lev in present:
                if lev != ref:
                    labels[f"{name}[T.{lev}]"] = f"{col}: {lev} (vs {ref})"
    d = d.dropna(subset=["dprime", *[t for t in ("age10", "chatbot_freq", "llm_knowledge") if t in terms]])
    if len(d) < len(terms) + 3:
        out["note"] = f"not fitted: {len(d)} interrogators met both witness kinds"
        return out
    fit = smf.ols("dprime ~ " + (" + ".join(terms) or "1"), d).fit()
    ci = fit.conf_int(alpha)
    out["table"] = pd.DataFrame({"term": fit.params.index, "label": [labels.get(t, t) for t in fit.params.index],
                                 "estimate": fit.params.to_numpy(), "se": fit.bse.to_numpy(),
                                 "p_value": fit.pvalues.to_numpy(), "low": ci[0].to_numpy(), "high": ci[1].to_numpy()})
    out.update(n=int(len(d)), r2=float(fit.rsquared), references=refs,
               mean=float(d["dprime"].mean()), sd=float(d["dprime"].std(ddof=1)))
    return out


def participation(df: pd.DataFrame) -> pd.DataFrame:
    """Games per participant, as interrogator and as human witness."""
    rows = []
    games = df.drop_duplicates("game_id")
    per = {"interrogator": games.groupby("interrogator_id").size(),
           "human witness": df[df["witness_kind"] == "human"].dropna(subset=["witness_participant_id"])
           .groupby("witness_participant_id")["game_id"].nunique()}
    for role, s in per.items():
        if s.empty:
            rows.append({"role": role, "participants": 0, "games": 0, "mean": np.nan, "sd": np.nan,
                         "median": np.nan, "max": 0, "one": 0, "two_to_four": 0, "five_plus": 0})
            continue
        rows.append({"role": role, "participants": int(len(s)), "games": int(s.sum()), "mean": float(s.mean()),
                     "sd": float(s.std(ddof=1)) if len(s) > 1 else np.nan, "median": float(s.median()),
                     "max": int(s.max()), "one": int((s == 1).sum()), "two_to_four": int(s.between(2, 4).sum()),
                     "five_plus": int((s >= 5).sum())})
    return pd.DataFrame(rows)


def roster(success: pd.DataFrame, specs) -> pd.DataFrame:
    """Every configured witness with its type and model; one with no games is listed with n = 0."""
    info = {s.codename: (str(s.kind), s.model or "") for s in (specs or ())}
    rows = []
    for r in success.itertuples(index=False):
        unknown = "not in the study file" if info else ""  # no study file given: nothing to say
        typ, model = info.get(r.witness, ("human" if r.kind == "human" else unknown, ""))
        rows.append({"witness": r.witness, "type": typ, "model": model,
                     "k": int(r.k), "n": int(r.n), "played": True})
    seen = set(success["witness"]) if len(success) else set()
    for name, (typ, model) in info.items():
        if name not in seen:
            rows.append({"witness": name, "type": typ, "model": model, "k": 0, "n": 0, "played": False})
    return pd.DataFrame(rows, columns=["witness", "type", "model", "k", "n", "played"])


def words(messages: pd.DataFrame | None) -> pd.DataFrame:
    """Words per game and conversation, by speaker role (interrogator / witness)."""
    cols = ["game_id", "conversation", "words_interrogator", "words_witness"]
    if messages is None or messages.empty:
        return pd.DataFrame(columns=cols)
    m = messages.assign(w=messages["text"].fillna("").str.split().str.len(),
                        role=np.where(messages["actor"] == "interrogator", "words_interrogator", "words_witness"))
    t = m.pivot_table(index=["game_id", "conversation"], columns="role", values="w", aggfunc="sum", fill_value=0)
    t = t.reindex(columns=cols[2:], fill_value=0).reset_index()
    return t[cols]


def length_table(df: pd.DataFrame, messages: pd.DataFrame | None, fmt: str) -> pd.DataFrame:
    """Game length (mean, SD, median), messages and words per conversation, by witness kind."""
    d = df.copy()
    w = words(messages)
    if len(w):
        d = d.merge(w, left_on=["game_id", "seat"], right_on=["game_id", "conversation"], how="left")
    else:
        d["words_interrogator"] = np.nan
        d["words_witness"] = np.nan
    if fmt == "two-player":
        d = d.drop_duplicates("game_id")
    rows = []
    for kind in ("ai", "human"):
        g = d[d["witness_kind"] == kind]
        num = lambda s, fn: float(fn(s.dropna())) if s.notna().any() else np.nan  # noqa: E731
        rows.append({"kind": kind, "n": len(g),
                     "duration_mean": num(g["duration_s"], np.mean), "duration_sd": num(g["duration_s"], lambda x: x.std(ddof=1)),
                     "duration_median": num(g["duration_s"], np.median),
                     "messages_mean": num(g["n_messages"].astype(float), np.mean),
                     "messages_sd": num(g["n_messages"].astype(float), lambda x: x.std(ddof=1)),
                     "words_interrogator_mean": num(g["words_interrogator"].astype(float), np.mean),
                     "words_witness_mean": num(g["words_witness"].astype(float), np.mean),
                     "words_witness_sd": num(g["words_witness"].astype(float), lambda x: x.std(ddof=1))})
    return pd.DataFrame(rows)


def reply_latency(df: pd.DataFrame, messages: pd.DataFrame | None) -> pd.DataFrame:
    """Per game × seat: median seconds from an interrogator message to the witness's next reply."""
    cols = ["game_id", "seat", "witness_kind", "latency_s"]
    if messages is None or messages.empty:
        return pd.DataFrame(columns=cols)
    m = messages.sort_values(["game_id", "conversation", "seq"], kind="stable")
    prev_actor = m.groupby(["game_id", "conversation"])["actor"].shift()
    prev_t = m.groupby(["game_id", "conversation"])["t_ms"].shift()
    reply = (m["actor"] != "interrogator") & (prev_actor == "interrogator")
    lat = pd.DataFrame({"game_id": m["game_id"], "seat": m["conversation"], "latency_s": (m["t_ms"] - prev_t) / 1000})[reply]
    lat = lat.groupby(["game_id", "seat"], as_index=False)["latency_s"].median()
    kinds = df[["game_id", "seat", "witness_kind"]].drop_duplicates()
    return kinds.merge(lat, on=["game_id", "seat"], how="inner")[cols]


def timing_check(df: pd.DataFrame, messages: pd.DataFrame | None, fmt: str) -> dict:
    """Could timing reveal the witness kind? Compares what the interrogator could see.

    Two-player: game lengths and reply latencies of AI vs human games (KS, independent games).
    Three-player: both conversations of a game last equally long, so lengths say nothing; the
    check compares the AI's and the human's reply latency and message count *within* each game
    (Wilcoxon signed-rank, paired)."""
    from scipy.stats import ks_2samp, wilcoxon

    lat = reply_latency(df, messages)
    out = {"design": "independent games (KS)" if fmt == "two-player" else "paired within game (Wilcoxon)"}
    if fmt == "two-player":
        g = df.drop_duplicates("game_id")
        for name, a_, h_ in (("duration", g.loc[g["witness_kind"] == "ai", "duration_s"], g.loc[g["witness_kind"] == "human", "duration_s"]),
                             ("latency", lat.loc[lat["witness_kind"] == "ai", "latency_s"], lat.loc[lat["witness_kind"] == "human", "latency_s"])):
            a_, h_ = a_.dropna(), h_.dropna()
            ok = len(a_) > 1 and len(h_) > 1
            out[name] = {"ai_median": float(a_.median()) if len(a_) else np.nan,
                         "human_median": float(h_.median()) if len(h_) else np.nan,
                         "n_ai": int(len(a_)), "n_human": int(len(h_)),
                         "p_value": float(ks_2samp(a_, h_).pvalue) if ok else np.nan}
        return out
    pairs = {"latency": lat.pivot_table(index="game_id", columns="witness_kind", values="latency_s"),
             "messages": df.pivot_table(index="game_id", columns="witness_kind", values="n_messages")}
    for name, t in pairs.items():
        t = t.dropna(subset=[c for c in ("ai", "human") if c in t.columns]) if {"ai", "human"} <= set(t.columns) else t.iloc[0:0]
        diff = (t["ai"] - t["human"]) if len(t) else pd.Series(dtype=float)
        if len(t) < 2:
            pv = np.nan
        elif (diff == 0).all():
            pv = 1.0  # identical in every game: nothing timing could reveal
        else:
            pv = float(wilcoxon(t["ai"], t["human"]).pvalue)
        out[name] = {"ai_median": float(t["ai"].median()) if len(t) else np.nan,
                     "human_median": float(t["human"].median()) if len(t) else np.nan,
                     "n_ai": int(len(t)), "n_human": int(len(t)), "p_value": pv}
    return out


# ---- hand tags: strategies and reasons (Jones & Bergen appendix G, H; figs. 9-11) ----

def tag_top(tags: pd.DataFrame | None, taxonomy: str, alpha: float, top_n: int = TOP_N,
            games: pd.DataFrame | None = None) -> pd.DataFrame:
    """The top-N categories of a taxonomy: share of tagged games with an exact interval."""
    from turinglab.analysis.live.taxonomy import names

    cols = ["category", "name", "k", "n", "rate", "low", "high"]
    if tags is None or tags.empty:
        return pd.DataFrame(columns=cols)
    t = tags[tags["taxonomy"] == taxonomy]
    n = int(t["game_id"].nunique())
    if n == 0:
        return pd.DataFrame(columns=cols)
    lookup = names()
    rows = [{"category": c, "name": lookup.get((taxonomy, c), "?"), **_rate(int(g["game_id"].nunique()), n, alpha)}
            for c, g in t.groupby("category")]
    out = pd.DataFrame(rows, columns=cols)
    if games is not None:  # mean game number of the games with each code (Jones & Bergen fig. 16)
        gi = pd.Series(games["game_index"].to_numpy(float), index=games["game_id"].astype(str))
        means = t.drop_duplicates(["category", "game_id"])
        means = means.assign(i=pd.to_numeric(means["game_id"].astype(str).map(gi), errors="coerce").astype(float))
        out["mean_game_index"] = out["category"].map(means.groupby("category")["i"].mean())
    return out.sort_values(["k", "category"], ascending=[False, True]).head(top_n).reset_index(drop=True)


def tags_by(tags: pd.DataFrame | None, taxonomy: str, games: pd.DataFrame, by: pd.Series, alpha: float,
            top_n: int = TOP_N) -> pd.DataFrame:
    """Share of games in each group (e.g. verdict × witness kind) carrying each top category."""
    cols = ["group", "category", "name", "k", "n", "rate", "low", "high"]
    top = tag_top(tags, taxonomy, alpha, top_n)
    if top.empty:
        return pd.DataFrame(columns=cols)
    t = tags[tags["taxonomy"] == taxonomy]
    gid = games["game_id"].astype(str)
    group = pd.Series(by.to_numpy(), index=gid)
    tagged = set(t["game_id"].astype(str))
    rows = []
    for grp in sorted(group.dropna().unique(), key=str):
        ids = set(group.index[(group == grp).to_numpy()]) & tagged
        for r in top.itertuples(index=False):
            sel = t[(t["category"] == r.category) & t["game_id"].astype(str).isin(ids)]
            k = int(sel["game_id"].nunique())
            rows.append({"group": str(grp), "category": r.category, "name": r.name, **_rate(k, len(ids), alpha)})
    return pd.DataFrame(rows, columns=cols)


def verdict_kind(games: pd.DataFrame) -> pd.Series:
    """'judged human · AI witness' etc. (two-player); three-player: whom the interrogator chose."""
    if (games["format"] == "three-player").all():
        return pd.Series(np.where(games["correct"].astype(bool), "chose the human", "chose the AI"), index=games.index)
    v = np.where(games["judged_human"].astype(bool), "judged human", "judged AI")
    k = np.where(games["witness_kind"].eq("ai"), "AI witness", "human witness")
    return pd.Series([f"{a} · {b}" for a, b in zip(v, k)], index=games.index)


KAPPA_NOTE = ("κ is computed over the analysed games both taggers tagged (excluded games are left out). Raw agreement "
              "is the share of those games given the same category; κ corrects it for the agreement expected by chance "
              "from each tagger's category shares, so with one dominant category κ can be low although raw agreement is high.")


def kappas(tags: pd.DataFrame | None) -> pd.DataFrame:
    """Cohen's kappa for each taxonomy that exactly two taggers coded (sub- and top-level); pass the
    tags of the analysed games only (see KAPPA_NOTE)."""
    from turinglab.analysis.live.taxonomy import agreement

    cols = ["taxonomy", "level", "tagger_a", "tagger_b", "games", "agreement", "kappa", "note"]
    rows = []
    if tags is None or tags.empty:
        return pd.DataFrame(columns=cols)
    for tax in sorted(tags["taxonomy"].unique()):
        for level in ("sub", "top"):
            try:
                r = agreement(tags, tax, level=level)
                rows.append({**r, "note": ""})
            except ValueError as exc:
                rows.append({"taxonomy": tax, "level": level, "tagger_a": "", "tagger_b": "", "games": 0,
                             "agreement": np.nan, "kappa": np.nan, "note": str(exc)})
    return pd.DataFrame(rows, columns=cols)
