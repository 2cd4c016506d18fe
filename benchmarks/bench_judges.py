"""Benchmark the AI judges on Zhang et al.'s word-association data (1,500 items).

    python benchmarks/bench_judges.py [--data DIR] [--folds 10] [--llm-items 10] [--no-llm]

Prints the feature-extraction time, the 10-fold cross-validation time of each trained judge
(plain and stimulus-grouped folds, one seed; the target is all trained judges in under 60 s),
`--protocol zhang-code` on the object file (GloVe mean, every agent; target < 30 s), the ImageNet
CNN's seconds per image (with the [image] extra), and the zero-shot LLM judge's items per second
against the embedded local model (fresh answers: the answer cache is off). BLAS threads are
limited to 1 (a shared 2-core machine); the load average is printed with each figure.
"""

from __future__ import annotations

import os

for _v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_v, "1")

import argparse  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[1])
    here = Path(__file__).resolve().parents[1]
    default = here / "turinglab" / "statictests" / "zhang2023"  # the shipped copy
    ap.add_argument("--data", type=Path, default=default)
    ap.add_argument("--folds", type=int, default=10)
    ap.add_argument("--llm-items", type=int, default=10)
    ap.add_argument("--no-llm", action="store_true")
    a = ap.parse_args()

    from turinglab.judges import features, metrics, trained
    from turinglab.judges.items import load_zhang

    t0 = time.perf_counter()
    items = load_zhang(a.data / "word.json")
    t_load = time.perf_counter() - t0
    t0 = time.perf_counter()
    X = features.extract(items, features.parse_sets(None, "word"))
    t_feat = time.perf_counter() - t0
    print(f"word items: {len(items)}; load {t_load:.2f} s; features {X.shape[1]} per item in {t_feat:.2f} s "
          f"(includes loading GloVe)")
    total = t_feat
    word_judges = [n for n, j in trained.trained_judges().items() if not j.tasks or "word" in j.tasks]
    for judge in word_judges:
        for grouped in (False, True):
            t0 = time.perf_counter()
            cv = trained.cross_validate(items, judge, None if judge == "tfidf-lr" else X, folds=a.folds, seeds=[42],
                                        group_by_stimulus=grouped)
            dt = time.perf_counter() - t0
            total += dt
            s = metrics.summarize(items["truth"], cv.verdict, items["agent"], cv.score)
            print(f"{judge:9s} {'grouped' if grouped else 'plain  '} {a.folds}-fold: {dt:6.2f} s  "
                  f"balanced accuracy {s['balanced_accuracy']:.3f}")
    print(f"all trained judges (plain + grouped) incl. features: {total:.1f} s (target < 60 s); load {_load()}")

    from turinglab.judges import zhangcode

    t0 = time.perf_counter()
    res = zhangcode.evaluate_code(load_zhang(a.data / "object.json"), zhangcode.CodeConfig(features="mean"),
                                  use_cache=False)
    print(f"zhang-code, object, {len(res['agents'])} agents, GloVe mean: {time.perf_counter() - t0:.1f} s "
          f"(target < 30 s), mean accuracy {res['mean_accuracy']:.3f}; load {_load()}")
    _bench_cnn()

    if a.no_llm:
        return
    from turinglab.judges.evaluate import sample_balanced
    from turinglab.judges.llm import ModelSpec, judge_items
    from turinglab.witnesses.local.server import shared_server

    t0 = time.perf_counter()
    shared_server().start()
    print(f"local model start: {time.perf_counter() - t0:.1f} s")
    sample = sample_balanced(items, a.llm_items, 0)
    t0 = time.perf_counter()
    out = judge_items(sample, ModelSpec(), use_cache=False)
    dt = time.perf_counter() - t0
    print(f"LLM judge (local): {len(sample)} items in {dt:.1f} s = {len(sample) / dt:.2f} items/s; "
          f"unparsed {int((out['verdict'] == 'unparsed').sum())}")


def _load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def _bench_cnn(n: int = 16) -> None:
    import tempfile

    from PIL import Image
    from skimage import data

    from turinglab.judges import cnn
    from turinglab.judges.errors import FeaturesError

    try:
        cnn.weights_path()
    except FeaturesError as exc:
        print(f"CNN image features: not measured ({exc})")
        return
    names = ["astronaut", "chelsea", "coffee", "rocket"]
    with tempfile.TemporaryDirectory() as d:
        paths = []
        for i in range(n):
            p = Path(d) / f"{i}.png"
            Image.fromarray(getattr(data, names[i % len(names)])()).convert("RGB").save(p)
            paths.append(p)
        cnn.run(paths[:1])  # load the network once
        t0 = time.perf_counter()
        cnn.run(paths)
        dt = time.perf_counter() - t0
    print(f"CNN image features (EfficientNet-Lite0, 1 thread): {n} images in {dt:.2f} s = {dt / n * 1000:.0f} ms "
          f"per image; load {_load()}")


if __name__ == "__main__":
    main()
