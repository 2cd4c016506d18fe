"""Humanlikeness leaderboard: witnesses ranked by how often they were judged human.

- `humanlikeness`: per witness and format, the 'judged human' rate with an exact Sterne
  interval; bot games (games.flags["bot"]) are kept apart and marked.
- `bradley_terry`: strengths from pairwise comparisons by maximum likelihood (a logistic
  regression on ±1 player indicators, one player fixed at 0), Wald intervals. In a
  three-player game the AI witness and the human witness meet; the one judged human wins.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np
import pandas as pd

HUMAN = "Human"
COLUMNS = ["rank", "witness", "kind", "format", "bot", "k", "n", "rate", "low", "high"]


def is_bot(flags) -> bool:
    return bool((flags or {}).get("bot"))


def from_games(games: Iterable) -> pd.DataFrame:
    """Rows (game_id, format, seat, witness, witness_kind, judged_human, bot) from stored games."""
    from turinglab.game.events import judged_human

    rows = []
    for g in games:
        v = g.verdict
        if v is None:
            continue
        for seat, ident in g.seats.items():
            rows.append({"game_id": g.id, "format": g.format, "seat": seat, "witness_kind": ident.kind,
                         "witness": ident.witness if ident.kind == "ai" else HUMAN,
                         "judged_human": judged_human(g.format, v.choice, seat), "bot": is_bot(g.flags)})
    return pd.DataFrame(rows, columns=["game_id", "format", "seat", "witness_kind", "witness", "judged_human", "bot"])


def humanlikeness(rows: pd.DataFrame, alpha: float = 0.05) -> pd.DataFrame:
    """Witnesses by 'judged human' rate within (format, bot), best first, exact intervals."""
    from turinglab import stats

    if rows.empty:
        return pd.DataFrame(columns=COLUMNS)
    bot = rows["bot"].astype(bool) if "bot" in rows else pd.Series(False, index=rows.index)
    d = rows.assign(bot=bot, judged_human=rows["judged_human"].astype(bool))
    out = []
    for (fmt, b, w, kind), g in d.groupby(["format", "bot", "witness", "witness_kind"]):
        k, n = int(g["judged_human"].sum()), len(g)
        iv = stats.interval(k, n, alpha=alpha)
        out.append({"witness": w, "kind": kind, "format": fmt, "bot": bool(b), "k": k, "n": n,
                    "rate": k / n, "low": float(iv.low), "high": float(iv.high)})
    t = pd.DataFrame(out).sort_values(["bot", "format", "rate", "n"], ascending=[True, True, False, False])
    t["rank"] = t.groupby(["bot", "format"]).cumcount() + 1
    return t[COLUMNS].reset_index(drop=True)


def three_player_pairs(rows: pd.DataFrame) -> pd.DataFrame:
    """(winner, loser) per three-player game: the witness judged human beat the other."""
    d = rows[rows["format"] == "three-player"]
    out = []
    for gid, g in d.groupby("game_id", sort=False):
        if len(g) != 2:
            continue
        win = g[g["judged_human"].astype(bool)]
        lose = g[~g["judged_human"].astype(bool)]
        if len(win) == 1 and len(lose) == 1:
            out.append((win["witness"].iloc[0], lose["witness"].iloc[0]))
    return pd.DataFrame(out, columns=["winner", "loser"])


def bradley_terry(pairs: pd.DataFrame, reference: str = HUMAN, alpha: float = 0.05) -> pd.DataFrame:
    """P(i beats j) = 1 / (1 + exp(−(β_i − β_j))), β_reference = 0, fitted by maximum likelihood.

    Returns per player: beta (log-odds against the reference), SE, Wald interval, and
    p_beats_ref = logistic(beta) with the transformed interval, wins and comparisons."""
    import statsmodels.api as sm
    from scipy.stats import norm

    cols = ["player", "beta", "se", "low", "high", "p_beats_ref", "p_low", "p_high", "wins", "comparisons"]
    if pairs.empty:
        return pd.DataFrame(columns=cols)
    players = sorted(set(pairs["winner"]) | set(pairs["loser"]))
    if reference not in players:
        reference = players[0]
    free = [p for p in players if p != reference]
    if not free:
        return pd.DataFrame(columns=cols)
    ix = {p: i for i, p in enumerate(free)}
    # each comparison once, oriented by player order so the outcome varies
    x = np.zeros((len(pairs), len(free)))
    y = np.zeros(len(pairs))
    for r, (w, l_) in enumerate(zip(pairs["winner"], pairs["loser"])):
        first, second = (w, l_) if players.index(w) < players.index(l_) else (l_, w)
        if first in ix:
            x[r, ix[first]] += 1
        if second in ix:
            x[r, ix[second]] -= 1
        y[r] = 1.0 if first == w else 0.0
    fit = sm.Logit(y, x).fit(disp=0, method="newton", maxiter=200)
    z = norm.ppf(1 - alpha / 2)
    beta, se = np.asarray(fit.params), np.asarray(fit.bse)
    wins = pairs["winner"].value_counts()
    games = pd.concat([pairs["winner"], pairs["loser"]]).value_counts()
    rows = [{"player": reference, "beta": 0.0, "se": np.nan, "low": np.nan, "high": np.nan, "p_beats_ref": 0.5,
             "p_low": np.nan, "p_high": np.nan, "wins": int(wins.get(reference, 0)), "comparisons": int(games.get(reference, 0))}]  # the reference: fixed, no interval
    expit = lambda v: 1 / (1 + np.exp(-v))  # noqa: E731
    for p, i in ix.items():
        lo, hi = beta[i] - z * se[i], beta[i] + z * se[i]
        rows.append({"player": p, "beta": float(beta[i]), "se": float(se[i]), "low": float(lo), "high": float(hi),
                     "p_beats_ref": float(expit(beta[i])), "p_low": float(expit(lo)), "p_high": float(expit(hi)),
                     "wins": int(wins.get(p, 0)), "comparisons": int(games.get(p, 0))})
    return pd.DataFrame(rows, columns=cols).sort_values("beta", ascending=False).reset_index(drop=True)


def leaderboard(rows: pd.DataFrame, alpha: float = 0.05) -> dict:
    """The humanlikeness table and, from non-bot three-player games, the Bradley–Terry ranking."""
    table = humanlikeness(rows, alpha)
    notes = []
    real = rows[~rows["bot"].astype(bool)] if "bot" in rows and len(rows) else rows
    pairs = three_player_pairs(real) if len(real) else pd.DataFrame(columns=["winner", "loser"])
    bt = pd.DataFrame()
    if len(pairs):
        left_out: list[str] = []
        while True:  # a player who won all or none has an infinite MLE: leave it out, say so
            wins = pairs["winner"].value_counts()
            total = pd.concat([pairs["winner"], pairs["loser"]]).value_counts()
            perfect = [p for p in total.index if p != HUMAN and wins.get(p, 0) in (0, total[p])]
            if not perfect:
                break
            left_out += perfect
            pairs = pairs[~pairs["winner"].isin(perfect) & ~pairs["loser"].isin(perfect)]
        if left_out:
            notes.append("Left out of the Bradley–Terry fit: " + ", ".join(sorted(left_out)) + " (won all or none of "
                         "its comparisons, so its maximum-likelihood strength is infinite; see the table above)")
        if len(pairs):
            bt = bradley_terry(pairs, HUMAN, alpha)
    else:
        notes.append("Bradley–Terry: no three-player games (it needs an AI and a human witness in one game)")
    if "bot" in rows and rows["bot"].astype(bool).any():
        notes.append("Bot games (flag bot) are listed separately and left out of the Bradley–Terry fit")
    return {"table": table, "bradley_terry": bt, "notes": notes, "n_pairs": int(len(pairs))}
