"""The ML binomial GLMM (turinglab.analysis.live.models.glmm) by simulation: false-positive rate on null
studies and coverage of a known games-played effect; with --reference lme4, lme4's glmer (Laplace,
the same uncorrelated model `correct ~ game_index * ai_witness + (1 + game_index || interrogator)`,
games played centred) is fitted to the very same simulated studies through Rscript, and both are printed.

    python benchmarks/bench_glmm.py [--null 200] [--cover 200] [--interrogators 100] [--reference lme4]
    python benchmarks/bench_glmm.py --optimum 40 [--db URL [--study ID]]   (needs R with lme4)

--optimum N: the optimum check instead. N simulated flat-likelihood studies (random-effect SDs 0-0.05 on the
games-played slope, 0 or 0.8 on the intercept) and, with --db, the stored study's model frame exactly as the
report fits it (design, then the 5 000-game subsample); each is fitted by us and by glmer on the same design
matrix, and -2 log L, the two SDs and the fixed effects' SEs are printed side by side. Target: ours no worse
than lme4's -2 log L by more than 1e-3 anywhere.

Each study: interrogators x 6 games, random intercept SD 0.8 and games-played slope SD 0.1, AI-witness
effect 0.4; null studies have no games-played effect, coverage studies a slope of 0.15. lme4's SEs are
printed twice: "lme4" from vcov(use.hessian = TRUE), glmer's default, and "lme4 (RX)" from
vcov(use.hessian = FALSE); with the Hessian a few singular fits give a collapsed SE (e.g. 0.0012 where
the others give 0.08), which is what pulls its coverage down. R and lme4 are
only needed here (Debian: apt-get install r-cran-lme4), never at run time. About 10 minutes on 1 core
at the defaults (ours: one gpboost fit and the polish of laplace.py a study, about 1 s at load 10; glmer ~0.5-1.5 s).
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from scipy.stats import binomtest, norm  # noqa: E402

from tests.analysis.live.test_analysis_glmm import FORMULA, study  # noqa: E402
from turinglab.analysis.live.models import glmm  # noqa: E402

SLOPE = 0.15
R_SCRIPT = r"""
suppressMessages(library(lme4))
args <- commandArgs(trailingOnly = TRUE)
d <- read.csv(args[1])
out <- list()
for (s in unique(d$sim)) {
  x <- d[d$sim == s, ]
  x$interrogator <- factor(x$interrogator)
  r <- tryCatch({
    m <- suppressWarnings(suppressMessages(glmer(correct ~ game_index * ai_witness + (1 + game_index || interrogator),
                                                 data = x, family = binomial)))
    c(fixef(m)[["game_index"]], sqrt(diag(as.matrix(vcov(m, use.hessian = TRUE))))[2],
      sqrt(diag(as.matrix(suppressWarnings(vcov(m, use.hessian = FALSE)))))[2], as.numeric(isSingular(m)))
  }, error = function(e) c(NA, NA, NA, NA))
  out[[length(out) + 1]] <- data.frame(sim = s, estimate = r[1], se = r[2], se_rx = r[3], singular = r[4])
}
write.csv(do.call(rbind, out), args[2], row.names = FALSE)
"""


R_OPTIMUM = r"""
suppressMessages(library(lme4))
args <- commandArgs(trailingOnly = TRUE)
d <- read.csv(args[1])
xs <- grep("^x[0-9]+$", names(d), value = TRUE)
f <- as.formula(paste("correct ~ 0 +", paste(xs, collapse = " + "), "+ (1 + game_index || interrogator)"))
out <- list()
for (s in unique(d$sim)) {
  x <- d[d$sim == s, ]
  x$interrogator <- factor(x$interrogator)
  keep <- xs[colSums(x[xs] != 0) > 0]
  m <- suppressWarnings(suppressMessages(glmer(f, data = x, family = binomial)))
  vc <- as.data.frame(VarCorr(m))
  se <- sqrt(diag(as.matrix(vcov(m, use.hessian = TRUE))))
  out[[length(out) + 1]] <- data.frame(sim = s, dev = -2 * as.numeric(logLik(m)), sd0 = vc$sdcor[1], sd1 = vc$sdcor[2],
                                       se = paste(signif(se, 8), collapse = " "))
}
write.csv(do.call(rbind, out), args[2], row.names = FALSE)
"""


def optimum(n: int, db: str | None, study_id: str | None) -> int:
    """Ours against glmer on flat-likelihood studies (and a stored study): -2 log L, SDs, SEs."""
    import patsy

    from turinglab.analysis.live.models import design, subsample

    cases = []
    for k in range(n):
        d = study(20_000 + k, n_int=100, sd0=[0.0, 0.8][k % 2], sd1=[0.0, 0.02, 0.05][(k // 2) % 3])
        d["game_index"] -= d["game_index"].mean()
        cases.append((f"flat {k}", FORMULA, d))
    if db:
        from turinglab.analysis.live.load import load

        loaded = load(db, study_id)
        d, formula, _ = design(loaded.judgements, loaded.participants)
        dm, _ = subsample(d, 5_000)
        cases.append((f"stored {len(dm)} games", formula, dm))
    rows, frames = [], []
    t0 = time.perf_counter()
    for i, (name, formula, d) in enumerate(cases):
        g = glmm(d, formula)
        _, X = patsy.dmatrices(formula, d, return_type="dataframe")
        f = pd.DataFrame(X.to_numpy(), columns=[f"x{j}" for j in range(X.shape[1])])
        frames.append(f.assign(correct=d["correct"].to_numpy(), game_index=d["game_index"].to_numpy(),
                               interrogator=d["interrogator"].to_numpy(), sim=i))
        rows.append({"sim": i, "name": name, "dev": g.attrs["deviance"], "start": g.attrs["start_deviance"],
                     "sd0": g.attrs["interrogator_sd"], "sd1": g.attrs["slope_sd"] or 0.0, "se": g["se"].to_numpy()})
    ours_s = time.perf_counter() - t0
    if shutil.which("Rscript") is None:
        raise SystemExit("--optimum needs R with lme4 (Debian: apt-get install r-cran-lme4)")
    with tempfile.TemporaryDirectory() as tmp:
        pd.concat(frames, ignore_index=True).fillna(0).to_csv(f"{tmp}/data.csv", index=False)
        Path(f"{tmp}/fit.R").write_text(R_OPTIMUM)
        t0 = time.perf_counter()
        subprocess.run(["Rscript", f"{tmp}/fit.R", f"{tmp}/data.csv", f"{tmp}/out.csv"], check=True)
        ref = pd.read_csv(f"{tmp}/out.csv").set_index("sim")
    r_s = time.perf_counter() - t0
    worst, worst_start, sd_diff = -np.inf, -np.inf, 0.0
    print(f"{'study':>22} {'-2logL ours':>12} {'lme4':>12} {'ours-lme4':>10} {'gpboost-lme4':>12}  "
          f"{'SD int ours/lme4':>17}  {'SD slope ours/lme4':>19}  max |SE ratio - 1|")
    for r in rows:
        x = ref.loc[r["sim"]]
        se_l = np.array([float(v) for v in str(x["se"]).split()])
        diff, sdiff = r["dev"] - x["dev"], r["start"] - x["dev"]
        worst, worst_start = max(worst, diff), max(worst_start, sdiff)
        sd_diff = max(sd_diff, abs(r["sd0"] - x["sd0"]), abs(r["sd1"] - x["sd1"]))
        print(f"{r['name']:>22} {r['dev']:>12.4f} {x['dev']:>12.4f} {diff:>10.2e} {sdiff:>12.2e}  "
              f"{r['sd0']:>8.4f}/{x['sd0']:<8.4f}  {r['sd1']:>9.4f}/{x['sd1']:<9.4f}  "
              f"{np.max(np.abs(r['se'] / se_l - 1)):.4f}")
    ok = worst <= 1e-3
    print(f"{len(rows)} fits; -2 log L ours - lme4: worst {worst:.2e} (gpboost's stopping point: worst {worst_start:.2e}); "
          f"largest |SD difference| {sd_diff:.4f}; ours {ours_s:.0f} s, glmer {r_s:.0f} s; load {os.getloadavg()[0]:.2f}; "
          f"target ours - lme4 <= 1e-3: {'ok' if ok else 'OUT'}")
    return 0 if ok else 1


def simulate(n_null: int, n_cover: int, n_int: int) -> list[tuple[int, str, pd.DataFrame]]:
    sims = [(s, "null", study(s, n_int=n_int)) for s in range(n_null)]
    sims += [(10_000 + s, "cover", study(10_000 + s, n_int=n_int, slope=SLOPE)) for s in range(n_cover)]
    for _, _, d in sims:
        d["game_index"] = d["game_index"] - d["game_index"].mean()  # centred, as the report's design()
    return sims


def ours(sims) -> pd.DataFrame:
    rows = []
    for s, kind, d in sims:
        g = glmm(d, FORMULA)
        r = g.set_index("term").loc["game_index"]
        rows.append({"sim": s, "kind": kind, "estimate": r["estimate"], "se": r["se"], "singular": g.attrs["singular"],
                     "fallback": bool(g.attrs["fallback"])})
    return pd.DataFrame(rows)


def lme4(sims) -> pd.DataFrame:
    if shutil.which("Rscript") is None:
        raise SystemExit("--reference lme4 needs R with lme4 (Debian: apt-get install r-base-core r-cran-lme4)")
    with tempfile.TemporaryDirectory() as tmp:
        data = pd.concat([d.assign(sim=s) for s, _, d in sims], ignore_index=True)
        data.to_csv(f"{tmp}/data.csv", index=False)
        Path(f"{tmp}/fit.R").write_text(R_SCRIPT)
        subprocess.run(["Rscript", f"{tmp}/fit.R", f"{tmp}/data.csv", f"{tmp}/out.csv"], check=True)
        res = pd.read_csv(f"{tmp}/out.csv")
    kinds = {s: kind for s, kind, _ in sims}
    return res.assign(kind=res["sim"].map(kinds), singular=res["singular"].astype(bool))


def summarise(name: str, r: pd.DataFrame, seconds: float) -> dict:
    q = norm.isf(0.025)
    nan = int((~np.isfinite(r["se"])).sum())
    null, cov = r[r["kind"] == "null"], r[r["kind"] == "cover"]
    rej = int((2 * norm.sf(np.abs(null["estimate"] / null["se"])) < 0.05).sum())
    hit = int(((cov["estimate"] - q * cov["se"] <= SLOPE) & (SLOPE <= cov["estimate"] + q * cov["se"])).sum())
    fpr, cv = rej / len(null), hit / len(cov)
    ci_f, ci_c = binomtest(rej, len(null)).proportion_ci(), binomtest(hit, len(cov)).proportion_ci()
    ok = 0.03 <= fpr <= 0.07 and 0.93 <= cv <= 0.97
    print(f"{name:>10}: FPR {rej}/{len(null)} = {fpr:.3f} (95% CI {ci_f.low:.3f}-{ci_f.high:.3f}); "
          f"coverage {hit}/{len(cov)} = {cv:.3f} (95% CI {ci_c.low:.3f}-{ci_c.high:.3f}); "
          f"mean slope {cov['estimate'].mean():.4f}; NaN SEs {nan}; singular fits {int(r['singular'].sum())}"
          + (f"; random-intercept fallbacks {int(r['fallback'].sum())}" if "fallback" in r else "")
          + f"; {seconds:.0f} s; targets FPR [0.03, 0.07], coverage [0.93, 0.97]: {'ok' if ok else 'OUT'}")
    return {"ok": ok}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--null", type=int, default=200)
    ap.add_argument("--cover", type=int, default=200)
    ap.add_argument("--interrogators", type=int, default=100, help="per study, 6 games each")
    ap.add_argument("--reference", choices=["lme4"], default=None)
    ap.add_argument("--optimum", type=int, default=None, metavar="N", help="the optimum check on N flat studies")
    ap.add_argument("--db", default=None, help="--optimum: also the stored study in this database")
    ap.add_argument("--study", default=None, help="--optimum --db: study id or name")
    a = ap.parse_args()
    if a.optimum is not None:
        return optimum(a.optimum, a.db, a.study)
    sims = simulate(a.null, a.cover, a.interrogators)
    print(f"{a.null} null + {a.cover} coverage studies, {a.interrogators} interrogators x 6 games each; "
          f"term: games played (centred); Wald 95% intervals")
    t0 = time.perf_counter()
    mine = ours(sims)
    s_ours = summarise("turinglab", mine, time.perf_counter() - t0)
    if a.reference:
        t0 = time.perf_counter()
        ref = lme4(sims)
        dt = time.perf_counter() - t0
        summarise("lme4", ref, dt)
        summarise("lme4 (RX)", ref.assign(se=ref["se_rx"]), dt)
        both = mine.merge(ref, on=["sim", "kind"], suffixes=("", "_lme4"))
        ratio = (both["se"] / both["se_lme4"]).replace([np.inf, -np.inf], np.nan).dropna()
        diff = (both["estimate"] - both["estimate_lme4"]).abs()
        nb = both[both["kind"] == "null"]
        r_o = 2 * norm.sf(np.abs(nb["estimate"] / nb["se"])) < 0.05
        r_l = 2 * norm.sf(np.abs(nb["estimate_lme4"] / nb["se_lme4"])) < 0.05
        b, c = int((r_o & ~r_l).sum()), int((~r_o & r_l).sum())
        p = binomtest(b, b + c).pvalue if b + c else 1.0
        print(f"same studies: SE ours / lme4 median {ratio.median():.4f} (IQR {ratio.quantile(0.25):.4f}-"
              f"{ratio.quantile(0.75):.4f}); |estimate difference| median {diff.median():.2e}, max {diff.max():.2e}; "
              f"null rejections only ours {b}, only lme4 {c} (exact McNemar p {p:.3f})")
    return 0 if s_ours["ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
