"""The further analyses of a study (`jb`, `leaderboard`), run by `core.analyse`, and their numbers."""

from __future__ import annotations

import numpy as np
import pandas as pd

from turinglab.analysis.live import jb, passes, tables
from turinglab.analysis.live import leaderboard as lb


def first_game_criteria(sr: pd.DataFrame, fmt: str, alpha: float, df: pd.DataFrame | None = None,
                        family: str = "holm", closed: bool = True) -> pd.DataFrame:
    """Giunti's criteria on interrogators' first games only (with the companions of `passes`)."""
    first = sr[["witness", "kind", "k_first", "n_first"]].rename(columns={"k_first": "k", "n_first": "n"})
    crit = tables.criteria(first, fmt, alpha, closed)
    return crit if df is None else passes.add_companions(crit, df, fmt, alpha, family, first_only=True, closed=closed)


def leaderboard_rows(df: pd.DataFrame, bots: pd.DataFrame) -> pd.DataFrame:
    cols = ["game_id", "format", "seat", "witness_kind", "witness", "judged_human"]
    parts = [df[cols].assign(bot=False)]
    if len(bots):
        parts.append(bots[cols].assign(bot=True))
    return pd.concat(parts, ignore_index=True)


def more(df, games, sr, participants, tags, messages, witnesses, bots, fmt: str, alpha: float,
         family: str = "holm", closed: bool = True) -> dict:
    stage = jb.verdict_kind(games)
    tagged = tags if tags is not None and not tags.empty else None
    idx = games["game_index"].clip(upper=5).astype(int).map(lambda i: "5+" if i == 5 else str(i))
    return {
        "by_index_kind": jb.by_index_kind(games, alpha),
        "distribution": jb.demographic_distribution(games, participants),
        "dprime_reg": jb.dprime_regression(games, participants, alpha),
        "first_criteria": first_game_criteria(sr, fmt, alpha, df, family, closed),
        "participation": jb.participation(df),
        "roster": jb.roster(sr, witnesses),
        "length": jb.length_table(df, messages, fmt),
        "timing_check": jb.timing_check(df, messages, fmt),
        "latency": jb.reply_latency(df, messages),
        "strategy_top": jb.tag_top(tagged, "strategy", alpha, games=games),
        "reason_top": jb.tag_top(tagged, "reason", alpha, games=games),
        "reason_by_verdict": jb.tags_by(tagged, "reason", games, stage, alpha, top_n=5),
        "strategy_by_index": jb.tags_by(tagged, "strategy", games, idx, alpha, top_n=5),
        "kappa": jb.kappas(None if tagged is None else tagged[tagged["game_id"].isin(set(df["game_id"]))]),
        "leaderboard": lb.leaderboard(leaderboard_rows(df, bots), alpha),
        "bot_games": int(bots["game_id"].nunique()) if len(bots) else 0,
    }


def extra_numbers(a) -> dict[str, float | None]:
    """Flat, keyed like `Analysis.numbers()`: 'section.row.column'."""
    e = a.extra
    out: dict[str, float] = {}

    def put_rows(prefix: str, t: pd.DataFrame, key, cols) -> None:
        if t is None or len(t) == 0:
            return
        for r in t.to_dict("records"):
            k = key(r) if callable(key) else r[key]
            for c in cols:
                out[f"{prefix}.{k}.{c}"] = r.get(c)

    rate = ("k", "n", "rate", "low", "high")
    for r in a.comparisons.to_dict("records"):
        for c in ("se_cluster", "p_cluster", "p_cluster_holm"):
            if c in r:
                out[f"compare.{r['a']}|{r['b']}.{c}"] = r[c]
    put_rows("by_index_kind", e.get("by_index_kind"), lambda r: f"{r['kind']}.{r['game_index']}", rate)
    put_rows("distribution", e.get("distribution"), lambda r: f"{r['variable']}.{r['group']}", ("interrogators", "share"))
    reg = e.get("dprime_reg") or {}
    put_rows("dprime_reg", reg.get("table"), "term", ("estimate", "se", "p_value", "low", "high"))
    if reg.get("n"):
        out["dprime_reg.n"] = reg["n"]
        out["dprime_reg.r2"] = reg.get("r2")
    put_rows("criteria_first", e.get("first_criteria"), "witness",
             ("machine_success", "ms_low", "ms_high", "threshold", "p_value", "humanness", "hu_low", "hu_high",
              "p_holm", "se_cluster", "p_cluster"))
    put_rows("participation", e.get("participation"), "role",
             ("participants", "games", "mean", "sd", "median", "max", "one", "two_to_four", "five_plus"))
    put_rows("roster", e.get("roster"), "witness", ("k", "n"))
    put_rows("length", e.get("length"), "kind", ("n", "duration_mean", "duration_sd", "duration_median", "messages_mean",
                                                  "messages_sd", "words_interrogator_mean", "words_witness_mean", "words_witness_sd"))
    tc = e.get("timing_check") or {}
    for name, v in tc.items():
        if isinstance(v, dict):
            for c in ("ai_median", "human_median", "n_ai", "n_human", "p_value"):
                out[f"timing_check.{name}.{c}"] = v.get(c)
    put_rows("strategy_top", e.get("strategy_top"), "category", (*rate, "mean_game_index"))
    put_rows("reason_top", e.get("reason_top"), "category", (*rate, "mean_game_index"))
    put_rows("reason_by_verdict", e.get("reason_by_verdict"), lambda r: f"{r['group']}.{r['category']}", rate)
    put_rows("strategy_by_index", e.get("strategy_by_index"), lambda r: f"{r['group']}.{r['category']}", rate)
    put_rows("kappa", e.get("kappa"), lambda r: f"{r['taxonomy']}.{r['level']}", ("games", "agreement", "kappa"))
    board = e.get("leaderboard") or {}
    put_rows("leaderboard", board.get("table"),
             lambda r: f"{r['format']}{'.bot' if r['bot'] else ''}.{r['witness']}", ("rank", "k", "n", "rate", "low", "high"))
    put_rows("bradley_terry", board.get("bradley_terry"), "player",
             ("beta", "se", "low", "high", "p_beats_ref", "p_low", "p_high", "wins", "comparisons"))
    out["bot_games"] = e.get("bot_games", 0)
    clean = {}
    for k, v in out.items():
        try:
            v = float(v) if v is not None else float("nan")
        except (TypeError, ValueError):
            continue
        clean[k] = v if np.isfinite(v) else None
    return clean
