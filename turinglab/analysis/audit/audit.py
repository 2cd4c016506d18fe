"""The blinding audit: can a classifier tell AI from human witnesses from what the interrogator's
browser received (`frames.py`), without the text?

- Classifiers: logistic regression (signed log1p features, median imputation with missing indicators,
  standardised, L2; the primary) and gradient boosting (shallow trees), cross-validated with folds
  of whole interrogators (GroupKFold's way: every game of an interrogator is in one fold); the
  score of a row comes from the model that did not see its interrogator.
- AUROC of the out-of-fold scores (AI = positive; the linear predictor without its intercept, so
  a fold's class balance does not bias it), interval by the cluster bootstrap over interrogators
  (percentile). For the primary classifier, widened by the SD of the permutation null over the
  bootstrap SD when that is larger: a cross-validated AUROC varies more than its fixed scores
  show (coverage checked by simulation in tests/test_audit.py; without permutations, plain).
- Permutation test of the primary classifier: the witness kinds are permuted within strata
  (three-player: the two seats of a game; two-player: the games of one interrogator, and the
  interrogators with one game among themselves) and the model refitted in the same folds.
  p = (1 + #{perm ≥ observed}) / (1 + permutations), one-sided (a leak raises the AUROC).
- Per feature: its own AUROC with a cluster-bootstrap interval, the standardised difference
  (AI − human, pooled SD), medians by kind, and a two-sided permutation p of |AUROC − 0.5| (same
  strata), Holm-adjusted over the features. A feature with adjusted p < alpha "differs"; named
  as leaking, largest |AUROC − 0.5| first.

A study "leaks" when the primary classifier's test rejects (p < alpha) and its interval lies above
0.5; a boosting interval above 0.5 alone is reported beside it (a non-linear leak to look into).
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from turinglab.analysis.audit.frames import channel_columns, content_columns, describe
from turinglab.analysis.pformat import p_text

CLASSIFIERS = ("logistic", "boosting")


def auroc(y: np.ndarray, s: np.ndarray) -> float:
    """P(score of a positive > score of a negative), ties counting one half (Mann–Whitney)."""
    from scipy.stats import rankdata

    y = np.asarray(y, dtype=bool)
    n1, n0 = int(y.sum()), int((~y).sum())
    if n1 == 0 or n0 == 0:
        return np.nan
    r = rankdata(s)
    return float((r[y].sum() - n1 * (n1 + 1) / 2) / (n1 * n0))


def design(X: np.ndarray) -> np.ndarray:
    """The logistic model's inputs: sign(x)·log1p(|x|) of the features, missing values set to the
    column median with an indicator column, standardised; constant columns dropped. Unsupervised
    (no labels), so computing it once on all rows leaks nothing into the folds."""
    Z = np.sign(X) * np.log1p(np.abs(X))
    miss = np.isnan(Z)
    med = np.array([np.median(c[~np.isnan(c)]) if (~np.isnan(c)).any() else 0.0 for c in Z.T])
    Z = np.where(miss, med, Z)
    Z = np.hstack([Z, miss[:, miss.any(axis=0) & ~miss.all(axis=0)].astype(float)])
    sd = Z.std(axis=0)
    keep = sd > 0
    return (Z[:, keep] - Z[:, keep].mean(axis=0)) / sd[keep]


class Logistic:
    """L2-penalised logistic regression (penalty lam/2 · |w|², intercept free; sklearn's C = 1/lam)
    by Newton's method: a few small solves, fast enough to refit for every permutation."""

    def __init__(self, lam: float = 1.0, iters: int = 50) -> None:
        self.lam, self.iters = lam, iters

    def fit(self, X: np.ndarray, y: np.ndarray) -> "Logistic":
        A = np.hstack([np.ones((len(X), 1)), X])
        pen = np.full(A.shape[1], self.lam)
        pen[0] = 0.0
        b = np.zeros(A.shape[1])
        for _ in range(self.iters):
            p = 1 / (1 + np.exp(-np.clip(A @ b, -30, 30)))
            grad = A.T @ (p - y) + pen * b
            H = (A * (p * (1 - p))[:, None]).T @ A + np.diag(pen) + 1e-9 * np.eye(len(b))
            step = np.linalg.solve(H, grad)
            b -= step
            if np.max(np.abs(step)) < 1e-8:
                break
        self.coef_ = b
        return self

    def predict_proba(self, X: np.ndarray) -> np.ndarray:
        p = 1 / (1 + np.exp(-np.clip(self.coef_[0] + X @ self.coef_[1:], -30, 30)))
        return np.column_stack([1 - p, p])


def _model(kind: str, seed: int):
    from sklearn.ensemble import GradientBoostingClassifier

    if kind == "logistic":
        return Logistic()
    if kind == "boosting":
        return GradientBoostingClassifier(n_estimators=60, max_depth=2, learning_rate=0.1, subsample=0.8,
                                          random_state=seed)
    raise ValueError(f"unknown classifier {kind!r}; choose from {', '.join(CLASSIFIERS)}")


def inputs(X: np.ndarray, kind: str) -> np.ndarray:
    """What classifier `kind` is fitted on: the standardised design, or the raw features with
    missing values as -1 (trees split them off)."""
    return design(X) if kind == "logistic" else np.where(np.isnan(X), -1.0, X)


def group_codes(groups: np.ndarray) -> tuple[np.ndarray, int]:
    """Each row's group as a number in order of first appearance, and how many groups. Not in
    sorted-id order: ids are random tokens, and folds and resamples drawn over them would differ
    from one copy of a study to another (the same seed, another audit)."""
    _, first, inv = np.unique(groups, return_index=True, return_inverse=True)
    rank = np.empty(len(first), dtype=int)
    rank[np.argsort(first, kind="stable")] = np.arange(len(first))
    return rank[inv], len(first)


def _folds(groups: np.ndarray, k: int, seed: int) -> list[np.ndarray]:
    """Test-row indices of `k` folds: whole groups, shuffled, balanced by size (GroupKFold's way)."""
    inv, n = group_codes(groups)
    counts = np.bincount(inv, minlength=n)
    uniq = np.arange(n)
    order = np.random.default_rng(seed).permutation(len(uniq))
    order = order[np.argsort(-counts[order], kind="stable")]
    load, fold_of = np.zeros(k), np.empty(len(uniq), dtype=int)
    for g in order:
        f = int(np.argmin(load))
        fold_of[g] = f
        load[f] += counts[g]
    return [np.flatnonzero(fold_of[inv] == f) for f in range(k)]


def oof_scores(X: np.ndarray, y: np.ndarray, folds: list[np.ndarray], kind: str, seed: int = 0) -> np.ndarray:
    """Out-of-fold score of "AI" for every row (a fold whose training part has one class gets
    that class's share: no information)."""
    s = np.empty(len(y))
    for test in folds:
        train = np.setdiff1d(np.arange(len(y)), test)
        if len(np.unique(y[train])) < 2:
            s[test] = y[train].mean()
            continue
        m = _model(kind, seed)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            m.fit(X[train], y[train].astype(float))
            # without the intercept / the prior: a fold's training share of AI witnesses would
            # otherwise shift its scores against its test share (CV's AUROC below 0.5 under the null)
            if kind == "logistic":
                s[test] = X[test] @ m.coef_[1:]
            else:
                prior = y[train].mean()
                s[test] = m.decision_function(X[test]) - np.log(prior / (1 - prior))
    return s


def cluster_boot(groups: np.ndarray, n_boot: int, seed: int) -> np.ndarray:
    """Row weights (n_boot × rows) of resamples of whole groups (interrogators) with replacement:
    a row's weight is how often its group was drawn."""
    inv, n = group_codes(groups)
    uniq = np.arange(n)
    rng = np.random.default_rng(seed)
    draws = rng.integers(0, len(uniq), (n_boot, len(uniq)))
    counts = np.zeros((n_boot, len(uniq)))
    np.add.at(counts, (np.repeat(np.arange(n_boot), len(uniq)), draws.ravel()), 1.0)
    return counts[:, inv]


def weighted_aurocs(y: np.ndarray, s: np.ndarray, W: np.ndarray) -> np.ndarray:
    """The AUROC of (y, s) under each row of weights `W` (rows with a missing score weigh 0)."""
    ok = ~np.isnan(s)
    y, s, W = np.asarray(y, dtype=bool)[ok], s[ok], W[:, ok]
    uniq, inv = np.unique(s, return_inverse=True)
    onehot = np.zeros((len(s), len(uniq)))
    onehot[np.arange(len(s)), inv] = 1.0
    P, N = (W * y) @ onehot, (W * ~y) @ onehot  # weight of positives / negatives at each score
    below = np.cumsum(N, axis=1) - N
    with np.errstate(invalid="ignore", divide="ignore"):
        return (P * (below + 0.5 * N)).sum(axis=1) / (P.sum(axis=1) * N.sum(axis=1))


def boot_interval(y: np.ndarray, s: np.ndarray, W: np.ndarray, alpha: float) -> tuple[float, float]:
    vals = weighted_aurocs(y, s, W)
    vals = vals[~np.isnan(vals)]
    if len(vals) == 0:
        return np.nan, np.nan
    return float(np.quantile(vals, alpha / 2)), float(np.quantile(vals, 1 - alpha / 2))


def strata(df: pd.DataFrame) -> np.ndarray:
    """Permutation strata: the game (three-player), else the interrogator; interrogators with one
    row share one stratum."""
    if (df["format"] == "three-player").all():
        return df["game_id"].to_numpy()
    inter = df["interrogator_id"].astype(str)
    sizes = inter.map(inter.value_counts())
    return np.where(sizes > 1, inter, "(one game each)")


def stratum_index(strat: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The strata as codes, and the rows sorted by stratum (for `permute_within`)."""
    codes = pd.factorize(pd.Series(strat))[0]
    return codes, np.lexsort((np.arange(len(codes)), codes))


def permute_within(y: np.ndarray, cells: tuple[np.ndarray, np.ndarray], rng: np.random.Generator) -> np.ndarray:
    """`y` permuted within each stratum of `stratum_index`: rows sorted by stratum and, within it,
    at random, put on the rows sorted by stratum in order."""
    codes, base = cells
    out = np.empty_like(y)
    out[base] = y[np.lexsort((rng.random(len(y)), codes))]
    return out


@dataclass
class ClassifierResult:
    name: str
    auroc: float
    low: float
    high: float


@dataclass
class FamilyResult:
    """The classifiers and per-feature differences on one family of features."""

    family: str  # "channel" or "content"
    features: list[str]
    constant: list[str]  # features with one value in every row (cannot tell anything)
    classifiers: list[ClassifierResult]
    p_value: float  # permutation test of the larger AUROC (nan when not run)
    permutations: int
    per_feature: pd.DataFrame
    leaking: list[str] = field(default_factory=list)  # features that differ, largest effect first

    @property
    def primary(self) -> ClassifierResult:
        """The classifier the permutation test refits (the first)."""
        return self.classifiers[0]


def per_feature(df: pd.DataFrame, cols: list[str], y: np.ndarray, resamples: np.ndarray,
                strat: np.ndarray, n_perm: int, alpha: float, seed: int) -> pd.DataFrame:
    """Each feature's AUROC (rows where it is present), interval, standardised difference, medians
    by kind and a Holm-adjusted two-sided permutation p."""
    from scipy.stats import rankdata

    rng = np.random.default_rng([seed, 3])
    cells = stratum_index(strat)
    perms = np.array([permute_within(y, cells, rng) for _ in range(n_perm)]) if n_perm else np.empty((0, len(y)))
    rows = []
    for c in cols:
        x = df[c].to_numpy(dtype=float)
        ok = ~np.isnan(x)
        a_, h_ = x[ok & y], x[ok & ~y]
        auc = auroc(y[ok], x[ok])
        lo, hi = boot_interval(y, x, resamples, alpha)
        sd = np.sqrt(((len(a_) - 1) * np.var(a_, ddof=1) + (len(h_) - 1) * np.var(h_, ddof=1)) / (len(a_) + len(h_) - 2)) \
            if len(a_) > 1 and len(h_) > 1 else np.nan
        smd = (a_.mean() - h_.mean()) / sd if sd > 0 else np.nan
        p = np.nan
        if n_perm and not np.isnan(auc):
            r = rankdata(x[ok])
            yp = perms[:, ok]
            n1 = yp.sum(axis=1)
            n0 = ok.sum() - n1
            with np.errstate(invalid="ignore", divide="ignore"):
                aucs = (yp @ r - n1 * (n1 + 1) / 2) / (n1 * n0)
            p = (1 + np.sum(np.abs(aucs - 0.5) >= abs(auc - 0.5) - 1e-12)) / (1 + n_perm)
        rows.append({"feature": c, "what": describe(c), "n_ai": int(len(a_)), "n_human": int(len(h_)),
                     "median_ai": float(np.median(a_)) if len(a_) else np.nan,
                     "median_human": float(np.median(h_)) if len(h_) else np.nan,
                     "auroc": auc, "low": lo, "high": hi, "std_diff": float(smd), "p_value": float(p)})
    out = pd.DataFrame(rows, columns=["feature", "what", "n_ai", "n_human", "median_ai", "median_human", "auroc",
                                      "low", "high", "std_diff", "p_value"])
    out["p_holm"] = holm(out["p_value"].to_numpy()) if len(out) else []
    return out


def holm(p: np.ndarray) -> np.ndarray:
    p = np.asarray(p, dtype=float)
    out = np.full(len(p), np.nan)
    ok = np.flatnonzero(~np.isnan(p))
    order = ok[np.argsort(p[ok], kind="stable")]
    m, running = len(order), 0.0
    for i, j in enumerate(order):
        running = max(running, min(1.0, (m - i) * p[j]))
        out[j] = running
    return out


def audit_family(df: pd.DataFrame, cols: list[str], family: str, *, alpha: float = 0.05, n_boot: int = 1000,
                 n_perm: int = 200, n_feature_perm: int = 2000, folds: int = 5, seed: int = 0,
                 classifiers: tuple[str, ...] = CLASSIFIERS) -> FamilyResult:
    """Classifiers and per-feature differences on `cols` of the feature table `df`. The permutation
    test refits the first classifier (the primary: logistic regression, fast enough to refit
    hundreds of times); the others get their interval only."""
    y = (df["witness_kind"] == "ai").to_numpy()
    groups = df["interrogator_id"].astype(str).to_numpy()
    constant = [c for c in cols if df[c].nunique(dropna=False) <= 1]
    used = [c for c in cols if c not in constant]
    strat = strata(df)
    resamples = cluster_boot(groups, n_boot, seed)
    feats = per_feature(df, used, y, resamples, strat, n_feature_perm, alpha, seed)
    k = min(folds, len(np.unique(groups)))
    results, p_value = [], np.nan
    if used and k >= 2 and 0 < y.sum() < len(y):
        X = df[used].to_numpy(dtype=float)
        fold_idx = _folds(groups, k, seed)
        boot_sd = []
        for name in classifiers:
            s = oof_scores(inputs(X, name), y, fold_idx, name, seed)
            lo, hi = boot_interval(y, s, resamples, alpha)
            boot_sd.append(np.nanstd(weighted_aurocs(y, s, resamples)))
            results.append(ClassifierResult(name, auroc(y, s), lo, hi))
        if n_perm:
            rng, cells, Z = np.random.default_rng([seed, 5]), stratum_index(strat), inputs(X, classifiers[0])
            null = np.array([auroc(yp, oof_scores(Z, yp, fold_idx, classifiers[0], seed))
                             for yp in (permute_within(y, cells, rng) for _ in range(n_perm))])
            p_value = (1 + np.sum(null >= results[0].auroc - 1e-12)) / (1 + n_perm)
            # a cross-validated AUROC varies more than the bootstrap of its fixed scores shows (the
            # folds share data): widen the primary's interval by the permutation null's SD over the
            # bootstrap's, when larger (tests/test_audit.py checks the coverage by simulation)
            r = results[0]
            widen = max(1.0, float(np.std(null)) / boot_sd[0]) if boot_sd[0] > 0 else 1.0
            results[0] = ClassifierResult(r.name, r.auroc, max(0.0, r.auroc - widen * (r.auroc - r.low)),
                                          min(1.0, r.auroc + widen * (r.high - r.auroc)))
    else:
        results = [ClassifierResult(name, np.nan, np.nan, np.nan) for name in classifiers]
    differ = feats[feats["p_holm"] < alpha].copy()
    differ["effect"] = (differ["auroc"] - 0.5).abs()
    leaking = differ.sort_values("effect", ascending=False, kind="stable")["feature"].tolist()
    return FamilyResult(family, used, constant, results, p_value, n_perm if not np.isnan(p_value) else 0,
                        feats, leaking)


@dataclass
class BlindingAudit:
    study: str
    format: str
    n_games: int
    n_rows: int
    n_interrogators: int
    n_ai: int
    n_human: int
    alpha: float
    channel: FamilyResult
    content: FamilyResult
    bots: bool  # bot games included
    notes: list[str] = field(default_factory=list)

    @property
    def leaks(self) -> bool:
        c = self.channel
        return bool(c.p_value < self.alpha and c.primary.low > 0.5)

    def verdict(self) -> str:
        """One sentence: does the blinding leak, and through which features?"""
        c, b = self.channel, self.channel.primary
        if np.isnan(b.auroc):
            return "not enough games to audit: it needs games with AI and human witnesses from at least two interrogators"
        fig = f"AUROC {b.auroc:.3f} [{b.low:.3f}, {b.high:.3f}] ({b.name}), permutation p {_p(c.p_value)}"
        named = ", ".join(f"{f} ({_direction(c.per_feature, f)})" for f in c.leaking[:5])
        if self.leaks:
            return (f"blinding LEAKS: a classifier tells AI from human witnesses from what the interrogator's browser "
                    f"received: {fig}; leaking: {named or 'no single feature (only in combination)'}")
        others = [r for r in c.classifiers[1:] if r.low > 0.5]
        if others:
            fig += "; but " + ", ".join(f"{r.name}'s AUROC {r.auroc:.3f} [{r.low:.3f}, {r.high:.3f}] excludes 0.5"
                                        for r in others)
        if c.leaking:
            return f"no leak by the classifier ({fig}), but these features differ: {named}"
        if others:
            return f"no leak by the primary classifier ({fig}): look at the features below"
        return f"no leak detected: {fig}; no feature differs (Holm, alpha {self.alpha:g})"

    def to_dict(self) -> dict:
        def fam(r: FamilyResult) -> dict:
            return {"features": r.features, "constant": r.constant, "permutations": r.permutations,
                    "p_value": _num(r.p_value), "leaking": r.leaking,
                    "classifiers": [{"name": x.name, "auroc": _num(x.auroc), "low": _num(x.low), "high": _num(x.high)}
                                    for x in r.classifiers],
                    "per_feature": [{k: _num(v) if isinstance(v, float) else v for k, v in row.items()}
                                    for row in r.per_feature.to_dict("records")]}

        return {"study": self.study, "format": self.format, "games": self.n_games, "rows": self.n_rows,
                "interrogators": self.n_interrogators, "ai": self.n_ai, "human": self.n_human, "alpha": self.alpha,
                "bots_included": self.bots, "leaks": self.leaks, "verdict": self.verdict(), "notes": self.notes,
                "channel": fam(self.channel), "content": fam(self.content)}


def _num(x):
    return None if x is None or (isinstance(x, float) and np.isnan(x)) else float(x)


def _p(x) -> str:
    return p_text(x)


def _direction(t: pd.DataFrame, feature: str) -> str:
    r = t.set_index("feature").loc[feature]
    side = "higher" if r["auroc"] > 0.5 else "lower"
    return f"AUROC {r['auroc']:.2f}, AI {side}: median {r['median_ai']:.3g} vs {r['median_human']:.3g}"


def audit_table(df: pd.DataFrame, *, study: str = "", alpha: float = 0.05, n_boot: int = 1000, n_perm: int = 200,
                seed: int = 0, include_bots: bool = True) -> BlindingAudit:
    """The audit of a feature table (`frames.feature_table`)."""
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must be between 0 and 1 (e.g. 0.05), got {alpha}")
    notes = []
    if not include_bots and len(df):
        df = df[~df["bot"]]
    df = df.reset_index(drop=True)
    if df.empty:
        raise ValueError("no games to audit in this study")
    fmt = "three-player" if (df["format"] == "three-player").all() else "two-player"
    strat = strata(df)
    if fmt == "two-player" and (strat == "(one game each)").mean() > 0.5:
        notes.append("most interrogators played one game: their witness kinds are permuted among them")
    kw = dict(alpha=alpha, n_boot=n_boot, n_perm=n_perm, seed=seed)
    channel = audit_family(df, channel_columns(df), "channel", **kw)
    content = audit_family(df, content_columns(df), "content", **kw)
    y = df["witness_kind"] == "ai"
    return BlindingAudit(study, fmt, int(df["game_id"].nunique()), len(df), int(df["interrogator_id"].nunique()),
                         int(y.sum()), int((~y).sum()), alpha, channel, content, bool(df["bot"].any()), notes)


# The audit's time and memory grow with the games (10 000 games: 14 min and 1.9 GB uncapped); above this
# many it audits a seeded sample of whole interrogators and says so (`max_games=None`: every game).
AUDIT_MAX_GAMES = 2_000


def audit_blinding(url: str | None, study: str | int | None, max_games: int | None = AUDIT_MAX_GAMES,
                   sample_seed: int = 0, **kw) -> BlindingAudit:
    """Load a study's games from the store and audit them (`audit_table`'s options)."""
    from turinglab.analysis.audit.frames import feature_table, load_games

    info, games, note = load_games(url, study, max_games, sample_seed)
    if not games:
        raise ValueError(f"study {info.name!r} has no games to audit")
    res = audit_table(feature_table(games), study=info.name, **kw)
    if note:
        res.notes.insert(0, note)
    return res
