"""Belief tracking (issue 29): the interrogator's slider, turn by turn.

A move's `value` (0-100) is turned into the belief in the truth, `p_correct` in [0, 1]: two-player
value/100 when the witness is an AI, 1 - value/100 when it is a human; three-player value/100 when B
is the human, else 1 - value/100. After witness reply k (replies of every conversation, in the
order shown) a game's belief is its last move after a reply <= k, 0.5 (the slider's start) before
any. Time to detection: the first move with p_correct >= `confident`, in seconds from the game's
start and in replies; games without one are censored at their end (Kaplan-Meier, statsmodels'
SurvfuncRight; log-log pointwise intervals, and the median's interval from statsmodels' quantile_ci,
which treats games as independent). Interrogators play several games, so each median also gets a
cluster bootstrap interval that resamples interrogators (percentile, `N_BOOT` draws, seeded).
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from scipy import stats

BELIEF_COLUMNS = {
    "game_id": ("string", "Game identifier."),
    "seq": ("Int64", "Position of the belief event in the game's append-only log."),
    "t_ms": ("Int64", "Time the move was stored, ms since the Unix epoch."),
    "conversation": ("string", "Conversation of the witness reply the move follows."),
    "value": ("Int64", "Slider value 0-100: two-player 0 = human, 100 = AI; three-player 0 = A is the human, "
                       "100 = B is the human."),
    "after_seq": ("Int64", "Log position (messages.seq) of the witness reply the move follows."),
}
CONFIDENT = 0.75  # a "confident" belief: p_correct at or above this
TOP_MOVES = 10
N_BOOT = 400


@dataclass
class BeliefAnalysis:
    confident: float
    alpha: float
    n_games: int  # games analysed (with a verdict, after exclusions)
    n_moves: int
    per_game: pd.DataFrame  # game_id, kind, witness, n_replies, event, time_s, replies
    trajectories: pd.DataFrame  # by, group, k, n, mean, low, high
    detection: pd.DataFrame  # by, group, n, events, median_s, median_s_low, median_s_high, median_k, ...
    curves: dict = field(default_factory=dict)  # (by, group, scale) -> DataFrame t, surv, low, high
    moves: pd.DataFrame | None = None  # the replies after which belief moved most

    def records(self) -> dict:
        return {"trajectories": _records(self.trajectories), "detection": _records(self.detection),
                "moves": _records(self.moves)}


def _records(df: pd.DataFrame | None) -> list[dict]:
    if df is None or df.empty:
        return []
    return [{k: (None if isinstance(v, float) and not np.isfinite(v) else v) for k, v in r.items()}
            for r in df.astype(object).where(df.notna(), None).to_dict("records")]


def game_truths(judgements: pd.DataFrame) -> pd.DataFrame:
    """One row per game: format, start and end, the groups (kind, witness) and how a value maps to
    p_correct (`sign` +1: p_correct = value/100; -1: p_correct = 1 - value/100)."""
    rows = []
    for gid, g in judgements.groupby("game_id", sort=False):
        fmt = str(g["format"].iloc[0])
        if fmt == "two-player":
            r = g.iloc[0]
            kind, witness = str(r["witness_kind"]), str(r["witness"])
            sign = 1 if kind == "ai" else -1
        else:
            ai = g[g["witness_kind"] == "ai"]
            human = g[g["witness_kind"] == "human"]
            if len(ai) != 1 or len(human) != 1:
                continue  # not one human and one AI: no truth to believe in
            kind, witness = "AI and human", str(ai["witness"].iloc[0])
            sign = 1 if human["seat"].iloc[0] == "B" else -1
        rows.append({"game_id": gid, "interrogator_id": str(g["interrogator_id"].iloc[0]) if "interrogator_id" in g
                     else str(gid), "format": fmt, "kind": kind, "witness": witness, "sign": sign,
                     "started_ms": int(g["started_ms"].iloc[0]), "ended_ms": int(g["ended_ms"].iloc[0])})
    return pd.DataFrame(rows, columns=["game_id", "interrogator_id", "format", "kind", "witness", "sign", "started_ms",
                                       "ended_ms"])


def p_correct(value, sign):
    v = np.asarray(value, dtype=float) / 100.0
    return np.where(np.asarray(sign) > 0, v, 1.0 - v)


def _reply_index(messages: pd.DataFrame) -> dict[str, list[int]]:
    """game -> the log positions of its witness replies, in order."""
    w = messages[messages["actor"] != "interrogator"].sort_values(["game_id", "seq"])
    return {str(g): [int(s) for s in x["seq"]] for g, x in w.groupby("game_id")}


def per_game(truths: pd.DataFrame, messages: pd.DataFrame, beliefs: pd.DataFrame,
             confident: float = CONFIDENT) -> tuple[pd.DataFrame, dict[str, list[float]]]:
    """Each game's time to detection (event, time_s, replies) and its belief after each reply."""
    replies = _reply_index(messages)
    by_game = {str(g): b.sort_values("seq") for g, b in beliefs.groupby("game_id")}
    rows, paths = [], {}
    for t in truths.itertuples(index=False):
        seqs = replies.get(t.game_id, [])
        b = by_game.get(t.game_id)
        path = [0.5] * len(seqs)
        event, time_s, k_det = 0, (t.ended_ms - t.started_ms) / 1000.0, len(seqs)
        if b is not None and len(b):
            pc = p_correct(b["value"].to_numpy(), t.sign)
            ks = np.searchsorted(seqs, b["after_seq"].to_numpy(dtype=int)) + 1  # reply index of each move
            for k, p in zip(ks, pc):  # in log order: a later move after the same reply replaces it
                for j in range(int(k) - 1, len(seqs)):
                    path[j] = float(p)
            hit = np.flatnonzero(pc >= confident - 1e-12)
            if len(hit):
                event = 1
                time_s = (int(b["t_ms"].iloc[hit[0]]) - t.started_ms) / 1000.0
                k_det = int(ks[hit[0]])
        paths[t.game_id] = path
        rows.append({"game_id": t.game_id, "interrogator_id": t.interrogator_id, "kind": t.kind, "witness": t.witness, "n_replies": len(seqs),
                     "n_moves": 0 if b is None else len(b), "event": event, "time_s": time_s, "replies": k_det})
    return pd.DataFrame(rows), paths


def trajectories(games: pd.DataFrame, paths: dict[str, list[float]], alpha: float = 0.05) -> pd.DataFrame:
    """Mean p_correct after reply k, by witness kind and by witness (t intervals over games)."""
    rows = []
    for by in ("kind", "witness"):
        for group, g in games.groupby(by, sort=True):
            kmax = int(g["n_replies"].max()) if len(g) else 0
            for k in range(1, kmax + 1):
                v = np.array([paths[x][k - 1] for x in g["game_id"] if len(paths[x]) >= k])
                m = float(v.mean())
                if len(v) > 1 and v.std(ddof=1) > 0:
                    half = stats.t.ppf(1 - alpha / 2, len(v) - 1) * v.std(ddof=1) / np.sqrt(len(v))
                else:
                    half = np.nan
                rows.append({"by": by, "group": str(group), "k": k, "n": len(v), "mean": m,
                             "low": max(0.0, m - half), "high": min(1.0, m + half)})
    return pd.DataFrame(rows, columns=["by", "group", "k", "n", "mean", "low", "high"])


def km(time, event, alpha: float = 0.05) -> tuple[pd.DataFrame, tuple[float, float, float]]:
    """Kaplan-Meier curve (t, surv, low, high: log-log pointwise interval) and the median with its
    interval (statsmodels' quantile_ci; nan where the curve does not reach it)."""
    from statsmodels.duration.survfunc import SurvfuncRight

    sf = SurvfuncRight(np.asarray(time, float), np.asarray(event, int))
    s, se = sf.surv_prob, sf.surv_prob_se
    z = stats.norm.ppf(1 - alpha / 2)
    with np.errstate(divide="ignore", invalid="ignore"):
        ll = np.log(-np.log(s))
        d = z * se / (s * np.abs(np.log(s)))
        low, high = np.exp(-np.exp(ll + d)), np.exp(-np.exp(ll - d))
    low = np.where(s >= 1, 1.0, np.where(s <= 0, 0.0, low))
    high = np.where(s >= 1, 1.0, np.where(s <= 0, 0.0, high))
    curve = pd.DataFrame({"t": np.r_[0.0, sf.surv_times], "surv": np.r_[1.0, s],
                          "low": np.r_[1.0, low], "high": np.r_[1.0, high]})
    med = float(sf.quantile(0.5))  # the first time S falls below 1/2 (statsmodels' and SAS's rule)
    with warnings.catch_warnings():  # S = 0 or 1 somewhere: log(-log S) is infinite there, the bound nan
        warnings.simplefilter("ignore", RuntimeWarning)
        try:
            lo, hi = sf.quantile_ci(0.5, alpha=alpha)
        except (ValueError, IndexError, ZeroDivisionError):  # too few events for an interval
            lo, hi = np.nan, np.nan
    return curve, (med, float(lo), float(hi))


def boot_median(g: pd.DataFrame, col: str, alpha: float = 0.05, n_boot: int = N_BOOT,
                seed: int = 0) -> tuple[float, float]:
    """Percentile interval of the Kaplan-Meier median of `col`, resampling interrogators (with all
    their games); draws whose curve never falls below 1/2 count as +inf (so the upper bound can be inf)."""
    from statsmodels.duration.survfunc import SurvfuncRight

    rng = np.random.default_rng(seed)
    ids = g["interrogator_id"].to_numpy()
    uniq = np.unique(ids)
    rows_of = {u: np.flatnonzero(ids == u) for u in uniq}
    t, e = g[col].to_numpy(float), g["event"].to_numpy(int)
    meds = np.empty(n_boot)
    for b in range(n_boot):
        idx = np.concatenate([rows_of[u] for u in rng.choice(uniq, len(uniq))])
        m = SurvfuncRight(t[idx], e[idx]).quantile(0.5) if e[idx].any() else np.nan
        meds[b] = np.inf if np.isnan(m) else m
    q = np.quantile(meds, [alpha / 2, 1 - alpha / 2], method="inverted_cdf")  # no interpolation: inf stays inf
    return float(q[0]), float(q[1])


def detection(games: pd.DataFrame, alpha: float = 0.05, n_boot: int = N_BOOT) -> tuple[pd.DataFrame, dict]:
    rows, curves = [], {}
    for by in ("kind", "witness"):
        for group, g in games.groupby(by, sort=True):
            row = {"by": by, "group": str(group), "n": len(g), "events": int(g["event"].sum())}
            for scale, col in (("s", "time_s"), ("k", "replies")):
                if row["events"]:
                    curve, (m, lo, hi) = km(g[col], g["event"], alpha)
                else:
                    curve, (m, lo, hi) = pd.DataFrame({"t": [0.0], "surv": [1.0], "low": [1.0], "high": [1.0]}), (np.nan,) * 3
                curves[(by, str(group), scale)] = curve
                row.update({f"median_{scale}": m, f"median_{scale}_low": lo, f"median_{scale}_high": hi})
                blo, bhi = boot_median(g, col, alpha, n_boot) if row["events"] and n_boot else (np.nan, np.nan)
                row.update({f"median_{scale}_boot_low": blo, f"median_{scale}_boot_high": bhi})
            rows.append(row)
    return pd.DataFrame(rows), curves


def biggest_moves(games: pd.DataFrame, paths: dict[str, list[float]], messages: pd.DataFrame,
                  tags: pd.DataFrame | None = None, top: int = TOP_MOVES) -> pd.DataFrame:
    """The replies after which belief moved most: the change of p_correct from before the reply to
    the last move after it (+ toward the truth), with the reply, the question before it and the game's tags."""
    text = {(str(r.game_id), int(r.seq)): str(r.text) for r in messages.itertuples(index=False)}
    replies = _reply_index(messages)
    asked = {}
    for r in messages.sort_values(["game_id", "seq"]).itertuples(index=False):
        if r.actor == "interrogator":
            asked[(str(r.game_id), str(r.conversation))] = str(r.text)
        else:
            asked[(str(r.game_id), int(r.seq))] = asked.get((str(r.game_id), str(r.conversation)), "")
    codes: dict[str, str] = {}
    if tags is not None and len(tags):
        for gid, t in tags.groupby("game_id"):
            codes[str(gid)] = ", ".join(sorted(set(t["category"].astype(str))))
    rows = []
    for g in games.itertuples(index=False):
        path = paths[g.game_id]
        for k, p in enumerate(path):
            before = path[k - 1] if k else 0.5
            if p != before:
                seq = replies[g.game_id][k]
                rows.append({"game_id": g.game_id, "kind": g.kind, "witness": g.witness, "k": k + 1,
                             "change": p - before, "question": asked.get((g.game_id, seq), "")[:200],
                             "reply": text.get((g.game_id, seq), "")[:200], "tags": codes.get(g.game_id, "")})
    out = pd.DataFrame(rows, columns=["game_id", "kind", "witness", "k", "change", "question", "reply", "tags"])
    if out.empty:
        return out
    order = out["change"].abs().sort_values(ascending=False, kind="stable").index
    return out.loc[order].head(top).reset_index(drop=True)


def analyse_beliefs(judgements: pd.DataFrame, messages: pd.DataFrame, beliefs: pd.DataFrame,
                    tags: pd.DataFrame | None = None, confident: float = CONFIDENT,
                    alpha: float = 0.05) -> BeliefAnalysis | None:
    """The belief analysis of the games in `judgements` (None when they have no belief moves).
    Every analysed game counts, moved or not: a study tracks beliefs in all its games."""
    if beliefs is None or beliefs.empty or not 0.5 < confident <= 1:
        return None
    truths = game_truths(judgements)
    b = beliefs[beliefs["game_id"].isin(set(truths["game_id"]))]
    if b.empty:
        return None
    games, paths = per_game(truths, messages, b, confident)
    det, curves = detection(games, alpha)
    return BeliefAnalysis(confident, alpha, len(games), len(b), games, trajectories(games, paths, alpha), det,
                          curves, biggest_moves(games, paths, messages, tags))
