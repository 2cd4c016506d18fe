"""Evaluate one judge on one item set: features -> cross-validated (or zero-shot) verdicts -> metrics,
beside the human judges of the same items when their trials are given. Results are cached on disk
by item content + judge configuration (+ human trials), so a re-run is instant.
"""

from __future__ import annotations

import hashlib
import json
import time
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Iterator

import numpy as np
import pandas as pd

from turinglab.judges import features as feats
from turinglab.judges import metrics
from turinglab.judges.items import fingerprint, validate
from turinglab.judges.trained import JudgeError, cross_validate, trained_judges
from turinglab.judges.vectors import cache_dir
from turinglab.plugins.manager import ai_judges


def judge_names() -> tuple[str, ...]:
    """Every registered AI judge (built-ins svm, linear-svm, rbf-svc, rf, tfidf-lr, conversation, llm)."""
    return tuple(ai_judges())


VERSION = 2  # bump when a change alters results, so old cache entries are not reused


@dataclass
class Config:
    judge: str
    features: str | None = None
    folds: int = 10
    seed: int = 42
    repeats: int = 1
    group_by_stimulus: bool = False
    alpha: float = 0.05
    limit: int | None = None  # llm: judge a random balanced sample of this many items
    model: dict[str, Any] = field(default_factory=dict)  # llm: ModelSpec fields
    prompt: str | None = None  # llm: template file
    protocol: str | None = None  # 'zhang': the paper's balancing before the folds (see zhang.py)
    images: str | None = None  # colour: the folder of the images (for the 'histogram' features)

    @property
    def seeds(self) -> list[int]:
        return [self.seed + i for i in range(self.repeats)]


@contextmanager
def bar(description: str, total: int, enabled: bool) -> Iterator[Any]:
    """A Rich progress bar on stderr; yields an `advance()` callable (a no-op when disabled)."""
    if not enabled:
        yield lambda: None
        return
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                  console=Console(stderr=True), transient=True) as prog:
        task = prog.add_task(description, total=total)
        yield lambda: prog.advance(task)


def _key(items: pd.DataFrame, trials: pd.DataFrame | None, cfg: Config) -> str:
    d = {"v": VERSION, "items": fingerprint(items), "cfg": asdict(cfg)}
    if trials is not None:
        d["trials"] = hashlib.sha256(trials.to_csv(index=False).encode()).hexdigest()[:16]
    if cfg.images and Path(cfg.images).is_dir():
        d["images"] = sorted((f.name, f.stat().st_size, f.stat().st_mtime_ns) for f in Path(cfg.images).iterdir())
    if cfg.prompt:
        d["prompt_text"] = Path(cfg.prompt).read_text() if Path(cfg.prompt).is_file() else None
    return hashlib.sha256(json.dumps(d, sort_keys=True, default=str).encode()).hexdigest()


def sample_balanced(items: pd.DataFrame, n: int, seed: int) -> pd.DataFrame:
    """n items (half human, half machine where possible), chosen at random with `seed`."""
    if n >= len(items):
        return items
    rng = np.random.default_rng(seed)
    h = items.index[items["truth"] == "human"].to_numpy()
    m = items.index[items["truth"] == "machine"].to_numpy()
    nh = min(len(h), n // 2)
    nm = min(len(m), n - nh)
    pick = np.concatenate([rng.choice(h, nh, replace=False), rng.choice(m, nm, replace=False)])
    return items.loc[np.sort(pick)].reset_index(drop=True)


def run_judge(items: pd.DataFrame, cfg: Config, progress: bool = False, chat=None) -> tuple[pd.DataFrame, dict]:
    """Per-item verdicts (item_id, verdict, score) of the judge, and timing/extra info."""
    info: dict[str, Any] = {}
    if cfg.judge == "llm":
        from turinglab.judges.llm import ModelSpec, judge_items

        spec = ModelSpec(**cfg.model)
        t0 = time.monotonic()
        with bar(f"LLM judge ({spec.model})", len(items), progress) as adv:
            out = judge_items(items, spec, chat=chat, prompt_file=cfg.prompt, on_item=adv)
        info["llm_seconds"] = time.monotonic() - t0
        info["model"] = spec.key()
        info["errors"] = int(out["error"].notna().sum())
        info["cached_answers"] = int(out["cached"].sum())
        fresh = out.loc[~out["cached"], "seconds"]
        info["items_per_second"] = float(len(fresh) / fresh.sum()) if len(fresh) and fresh.sum() > 0 else None
        return out[["item_id", "verdict", "score", "confidence", "raw", "error"]], info
    if cfg.judge not in trained_judges():
        raise JudgeError(f"unknown judge {cfg.judge!r}; use one of {'|'.join(judge_names())}")
    task = items["task"].iloc[0]
    plug = trained_judges()[cfg.judge]
    if plug.tasks and task not in plug.tasks:
        raise JudgeError(f"--judge {cfg.judge} judges the task(s) {', '.join(plug.tasks)}, not {task!r}")
    X = None
    if not plug.reads_text:
        sets = feats.parse_sets(cfg.features or plug.features, task)
        info["features"] = list(sets)
        t0 = time.monotonic()
        with bar("features", len(items), progress) as adv:
            X = feats.extract(items, sets, progress=adv, images=cfg.images)
        info["feature_seconds"] = time.monotonic() - t0
        info["n_features"] = int(X.shape[1])
        if "cnn" in sets:
            from turinglab.judges.cnn import NAME

            info["image_features"] = NAME
        elif task == "color":
            from turinglab.judges.images import NO_CNN

            info["image_features"] = NO_CNN + ("" if "histogram" in sets else
                                               "; no histogram either (no --images): the judge reads the colour word only")
    else:
        info["features"] = ["tfidf(char 2-4, word 1-2)"]
    nh, nm = int((items["truth"] == "human").sum()), int((items["truth"] == "machine").sum())
    total = cfg.folds * len(cfg.seeds) * max(1, int(round(max(nh, nm) / min(nh, nm))))
    t0 = time.monotonic()
    with bar(f"{cfg.judge}: folds", total, progress) as adv:
        cv = cross_validate(items, cfg.judge, X, folds=cfg.folds, seeds=cfg.seeds,
                            group_by_stimulus=cfg.group_by_stimulus, on_fold=adv,
                            n_trees=100 if cfg.protocol == "zhang" else 200)
    info["cv_seconds"] = time.monotonic() - t0
    info["per_seed_accuracy"] = cv.per_seed_accuracy
    info["per_seed_balanced_accuracy"] = cv.per_seed_balanced_accuracy
    out = pd.DataFrame({"item_id": items["item_id"], "verdict": cv.verdict, "score": cv.score})
    return out, info


def evaluate(
    items: pd.DataFrame,
    cfg: Config,
    trials: pd.DataFrame | None = None,
    *,
    progress: bool = False,
    use_cache: bool = True,
    chat=None,
    source: str = "",
) -> dict[str, Any]:
    """Everything the CLI prints for one judge (see `judges evaluate --json`)."""
    items = validate(items)
    if items["task"].nunique() != 1:
        raise JudgeError(f"items mix tasks {sorted(items['task'].unique())}; evaluate one task at a time")
    item_set = fingerprint(items)  # of the whole set, before any sample: what a report looks results up by
    dropped = None
    if items["task"].iloc[0] == "fv" and cfg.judge in trained_judges():  # the paper: scanpaths under 10 fixations dropped
        from turinglab.judges.scanpath import PAPER_FIXATIONS, keep_long

        items, dropped = keep_long(items, PAPER_FIXATIONS)
        if items["truth"].nunique() < 2:
            raise JudgeError(f"no human or no machine scanpath has {PAPER_FIXATIONS} fixations (dropped: {dropped})")
    if cfg.judge == "llm" and cfg.limit:
        items = sample_balanced(items, cfg.limit, cfg.seed)
    n_given = len(items)
    if cfg.protocol == "zhang":
        from turinglab.judges import zhang

        items = zhang.balance(items, cfg.seed)
    elif cfg.protocol is not None:
        raise JudgeError(f"unknown protocol {cfg.protocol!r}; the one preset is 'zhang'")
    key = _key(items, trials, cfg)
    path = cache_dir() / "judges" / "results" / f"{key}.json"
    if use_cache and path.is_file():
        try:
            res = json.loads(path.read_text())
            res["cached"] = True
            _index(item_set, key)
            return res
        except ValueError:
            pass
    verdicts, info = run_judge(items, cfg, progress, chat)
    merged = items.merge(verdicts, on="item_id", how="left", validate="one_to_one")
    summ = metrics.summarize(merged["truth"], merged["verdict"], merged["agent"], merged["score"], alpha=cfg.alpha)
    res: dict[str, Any] = {
        "judge": cfg.judge,
        "task": items["task"].iloc[0],
        "source": source,
        "folds": cfg.folds if cfg.judge in trained_judges() else None,
        "fold_design": ("stimulus-grouped StratifiedGroupKFold" if cfg.group_by_stimulus else "shuffled KFold")
        if cfg.judge in trained_judges() else "zero-shot (no training)",
        "group_by_stimulus": cfg.group_by_stimulus,
        "seeds": cfg.seeds,
        "judge_provenance": ai_judges()[cfg.judge].description if cfg.judge in ai_judges() else "the project's own",
        **summ,
        **info,
    }
    if dropped is not None:
        res["dropped_short_scanpaths"] = dropped
    if trials is not None and len(trials):
        t = trials[trials["item_id"].isin(set(items["item_id"]))]
        hs = metrics.summarize(t["truth"], t["verdict"], t["agent"], alpha=cfg.alpha)
        hs["judges"] = int(t["judge_id"].nunique())
        hs["items"] = int(t["item_id"].nunique())
        res["human_judges"] = hs
        res["mcnemar_vs_humans"] = metrics.compare_with_humans(merged, t)
    if cfg.protocol == "zhang":
        res["protocol"] = _zhang_section(items, merged, cfg, n_given)
        if res["protocol"]["judge_follows_paper"]:
            res["judge_provenance"] = (f"the paper's judge for the {res['task']} task ({cfg.judge}), as far as the "
                                       "paper states it and this data allows (see protocol)")
    res["item_verdicts"] = merged[["item_id", "truth", "agent", "verdict", "score"]].to_dict(orient="records")
    if use_cache:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(".tmp")
        tmp.write_text(json.dumps(res, default=_json_default))
        tmp.replace(path)
        _index(item_set, key)
    res["cached"] = False
    return json.loads(json.dumps(res, default=_json_default))


def _zhang_section(items: pd.DataFrame, merged: pd.DataFrame, cfg: Config, n_given: int) -> dict[str, Any]:
    """What `--protocol zhang` followed, what it could not, the paper's figure and ours (exact interval)."""
    from turinglab.judges import zhang

    p = zhang.preset(items["task"].iloc[0])
    right = int((merged["verdict"] == merged["truth"]).sum())
    lo, hi = zhang.clopper_pearson(right, len(merged), cfg.alpha)
    follows = cfg.judge == p.judge
    return {"name": "zhang", "judge_follows_paper": follows, "paper_judge": p.judge, "paper": p.paper,
            "not_stated_or_unavailable": p.unstated, "balancing": p.balancing, "items_given": n_given,
            "items_used": len(items), "paper_figure": p.paper_figure,
            "accuracy": right / len(merged), "accuracy_ci_exact_binomial": [lo, hi], "correct": right}


def _index(item_set: str, key: str) -> None:
    """Remember that result `key` was computed on the item set `item_set` (see `results_for`)."""
    mark = cache_dir() / "judges" / "by_items" / item_set / key
    mark.parent.mkdir(parents=True, exist_ok=True)
    mark.touch()


def results_for(items: pd.DataFrame) -> list[dict[str, Any]]:
    """The cached results of every judge evaluated on exactly these items (any configuration), newest
    per configuration label first-seen; results of other item sets (older data) are not returned."""
    folder = cache_dir() / "judges" / "by_items" / fingerprint(validate(items))
    if not folder.is_dir():
        return []
    marks = sorted(folder.iterdir(), key=lambda m: m.stat().st_mtime, reverse=True)
    out: dict[tuple, dict[str, Any]] = {}
    for mark in marks:
        try:
            res = json.loads((cache_dir() / "judges" / "results" / f"{mark.name}.json").read_text())
        except (OSError, ValueError):
            continue
        cfg = (res.get("judge"), res.get("folds"), res.get("group_by_stimulus"), json.dumps(res.get("model")),
               bool(res.get("protocol")), "human_judges" in res)
        out.setdefault(cfg, res)
    # with and without human trials: keep the one that has the comparison
    keep = [r for k, r in out.items() if k[5] or (*k[:5], True) not in out]
    return sorted(keep, key=lambda r: (r["judge"], bool(r.get("group_by_stimulus"))))


def _json_default(o: Any) -> Any:
    if isinstance(o, (np.integer,)):
        return int(o)
    if isinstance(o, (np.floating,)):
        return None if np.isnan(o) else float(o)
    if isinstance(o, np.ndarray):
        return o.tolist()
    raise TypeError(f"not JSON serialisable: {type(o).__name__}")
