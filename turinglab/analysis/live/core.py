"""One call that runs every analysis of a study and keeps the results together."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from turinglab.analysis.live import accuracy, models, passes, resample, tables
from turinglab.analysis.live.flags import Exclusions, apply_exclusions
from turinglab.analysis.live.clustered import add_cluster_tests
from turinglab.analysis.live.extra import more
from turinglab.analysis.live.schema import FLAG_PREFIX, validate_judgements
from turinglab.analysis.live.sources import source_numbers, source_table


@dataclass
class Options:
    alpha: float = 0.05
    exclude: tuple[str, ...] = ("three_previous_ai", "knows_witness")
    n_boot: int = 1000
    seed: int = 0
    max_games_mixed: int = 5_000
    max_games_gee: int = 300_000
    include_bots: bool = False  # games flagged `bot` are left out of every analysis but the leaderboard
    pass_decisions: str = "holm"  # the family of pass decisions: "holm" (adjusted) or "per-witness" (confirmatory each)
    language: str = "en"  # the study's language, stated in the methods
    closed_criterion: bool = True  # three-player: Giunti's closed criterion (False: the open set, nominal size)


@dataclass
class Analysis:
    study: str
    format: str
    options: Options
    exclusions: Exclusions
    n_rows: int
    n_games: int
    n_interrogators: int
    success: pd.DataFrame
    comparisons: pd.DataFrame
    criteria: pd.DataFrame
    accuracy: pd.DataFrame
    by_index: pd.DataFrame
    dprime: dict
    calibration: pd.DataFrame
    brier: dict
    regressions: dict
    bootstrap: pd.DataFrame
    ipw: pd.DataFrame
    timing: pd.DataFrame
    demographics: pd.DataFrame | None = None
    tags: pd.DataFrame | None = None
    games: pd.DataFrame | None = None  # per-game table used (for figures)
    judgements: pd.DataFrame | None = None
    seconds: dict = field(default_factory=dict)
    extra: dict = field(default_factory=dict)  # the further Jones & Bergen analyses and the leaderboard (see extra.py)
    audit: object | None = None  # the blinding audit (audit.BlindingAudit), when the report ran it
    beliefs: object | None = None  # the belief analysis (belief.BeliefAnalysis), when the study has belief moves
    sources: pd.DataFrame | None = None  # per AI witness: replies by source, pass rates without fallback games
    prereg: dict | None = None  # the check against a pre-registration (`report --prereg`; report/prereg_check.py)

    def extra_numbers(self) -> dict[str, float | None]:
        """The numbers of `extra` (report JSON only; the export's rebuild.py checks `numbers()`)."""
        from turinglab.analysis.live.extra import extra_numbers

        return extra_numbers(self)

    def numbers(self) -> dict[str, float]:
        """Every number the report prints, flat and keyed, for the export's rebuild check."""
        out: dict[str, float] = {"n_games": self.n_games, "n_interrogators": self.n_interrogators}
        if self.sources is not None:
            out.update(source_numbers(self.sources))
        for r in self.success.itertuples(index=False):
            w = r.witness
            for c in ("k", "n", "sr", "low", "high", "p_value", "k_first", "n_first", "sr_first",
                      "low_first", "high_first", "p_value_first"):
                out[f"success.{w}.{c}"] = getattr(r, c)
        for r in self.comparisons.itertuples(index=False):
            out[f"compare.{r.a}|{r.b}.diff"] = r.diff
            out[f"compare.{r.a}|{r.b}.p_value"] = r.p_value
            out[f"compare.{r.a}|{r.b}.p_holm"] = r.p_holm
        for r in self.criteria.itertuples(index=False):
            for c in ("machine_success", "ms_low", "ms_high", "threshold", "p_value", "humanness", "hu_low", "hu_high",
                      "p_holm", "se_cluster", "p_cluster"):
                out[f"criteria.{r.witness}.{c}"] = getattr(r, c)
            if self.format == "three-player":
                out[f"criteria.{r.witness}.size"] = r.size
        for r in self.accuracy.itertuples(index=False):
            for c in ("k", "n", "rate", "low", "high"):
                out[f"accuracy.{r.group}.{c}"] = getattr(r, c)
        for r in self.by_index.itertuples(index=False):
            for c in ("k", "n", "rate", "low", "high"):
                out[f"by_index.{r.game_index}.{c}"] = getattr(r, c)
        for c in ("pooled", "per_interrogator_mean", "per_interrogator_median"):
            out[f"dprime.{c}"] = self.dprime.get(c, np.nan)
        from turinglab.analysis.live.taxonomy import tag_accuracy

        out.update(belief_numbers(self.beliefs))

        for r in tag_accuracy(self.tags, self.games).itertuples(index=False):
            out[f"tag_accuracy.{r.taxonomy}.{r.category}.games"] = r.games
            out[f"tag_accuracy.{r.taxonomy}.{r.category}.accuracy"] = r.accuracy
        for k, v in self.brier.items():
            out[f"brier.{k}"] = v
        for r in self.calibration.itertuples(index=False):
            for c in ("n", "stated", "observed", "low", "high"):
                out[f"calibration.{r.kind}.{r.bin}.{c}"] = getattr(r, c)
        for name in ("mixed", "gee"):
            t = self.regressions.get(name)
            if t is not None:
                for r in t.itertuples(index=False):
                    for c in ("estimate", "se", "z", "p_value", "low", "high"):
                        out[f"{name}.{r.term}.{c}"] = getattr(r, c)
        for c, v in (self.regressions.get("random_effects") or {}).items():
            if c != "singular":
                out[f"mixed.random_effects.{c}"] = v
        for r in self.bootstrap.itertuples(index=False):
            for c in ("estimate", "low", "high"):
                out[f"bootstrap.{r.quantity}.{c}"] = getattr(r, c)
        for r in self.ipw.itertuples(index=False):
            for c in ("naive", "ipw", "low", "high"):
                out[f"ipw.{r.witness}.{c}"] = getattr(r, c)
        if self.demographics is not None:
            for r in self.demographics.itertuples(index=False):
                for c in ("n", "rate", "low", "high"):
                    out[f"demographics.{r.variable}.{r.group}.{c}"] = getattr(r, c)
        for r in self.timing.itertuples(index=False):
            for c in ("n", "duration_median", "messages_median"):
                out[f"timing.{r.kind}.{c}"] = getattr(r, c)
        clean = {}
        for k, v in out.items():
            v = float(v) if v is not None else float("nan")
            clean[k] = v if np.isfinite(v) else None  # undefined or unbounded, as in JSON
        return clean


BELIEF_DETECTION = ("n", "events", "median_s", "median_s_low", "median_s_high", "median_s_boot_low",
                    "median_s_boot_high", "median_k", "median_k_low", "median_k_high", "median_k_boot_low",
                    "median_k_boot_high")


def belief_numbers(b) -> dict:
    """The belief block's numbers (issue 29) under dotted keys, as rebuild.py rebuilds them."""
    out: dict = {}
    if b is None:
        return out
    out["beliefs.n_games"], out["beliefs.n_moves"] = b.n_games, b.n_moves
    for r in b.detection.to_dict("records"):
        for c in BELIEF_DETECTION:
            out[f"beliefs.detection.{r['by']}.{r['group']}.{c}"] = r[c]
    for r in b.trajectories.itertuples(index=False):
        for c in ("n", "mean", "low", "high"):
            out[f"beliefs.trajectory.{r.by}.{r.group}.{r.k}.{c}"] = getattr(r, c)
    if b.moves is not None:
        for i, r in enumerate(b.moves.itertuples(index=False), 1):
            out[f"beliefs.moves.{i}.k"], out[f"beliefs.moves.{i}.change"] = r.k, r.change
    return out


def timing_table(games: pd.DataFrame) -> pd.DataFrame:
    """Game length by witness kind, with a two-sample KS test (a timing leak shows as a difference)."""
    from scipy.stats import ks_2samp

    rows = []
    for kind in ("human", "ai"):
        g = games[games["witness_kind"] == kind]
        rows.append({"kind": kind, "n": len(g),
                     "duration_median": float(g["duration_s"].median()) if len(g) else np.nan,
                     "duration_mean": float(g["duration_s"].mean()) if len(g) else np.nan,
                     "messages_median": float(g["n_messages"].median()) if len(g) else np.nan})
    t = pd.DataFrame(rows)
    h = games.loc[games["witness_kind"] == "human", "duration_s"].dropna()
    a = games.loc[games["witness_kind"] == "ai", "duration_s"].dropna()
    t.attrs["ks_p"] = float(ks_2samp(h, a).pvalue) if len(h) > 1 and len(a) > 1 else np.nan
    return t


def analyse(
    judgements: pd.DataFrame,
    participants: pd.DataFrame | None = None,
    options: Options | None = None,
    tags: pd.DataFrame | None = None,
    progress: Callable[[str], None] | None = None,
    witnesses=None,
    messages: pd.DataFrame | None = None,
) -> Analysis:
    """Run every analysis on a judgements table (see `schema`)."""
    opt = options or Options()
    if not 0 < opt.alpha < 1:
        raise ValueError(f"alpha must be between 0 and 1, got {opt.alpha}")
    step = progress or (lambda _msg: None)
    secs: dict[str, float] = {}
    t0 = time.perf_counter()

    def tick(name: str) -> None:
        nonlocal t0
        now = time.perf_counter()
        secs[name] = now - t0
        t0 = now
        step(name)

    df = validate_judgements(judgements)
    if df.empty:
        raise ValueError("no games with a verdict to analyse")
    bot_col = FLAG_PREFIX + "bot"
    bots = df.iloc[0:0]
    if bot_col in df.columns and not opt.include_bots:
        is_bot = df[bot_col].fillna(False).astype(bool)
        bots, df = df[is_bot], df[~is_bot].drop(columns=bot_col)
        if df.empty:
            raise ValueError("every game with a verdict is a bot game (flag bot); they are only in the leaderboard")
    df, excl = apply_exclusions(df, opt.exclude)
    if df.empty:
        raise ValueError(
            f"every game was excluded by {', '.join(excl.applied)}; run with fewer --exclude flags"
        )
    fmt = str(df["format"].iloc[0])
    games = accuracy.per_game(df)
    tick("prepare")
    sr = tables.success_table(df, opt.alpha)
    tick("success rates")
    comp = tables.comparisons(sr, fmt, opt.alpha)
    tick("comparisons")
    crit = passes.add_companions(tables.criteria(sr, fmt, opt.alpha, opt.closed_criterion), df, fmt, opt.alpha,
                                 opt.pass_decisions, closed=opt.closed_criterion)
    tick("criteria")
    acc = accuracy.accuracy_table(games, opt.alpha)
    idx = accuracy.by_game_index(games, opt.alpha)
    dp = accuracy.dprime_table(games)
    cal, brier = accuracy.calibration(games, opt.alpha)
    demo = accuracy.by_demographics(games, participants, opt.alpha)
    tick("accuracy")
    reg = models.regressions(games, participants, opt.alpha, opt.max_games_mixed, opt.max_games_gee)
    tick("regressions")
    boot = resample.bootstrap_table(df, games, opt.alpha, opt.n_boot, opt.seed)
    ipw = resample.ipw_table(df, opt.alpha, opt.n_boot, opt.seed + 1)
    tick("bootstrap")
    timing = timing_table(games if fmt == "two-player" else df)  # three-player: both seats
    tick("timing")
    comp = add_cluster_tests(comp, df, opt.alpha)
    ext = more(df, games, sr, participants, tags, messages, witnesses, bots, fmt, opt.alpha, opt.pass_decisions,
               opt.closed_criterion)
    tick("further analyses")
    src = source_table(df, opt.alpha)
    return Analysis(
        study=str(df["study"].iloc[0]), format=fmt, options=opt, exclusions=excl,
        n_rows=len(df), n_games=int(df["game_id"].nunique()),
        n_interrogators=int(df["interrogator_id"].nunique()),
        success=sr, comparisons=comp, criteria=crit, accuracy=acc, by_index=idx, dprime=dp,
        calibration=cal, brier=brier, regressions=reg, bootstrap=boot, ipw=ipw, timing=timing, demographics=demo,
        tags=tags, games=games, judgements=df, seconds=secs, extra=ext, sources=src,
    )


def exclusions_arg(values: Iterable[str] | None) -> tuple[str, ...]:
    """CLI helper: None -> the default flags; ['none'] -> no exclusions."""
    if values is None:
        return Options().exclude
    vals = tuple(v for v in values if v)
    return () if vals in ((), ("none",)) else vals
