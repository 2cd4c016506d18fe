"""Benchmark static Turing tests: import of the shared Zhang data, summary/report of 1 M trials.

    python benchmarks/bench_static.py [--trials 1000000] [--judges 25000] [--db URL] [--zhang-data DIR]

Prints:
* import time of the shared data (word.json + its 2 000 published judge trials; caption, object,
  colour dictionaries) into a fresh SQLite database, through `Store.import_static`;
* for N synthetic trials (stored first; the storing time is printed but is not the target):
  `static summary` time (read every trial from the store + the numbers) and report time
  (analysis with a 1 000-replicate judge-clustered bootstrap + figures + HTML). Target: < 10 s each.
* trial-submission latency for 500 concurrent judges belongs to the judge-session server
  (issue 9 item 5) and is not measured here.
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from turinglab.statictests.config import preset_study  # noqa: E402
from turinglab.statictests.demo import data_dir  # noqa: E402
from turinglab.statictests.zhang import parse_judge_trials, parse_responses, read_json  # noqa: E402
from turinglab.store import Store  # noqa: E402
from turinglab.store.static import ImportTrial, JudgeIn, ResponseIn, StimulusIn  # noqa: E402


def bench_import(url: str, data: Path) -> None:
    tag = f"{time.time_ns() % 10**8}"  # fresh study names, so --db can point at a kept database
    with Store(url) as st:
        t0 = time.perf_counter()
        p = parse_responses(read_json(data / "word.json"), "word", "word.json")
        p = parse_judge_trials(read_json(data / "humanjudge_Word_Feedback_testphase.json"), p)
        st.import_static(preset_study(f"bench-word-{tag}", "word"), p.stimuli, p.responses, p.judges, p.trials)
        t1 = time.perf_counter()
        print(f"import word.json + 2000 judge trials: {t1 - t0:.2f} s ({len(p.responses)} items)")
        for task in ("caption", "object", "color"):
            t0 = time.perf_counter()
            q = parse_responses(read_json(data / f"{task}.json"), task, f"{task}.json")
            st.import_static(preset_study(f"bench-{task}-{tag}", task), q.stimuli, q.responses)
            print(f"import {task}.json: {time.perf_counter() - t0:.2f} s ({len(q.responses)} items)")


def bench_trials(url: str, n: int, n_judges: int) -> None:
    from turinglab.analysis.static import analyse_counts, write_static_report
    from turinglab.statictests.summary import count_table, judge_counts, judge_table, summary

    rng = random.Random(0)
    agents = {"m1": 0.3, "m2": 0.45, "m3": 0.55, "m4": 0.65}
    stimuli = [StimulusIn(f"s{i}") for i in range(500)]
    responses = [ResponseIn(f"s{i}/h", f"s{i}", "x", "human", "human") for i in range(500)]
    responses += [ResponseIn(f"s{i}/{a}", f"s{i}", "x", "machine", a) for i in range(500) for a in agents]
    per = n // n_judges
    judges = [JudgeIn(f"j{j}", demographics={"group": rng.choice("abc")}) for j in range(n_judges)]
    trials = []
    for j in range(n_judges):
        for s in range(per):
            r = rng.choice(responses)
            p = 0.7 if r.truth == "human" else agents[r.agent]
            trials.append(ImportTrial(f"j{j}", r.key, s, "human" if rng.random() < p else "machine",
                                      rt_ms=rng.randint(200, 6000)))
    name = f"bench-synthetic-{n}-{n_judges}"
    with Store(url) as st:
        known = [x for x in st.static_studies() if x.name == name]
        if known:  # a kept database (--db): the same synthetic trials are already stored
            sid = known[0].id
            print(f"reusing the {n:,} synthetic trials stored in {url}")
        else:
            t0 = time.perf_counter()
            sid = st.import_static(preset_study(name, "word"), stimuli, responses, judges, trials)
            print(f"store {len(trials):,} synthetic trials ({n_judges:,} judges): {time.perf_counter() - t0:.1f} s "
                  "(setup, not the target)")
        t0 = time.perf_counter()
        out = summary(count_table(st, sid))
        t1 = time.perf_counter()
        print(f"summary of {out['trials']:,} trials: {t1 - t0:.2f} s (target < 10 s)")
        t0 = time.perf_counter()
        jc, lc = judge_counts(st, sid)
        jt = judge_table(st, sorted(jc["judge_id"].unique()))
        t1 = time.perf_counter()
        a = analyse_counts(jc, lc, jt, study="bench-synthetic", task="word")
        t2 = time.perf_counter()
        with tempfile.TemporaryDirectory() as d:
            write_static_report(a, Path(d) / "r.html")
        t3 = time.perf_counter()
        print(f"report of {a.n_trials:,} trials: {t3 - t0:.2f} s (target < 10 s): read {t1 - t0:.2f} s, "
              f"analysis with 1000 bootstrap replicates {t2 - t1:.2f} s, figures + HTML {t3 - t2:.2f} s")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--trials", type=int, default=1_000_000)
    ap.add_argument("--judges", type=int, default=25_000)
    ap.add_argument("--db", default=None, help="database URL (default: a temporary SQLite file)")
    ap.add_argument("--zhang-data", default=None)
    args = ap.parse_args()
    import os

    print(f"load average before: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores (timings are wall-clock)")
    with tempfile.TemporaryDirectory() as d:
        url = args.db or f"sqlite:///{d}/bench.db"
        bench_import(url, data_dir(args.zhang_data))
        bench_trials(url, args.trials, args.judges)
    print("trial-submission latency (500 concurrent judges): not measured here; it needs the judge-session "
          "server (issue 9 item 5)")


if __name__ == "__main__":
    main()
