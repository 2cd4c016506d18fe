"""Who wrote the witnesses' replies (issue 35): per game and seat the count of replies by source,
the flag `fallback_wrote_reply`, and per AI witness the share of replies by source and the pass
rate with and without the games in which the fallback wrote any reply.

A reply's source is in its `message` event (game/events.py `source_of`): model, regenerated,
brush_off, fallback, last_resort for an AI witness; human for a person; unknown for AI replies
stored before sources were recorded.
"""

from __future__ import annotations

import pandas as pd

from turinglab import stats
from turinglab.analysis.live.schema import AI_SOURCES, FLAG_PREFIX, REPLY_COLUMNS

FLAG = "fallback_wrote_reply"


def reply_counts(messages: pd.DataFrame) -> pd.DataFrame:
    """One row per (game_id, seat) with a witness message: witness_replies and replies_<source>."""
    cols = ["game_id", "seat", *REPLY_COLUMNS]
    if messages is None or messages.empty or "source" not in messages.columns:
        return pd.DataFrame(columns=cols)
    w = messages[messages["actor"] != "interrogator"]
    if w.empty:
        return pd.DataFrame(columns=cols)
    counts = pd.crosstab([w["game_id"], w["actor"]], w["source"])
    out = pd.DataFrame({"witness_replies": counts.sum(axis=1)})
    for s in AI_SOURCES:
        out[f"replies_{s}"] = counts[s] if s in counts.columns else 0
    out["fallback_share"] = out["replies_fallback"] / out["witness_replies"]
    return out.rename_axis(["game_id", "seat"]).reset_index()[cols]


def add_reply_columns(judgements: pd.DataFrame, messages: pd.DataFrame) -> pd.DataFrame:
    """The judgements with REPLY_COLUMNS and `flag_fallback_wrote_reply` (for every row of a game
    in which the fallback wrote any reply, as the other game flags)."""
    df = judgements.drop(columns=[c for c in REPLY_COLUMNS if c in judgements.columns])
    counts = reply_counts(messages)
    df = df.merge(counts, on=["game_id", "seat"], how="left")
    for c, (t, _) in REPLY_COLUMNS.items():
        df[c] = (df[c] if c == "fallback_share" else df[c].fillna(0)).astype(t)
    fell = df["replies_fallback"].fillna(0).gt(0).groupby(df["game_id"]).transform("any")
    df[FLAG_PREFIX + FLAG] = fell.astype(bool)
    return df


def source_table(df: pd.DataFrame, alpha: float = 0.05) -> pd.DataFrame:
    """Per AI witness of the analysed judgements: replies, the share of each source, and the pass
    rate (judged human) in all games and in the games without a fallback reply (k, n, rate and
    the exact interval)."""
    cols = ["witness", "replies", *[f"share_{s}" for s in AI_SOURCES],
            *[f"{w}_{c}" for w in ("all", "without") for c in ("k", "n", "rate", "low", "high")]]
    if "witness_replies" not in df.columns:
        return pd.DataFrame(columns=cols)
    rows = []
    flag = df.get(FLAG_PREFIX + FLAG, pd.Series(False, index=df.index)).fillna(False).astype(bool)
    for w, g in df[df["witness_kind"] == "ai"].groupby("witness", sort=True):
        n_rep = int(g["witness_replies"].sum())
        row = {"witness": w, "replies": n_rep}
        for s in AI_SOURCES:
            row[f"share_{s}"] = g[f"replies_{s}"].sum() / n_rep if n_rep else float("nan")
        for which, sub in (("all", g), ("without", g[~flag.loc[g.index]])):
            k, n = int(sub["judged_human"].astype(bool).sum()), len(sub)
            iv = stats.interval(k, n, alpha) if n else None
            row.update({f"{which}_k": k, f"{which}_n": n, f"{which}_rate": k / n if n else float("nan"),
                        f"{which}_low": iv.low if iv else float("nan"), f"{which}_high": iv.high if iv else float("nan")})
        rows.append(row)
    return pd.DataFrame(rows, columns=cols)


def source_numbers(table: pd.DataFrame) -> dict[str, float]:
    """The table's numbers, keyed as the export's rebuild.py rebuilds them."""
    out: dict[str, float] = {}
    for r in table.to_dict("records"):
        w = r["witness"]
        out[f"sources.{w}.replies"] = r["replies"]
        for s in AI_SOURCES:
            out[f"sources.{w}.share_{s}"] = r[f"share_{s}"]
        for which in ("all", "without"):
            for c in ("k", "n", "rate", "low", "high"):
                out[f"sources.{w}.pass_{which}.{c}"] = r[f"{which}_{c}"]
    return out
