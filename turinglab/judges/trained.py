"""Trained judges (scikit-learn) and the paper's cross-validation design.

Zhang et al.: a linear SVM per embedding model (`linear-svm`, the paper's judge); this project
also offers an SVM (RBF kernel, `svm`) and a random forest on task features, 10-fold shuffled
cross-validation, classes balanced by splitting the machine items into human-sized groups (each
group + all human items is one balanced data set, cross-validated on its own). Repeated over
seeds. Option: folds grouped by stimulus (no cue / image in both train and test), since the plain
split lets a cue's other responses leak into training.

Each item gets out-of-fold verdicts from every (seed, group) run that holds it; its final verdict
is the majority (ties broken by the mean score) and its score the mean score (P(machine) or the
SVM's decision value), so that it can be compared item by item with human judges.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

import numpy as np
import pandas as pd

from turinglab.plugins.manager import ai_judges


def trained_judges() -> dict:
    """The registered judges trained here (fit/predict), by name: built-ins svm, linear-svm, rbf-svc, rf, tfidf-lr, conversation."""
    return {n: j for n, j in ai_judges().items() if j.make is not None}


class JudgeError(ValueError):
    pass


def make_estimator(judge: str, seed: int, n_trees: int = 200):
    """A fresh estimator of the judge plugin named `judge`."""
    judges = trained_judges()
    if judge not in judges:
        raise JudgeError(f"unknown trained judge {judge!r}; use one of {', '.join(judges)}")
    return judges[judge].make(seed, n_trees)


def tfidf_text(items: pd.DataFrame) -> np.ndarray:
    """What the TF-IDF judge reads: the response (with the cue for word association)."""
    if items["task"].iloc[0] == "word":
        return np.asarray(("cue_" + items["stimulus"].str.lower() + " " + items["response"]).tolist(), dtype=object)
    return np.asarray(items["response"].tolist(), dtype=object)


def balanced_groups(truth: np.ndarray, rng: np.random.Generator) -> list[np.ndarray]:
    """Row indices of balanced data sets: the larger class split at random into groups of about the
    smaller class's size, each joined with the whole smaller class."""
    h = np.flatnonzero(truth == "human")
    m = np.flatnonzero(truth == "machine")
    small, large = (h, m) if len(h) <= len(m) else (m, h)
    k = max(1, int(round(len(large) / len(small))))
    parts = np.array_split(rng.permutation(large), k)
    return [np.sort(np.concatenate([small, p])) for p in parts]


def fold_splits(n_folds: int, seed: int, y: np.ndarray, groups: np.ndarray | None):
    from sklearn.model_selection import KFold, StratifiedGroupKFold

    if groups is None:
        return KFold(n_splits=n_folds, shuffle=True, random_state=seed).split(y)
    if len(np.unique(groups)) < n_folds:
        raise JudgeError(f"only {len(np.unique(groups))} stimuli: too few for {n_folds} stimulus-grouped folds")
    return StratifiedGroupKFold(n_splits=n_folds, shuffle=True, random_state=seed).split(y, y, groups)


@dataclass
class CVResult:
    judge: str
    folds: int
    seeds: list[int]
    group_by_stimulus: bool
    verdict: np.ndarray  # per item: 'human' | 'machine'
    score: np.ndarray  # per item: mean machine score
    n_runs: np.ndarray  # per item: how many out-of-fold predictions
    per_seed_accuracy: list[float] = field(default_factory=list)
    per_seed_balanced_accuracy: list[float] = field(default_factory=list)


def _score(est, X) -> np.ndarray:
    if hasattr(est, "predict_proba") and not _is_svc(est):
        return est.predict_proba(X)[:, 1]
    return est.decision_function(X)


def _is_svc(est) -> bool:
    from sklearn.svm import SVC

    last = est.steps[-1][1] if hasattr(est, "steps") else est
    return isinstance(last, SVC)


def _threads() -> int:
    import os

    try:
        return max(1, int(os.environ.get("TURINGLAB_JUDGE_THREADS", "1")))
    except ValueError:
        return 1


def cross_validate(*args, **kwargs) -> CVResult:
    """`_cross_validate` with BLAS/OpenMP threads limited (1 unless TURINGLAB_JUDGE_THREADS says more):
    the machine is shared, and the folds are small."""
    from threadpoolctl import threadpool_limits

    with threadpool_limits(limits=_threads()):
        return _cross_validate(*args, **kwargs)


def _cross_validate(
    items: pd.DataFrame,
    judge: str,
    X: np.ndarray | None,
    *,
    folds: int = 10,
    seeds: list[int] | tuple[int, ...] = (42,),
    group_by_stimulus: bool = False,
    on_fold: Callable[[], None] | None = None,
    n_trees: int = 200,
) -> CVResult:
    """Out-of-fold verdicts for every item. `X`: features (None for tfidf-lr, which reads the text)."""
    judges = trained_judges()
    if judge not in judges:
        raise JudgeError(f"unknown trained judge {judge!r}; use one of {', '.join(judges)}")
    if folds < 2:
        raise JudgeError("--folds must be at least 2")
    truth = items["truth"].to_numpy(dtype=object)
    y_all = (truth == "machine").astype(int)
    data = tfidf_text(items) if judges[judge].reads_text else X
    stim = items["stimulus_id"].to_numpy(dtype=object)
    n = len(items)
    votes = np.zeros(n)
    scores = np.zeros(n)
    runs = np.zeros(n, dtype=int)
    acc, bacc = [], []
    for seed in seeds:
        rng = np.random.default_rng(seed)
        pred_seed = np.full(n, -1.0)
        cnt_seed = np.zeros(n)
        for rows in balanced_groups(truth, rng):
            y = y_all[rows]
            if min(y.sum(), len(y) - y.sum()) < folds:
                raise JudgeError(f"too few items of one class for {folds} folds")
            groups = stim[rows] if group_by_stimulus else None
            for train, test in fold_splits(folds, seed, y, groups):
                est = make_estimator(judge, seed, n_trees)
                est.fit(data[rows[train]], y[train])
                p = est.predict(data[rows[test]])
                s = _score(est, data[rows[test]])
                idx = rows[test]
                votes[idx] += p
                scores[idx] += s
                runs[idx] += 1
                pred_seed[idx] = np.where(pred_seed[idx] < 0, 0, pred_seed[idx]) + p
                cnt_seed[idx] += 1
                if on_fold is not None:
                    on_fold()
        held = cnt_seed > 0
        p_seed = (pred_seed[held] / cnt_seed[held]) >= 0.5
        t_seed = y_all[held] == 1
        acc.append(float((p_seed == t_seed).mean()))
        bacc.append(float(((p_seed & t_seed).sum() / t_seed.sum() + (~p_seed & ~t_seed).sum() / (~t_seed).sum()) / 2))
    if (runs == 0).any():
        raise JudgeError("some items got no out-of-fold prediction")
    frac = votes / runs
    mean_score = scores / runs
    thr = judges[judge].threshold
    machine = np.where(frac == 0.5, mean_score >= thr, frac > 0.5)
    verdict = np.where(machine, "machine", "human").astype(object)
    return CVResult(judge, folds, list(seeds), group_by_stimulus, verdict, mean_score, runs, acc, bacc)
