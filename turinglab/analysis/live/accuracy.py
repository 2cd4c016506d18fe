"""Interrogator accuracy, d′ and confidence calibration.

Accuracy is per game: a three-player game counts once (its two rows share `correct`).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from sklearn.metrics import brier_score_loss


def per_game(df: pd.DataFrame) -> pd.DataFrame:
    """One row per game. For three-player, the AI seat's row (it names the machine)."""
    if (df["format"] == "three-player").any():
        return df[df["witness_kind"] == "ai"].drop_duplicates("game_id").reset_index(drop=True)
    return df.drop_duplicates("game_id").reset_index(drop=True)


def _rate(k: int, n: int, alpha: float) -> dict:
    from turinglab import stats

    if n == 0:
        return {"k": 0, "n": 0, "rate": np.nan, "low": np.nan, "high": np.nan}
    iv = stats.interval(int(k), int(n), alpha=alpha)
    return {"k": int(k), "n": int(n), "rate": k / n, "low": float(iv.low), "high": float(iv.high)}


def accuracy_table(games: pd.DataFrame, alpha: float) -> pd.DataFrame:
    """Accuracy overall and by witness kind (two-player), with exact intervals."""
    rows = [{"group": "all games", **_rate(int(games["correct"].sum()), len(games), alpha)}]
    if (games["format"] == "two-player").all():
        for kind, label in (("ai", "AI witness"), ("human", "human witness")):
            g = games[games["witness_kind"] == kind]
            rows.append({"group": label, **_rate(int(g["correct"].sum()), len(g), alpha)})
    return pd.DataFrame(rows)


def by_game_index(games: pd.DataFrame, alpha: float, cap: int = 5) -> pd.DataFrame:
    """Accuracy by the interrogator's game number (1, 2, ..., cap+ pooled)."""
    idx = games["game_index"].clip(upper=cap).astype(int)
    rows = []
    for i, g in games.groupby(idx):
        label = f"{i}+" if i == cap else str(i)
        rows.append({"game_index": label, "i": int(i), **_rate(int(g["correct"].sum()), len(g), alpha)})
    return pd.DataFrame(rows)


FEW_GAMES = 3  # per-interrogator d′ from fewer games of a witness kind than this is flagged


def dprime_table(games: pd.DataFrame) -> dict:
    """Signal detection: 'signal' = an AI witness, 'hit' = judged AI.

    Two-player: d′ = Z(hit rate) − Z(false-alarm rate), rates smoothed (x+0.5)/(n+1)
    (Jones & Bergen appendix F), for the pooled study and per interrogator.
    Three-player (2AFC): d′ = √2·Z(proportion correct).
    """
    from turinglab import stats

    if (games["format"] == "three-player").all():
        pc = float(games["correct"].mean())
        return {"design": "2AFC", "pooled": float(stats.dprime_2afc(pc)), "pc": pc,
                "per_interrogator_mean": np.nan, "per_interrogator_median": np.nan, "n_interrogators": 0}
    ai = games["witness_kind"] == "ai"
    jai = ~games["judged_human"].astype(bool)
    hits, n_sig = int((ai & jai).sum()), int(ai.sum())
    fas, n_noise = int((~ai & jai).sum()), int((~ai).sum())
    pooled = float(stats.dprime(hits, n_sig, fas, n_noise, smoothing="loglinear").d) if n_sig and n_noise else np.nan
    # per interrogator, only those who met both witness kinds
    g = pd.DataFrame({"i": games["interrogator_id"], "ai": ai, "hit": ai & jai, "fa": ~ai & jai})
    agg = g.groupby("i", observed=True).agg(n_sig=("ai", "sum"), n=("ai", "size"), hits=("hit", "sum"), fas=("fa", "sum"))
    agg = agg[(agg["n_sig"] > 0) & (agg["n"] > agg["n_sig"])]
    per = []
    if len(agg):
        h = (agg["hits"] + 0.5) / (agg["n_sig"] + 1)
        f = (agg["fas"] + 0.5) / (agg["n"] - agg["n_sig"] + 1)
        from scipy.stats import norm

        per = norm.ppf(h) - norm.ppf(f)
    return {"design": "yes/no", "pooled": pooled, "hits": hits, "n_signal": n_sig, "false_alarms": fas,
            "n_noise": n_noise,
            "per_interrogator_mean": float(np.mean(per)) if len(per) else np.nan,
            "per_interrogator_median": float(np.median(per)) if len(per) else np.nan,
            "n_interrogators": int(len(agg)),
            # d′ from 1-2 games of a kind is mostly the smoothing: how many interrogators that is
            "n_few_games": int(((agg["n_sig"] < FEW_GAMES) | (agg["n"] - agg["n_sig"] < FEW_GAMES)).sum())}


def confidence_prob(conf: pd.Series) -> pd.Series:
    """Confidence 0–100 as the stated probability that the verdict is right: 0 = a guess (0.5), 100 = sure (1.0)."""
    return 0.5 + conf.astype(float).clip(0, 100) / 200.0


def calibration(games: pd.DataFrame, alpha: float, n_bins: int = 5) -> tuple[pd.DataFrame, dict]:
    """Reliability bins (by confidence) per witness kind and Brier scores."""
    g = games.dropna(subset=["confidence"])
    p = confidence_prob(g["confidence"])
    y = g["correct"].astype(bool).to_numpy()
    brier = {"all": float(brier_score_loss(y, p, pos_label=True)) if len(g) else np.nan}
    edges = np.linspace(0, 100, n_bins + 1)
    bins = pd.cut(g["confidence"].astype(float), edges, include_lowest=True, right=False)
    # 100 falls outside [80, 100): put it in the last bin
    bins = bins.where(g["confidence"] < 100, bins.cat.categories[-1])
    kinds = [("all", np.ones(len(g), bool))]
    if (g["format"] == "two-player").all():
        kinds += [("ai", (g["witness_kind"] == "ai").to_numpy()), ("human", (g["witness_kind"] == "human").to_numpy())]
    rows = []
    for kind, mask in kinds:
        if kind != "all" and mask.any():
            brier[kind] = float(brier_score_loss(y[mask], p[mask], pos_label=True))
        for b in bins.cat.categories:
            m = mask & (bins == b).to_numpy()
            n = int(m.sum())
            r = _rate(int(y[m].sum()), n, alpha)
            rows.append({"kind": kind, "bin": f"{int(b.left)}–{int(b.right)}", "n": n,
                         "stated": float(p[m].mean()) if n else np.nan,
                         "observed": r["rate"], "low": r["low"], "high": r["high"]})
    return pd.DataFrame(rows), brier


AGE_BINS = [0, 25, 35, 45, 55, 200]
AGE_LABELS = ["<25", "25–34", "35–44", "45–54", "55+"]
DEMOGRAPHICS = ("age", "gender", "education", "chatbot_freq", "llm_knowledge")


def demographic_groups(games: pd.DataFrame, participants: pd.DataFrame | None) -> pd.DataFrame:
    """Per game, the interrogator's demographic group for each variable (age in bands)."""
    out = pd.DataFrame(index=games.index)
    if participants is None or participants.empty:
        return out
    p = participants.set_index(participants["participant_id"].astype(str))
    ids = games["interrogator_id"].astype(str)
    for col in DEMOGRAPHICS:
        if col not in p.columns:
            continue
        v = ids.map(p[col])
        if col == "age":
            v = pd.cut(v.astype(float), AGE_BINS, labels=AGE_LABELS, right=False).astype("object")
        elif col in ("chatbot_freq", "llm_knowledge"):
            v = v.astype(float).map(lambda x: f"{int(x)}" if pd.notna(x) else None)
        out[col] = v.astype("object")
    return out


def by_demographics(games: pd.DataFrame, participants: pd.DataFrame | None, alpha: float) -> pd.DataFrame:
    """Accuracy by each demographic variable's groups (Jones & Bergen figure 5), exact intervals.

    Descriptive: games of one interrogator are not independent; see the regressions for inference.
    """
    groups = demographic_groups(games, participants)
    rows = []
    for col in groups.columns:
        g = groups[col]
        from turinglab.stats.factors import level_order

        levels = g.dropna().unique()
        for level in (sorted(levels, key=AGE_LABELS.index) if col == "age" else level_order(col, levels)):
            m = (g == level).to_numpy()
            r = _rate(int(games.loc[m, "correct"].sum()), int(m.sum()), alpha)
            rows.append({"variable": col, "group": str(level),
                         "interrogators": int(games.loc[m, "interrogator_id"].nunique()), **r})
    return pd.DataFrame(rows, columns=["variable", "group", "interrogators", "k", "n", "rate", "low", "high"])
