"""Exclusion flags (SPEC §1): computed and stored as columns, never used to delete rows.

An analysis chooses which flags to apply with `apply_exclusions`, and reports them.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np
import pandas as pd

from turinglab.analysis.live.schema import FLAG_PREFIX, flag_names

# A reason saying the interrogator knows the witness, e.g. "I know her, she's my sister", and the
# paper's own examples ("we sit in the same room", "from my class", "my mate"). "my friend" after
# "like" or "of" is a comparison ("sounds like my friend lol"), not acquaintance.
KNOWS_WITNESS_RE = re.compile(
    r"\b(?:i|we)\s+(?:know|knew)\s+(?:him|her|them|this\s+person|the\s+witness|who\s+(?:it|this)\s+(?:is|was))\b"
    r"|(?<!like )(?<!of )\b(?:my|our)\s+(?:friend|mate|buddy|brother|sister|partner|roommate|flatmate|classmate"
    r"|colleague|coworker|co-worker|mum|mom|dad|wife|husband|boyfriend|girlfriend)\b"
    r"|\b(?:sit|sitting|sat|are|we're)\s+(?:in\s+the\s+same\s+(?:room|class|office|lab)|next\s+to\s+(?:me|each\s+other))\b"
    r"|\b(?:from|in)\s+my\s+(?:class|course|school|office|team|lab|group|seminar|lecture)\b"
    r"|\bknow\s+(?:him|her|them)\s+personally\b|\bpersonally\s+know\b",
    re.IGNORECASE,
)


def three_previous_ai(games: pd.DataFrame, who: str = "interrogator_id") -> pd.Series:
    """True where the participant's previous three games (rows of `games`) all had AI witnesses.

    `games` has one row per game a participant took part in, with `who` (the participant),
    started_ms, game_id and `has_ai` (the game was, for that participant, a game against an AI).
    Rows are counted in start order per participant. Returns a Series aligned to `games.index`.
    """
    g = games.sort_values([who, "started_ms", "game_id"], kind="mergesort")
    flag = three_previous_ai_fast(g[who].to_numpy(), g["has_ai"].to_numpy(dtype=bool))
    return pd.Series(flag, index=g.index).reindex(games.index).astype(bool)


def three_previous_ai_flags(per_game: pd.DataFrame, witness_games: pd.DataFrame) -> tuple[pd.Series, pd.Series]:
    """Both readings of Jones & Bergen's rule for each game of `per_game` (one row per game:
    game_id, interrogator_id, started_ms, has_ai), aligned to its index:

    - the paper's: the interrogator's previous three games *of any role* were all against AIs;
      a game they played as a human witness (`witness_games`: participant_id, started_ms,
      game_id) is a game with a human interrogator, so it breaks the run;
    - `interrogated`: only the games they interrogated are counted (the earlier reading).
    """
    mine = per_game.assign(who=per_game["interrogator_id"], role="i")[["who", "started_ms", "game_id", "has_ai", "role"]]
    wit = witness_games.assign(who=witness_games["participant_id"], has_ai=False, role="w")[
        ["who", "started_ms", "game_id", "has_ai", "role"]]
    every = pd.concat([mine, wit], ignore_index=True)
    every = every[every["who"].notna()].reset_index(drop=True)
    all_flag = three_previous_ai(every, who="who")
    paper = dict(zip(every.loc[every["role"].eq("i"), "game_id"], all_flag[every["role"].eq("i")]))
    interrogated = three_previous_ai(per_game)
    return per_game["game_id"].map(paper).fillna(False).astype(bool), interrogated


def three_previous_ai_fast(interrogator: np.ndarray, has_ai: np.ndarray) -> np.ndarray:
    """Same as `three_previous_ai` for arrays already sorted by interrogator then time (vectorised)."""
    n = len(has_ai)
    out = np.zeros(n, dtype=bool)
    if n < 4:
        return out
    a = has_ai.astype(bool)
    same = interrogator[3:] == interrogator[:-3]  # row i and row i-3 share the interrogator
    out[3:] = same & a[2:-1] & a[1:-2] & a[:-3]
    return out


def knows_witness_from_reason(reason: pd.Series) -> pd.Series:
    """True where the free-text reason says the interrogator knows the witness."""
    text = reason.fillna("").astype(str)
    uniq = pd.unique(text)  # reasons repeat a lot: test each distinct text once
    hit = {u: bool(KNOWS_WITNESS_RE.search(u)) for u in uniq}
    return text.map(hit).astype(bool)


def flag_table(judgements: pd.DataFrame, stored_knows: pd.Series | None = None) -> pd.DataFrame:
    """Add `flag_three_previous_ai` (the paper's reading: the interrogator's previous three games,
    in any role, were all against AIs), `flag_three_previous_ai_interrogated` (the option that
    counts only the games they interrogated) and `flag_knows_witness` to a judgements table.

    A game "against an AI" is a two-player game with an AI witness. In three-player
    games there is always one AI, so the J&B rule is not meaningful there and the flag
    is left False (the reason is given in the methods text).
    """
    df = judgements.copy()
    first = df.drop_duplicates("game_id")[["game_id", "interrogator_id", "started_ms", "format"]]
    has_ai = df["witness_kind"].eq("ai").groupby(df["game_id"], sort=False).all()
    per_game = first.assign(has_ai=first["game_id"].map(has_ai).to_numpy(dtype=bool), fmt=first["format"])
    per_game = per_game.reset_index(drop=True)
    humans = df[df["witness_kind"].eq("human") & df["witness_participant_id"].notna()] \
        if "witness_participant_id" in df.columns else df.iloc[:0]
    witness_games = pd.DataFrame({"participant_id": humans.get("witness_participant_id", pd.Series(dtype=object)),
                                  "started_ms": humans["started_ms"], "game_id": humans["game_id"]})
    paper, interrogated = three_previous_ai_flags(per_game, witness_games.drop_duplicates(["participant_id", "game_id"]))
    two = per_game["fmt"].eq("two-player")
    for name, flag in (("three_previous_ai", paper & two), ("three_previous_ai_interrogated", interrogated & two)):
        df[FLAG_PREFIX + name] = df["game_id"].map(dict(zip(per_game["game_id"], flag))).astype(bool)
    knows = knows_witness_from_reason(df["reason"]) & df["witness_kind"].eq("human")
    if stored_knows is not None:
        knows |= stored_knows.reindex(df.index).fillna(False).astype(bool)
    # in three-player the flag concerns the game, so both rows carry it
    knows_game = knows.groupby(df["game_id"]).transform("any")
    df[FLAG_PREFIX + "knows_witness"] = knows_game.astype(bool)
    return df


def hand_flags(df: pd.DataFrame, decisions: dict[str, dict[str, dict]]) -> pd.DataFrame:
    """Apply researchers' decisions (`turinglab flag set|unset`, per game: flag -> {value, reason})
    over the rules, and add `exclusion_origins`: for each flag a row carries, where it came from
    ("rule" for the computed flags, "hand" for a researcher's, "system" for those the server
    recorded), and the flags a researcher cleared."""
    from turinglab.analysis.live.schema import KNOWN_FLAGS

    df = df.copy()
    gid = df["game_id"].astype(str)
    for game_id, d in decisions.items():
        for name, info in d.items():
            col = FLAG_PREFIX + name
            if col not in df.columns:
                df[col] = False
            df.loc[gid == str(game_id), col] = bool(info.get("value"))
    flag_cols = [c for c in df.columns if c.startswith(FLAG_PREFIX)]
    origins = []
    for g, row in zip(gid, df[flag_cols].itertuples(index=False)):
        d = decisions.get(g) or {}
        parts = []
        for c, on in zip(flag_cols, row):
            name = c[len(FLAG_PREFIX):]
            hand = d.get(name)
            if hand is not None:
                why = f" ({hand['reason']})" if hand.get("reason") else ""
                parts.append(f"{name}=hand{why}" if on else f"{name}=cleared by hand{why}")
            elif on:
                parts.append(f"{name}={'rule' if name in KNOWN_FLAGS else 'system'}")
        origins.append("; ".join(parts))
    df["exclusion_origins"] = pd.Series(origins, index=df.index, dtype="string")
    return df


@dataclass(frozen=True)
class Exclusions:
    """Which flags an analysis applied and how many rows/games each removed."""

    applied: tuple[str, ...]
    available: tuple[str, ...]
    games_before: int
    games_after: int
    games_flagged: dict[str, int]  # games carrying each applied flag (they can overlap)

    def to_dict(self) -> dict:
        return {
            "applied": list(self.applied),
            "available": list(self.available),
            "games_before": self.games_before,
            "games_after": self.games_after,
            "games_flagged": dict(self.games_flagged),
        }


def apply_exclusions(df: pd.DataFrame, flags: Iterable[str]) -> tuple[pd.DataFrame, Exclusions]:
    """Drop rows carrying any of `flags` from a copy; say what was applied."""
    flags = tuple(dict.fromkeys(flags))
    available = tuple(flag_names(df))
    unknown = [f for f in flags if f not in available]
    if unknown:
        raise ValueError(
            f"unknown exclusion flag(s) {', '.join(unknown)}; this data has: {', '.join(available) or 'none'}"
        )
    drop = pd.Series(False, index=df.index)
    counts: dict[str, int] = {}
    for f in flags:
        col = df[FLAG_PREFIX + f].fillna(False).astype(bool)
        counts[f] = int(df.loc[col, "game_id"].nunique())
        drop |= col
    kept = df.loc[~drop].copy()
    return kept, Exclusions(
        applied=flags,
        available=available,
        games_before=int(df["game_id"].nunique()),
        games_after=int(kept["game_id"].nunique()),
        games_flagged=counts,
    )
