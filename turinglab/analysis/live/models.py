"""Regressions of interrogator accuracy on games played and demographics.

Binomial GLMM by maximum likelihood (Laplace, lme4's deviance; gpboost's fit polished to the optimum by
analysis.live.laplace) with a random intercept and a random
games-played slope per interrogator, uncorrelated (their correlation fixed at 0, lme4's
`(1 + game_index || interrogator)`); games played is centred at its mean so that this
restriction does not depend on where games are counted from. Conditional (per-interrogator)
effects; the random-effect variances are reported and a variance at its boundary (0) is called
a singular fit, as lme4's isSingular does (see SINGULAR_SD). If the fit's SEs are undefined, the
random-intercept-only fit is used instead and the notes say so. benchmarks/bench_glmm.py checks it against lme4's glmer.
Beside it a GEE
(binomial, exchangeable working correlation, groups = interrogator; robust SEs): marginal
(population-average) effects, smaller in size than the conditional ones when interrogators differ.
"""

from __future__ import annotations

import re
import warnings

import numpy as np
import pandas as pd
from scipy.stats import norm

NUMERIC = {"age": "age_decades", "llm_knowledge": "llm_knowledge", "chatbot_freq": "chatbot_freq"}
CATEGORICAL = ("gender", "education")
MIN_PER_LEVEL = 10


def design(games: pd.DataFrame, participants: pd.DataFrame | None) -> tuple[pd.DataFrame, str, list[str]]:
    """Model frame and formula: correct ~ game_index [+ witness kind] [+ demographics]."""
    d = pd.DataFrame({
        "correct": games["correct"].astype(bool).astype(int).to_numpy(),
        "game_index": games["game_index"].astype(float).to_numpy(),
        "interrogator": games["interrogator_id"].astype(str).to_numpy(),
        "ai_witness": (games["witness_kind"] == "ai").astype(int).to_numpy(),
    })
    terms = ["game_index"]
    if d["ai_witness"].nunique() > 1:
        terms += ["ai_witness", "game_index:ai_witness"]
    used: list[str] = []
    if participants is not None and len(participants):
        p = participants.set_index(participants["participant_id"].astype(str))
        for col, name in NUMERIC.items():
            if col in p.columns:
                v = d["interrogator"].map(p[col].astype(float))
                if name == "age_decades":
                    v = v / 10.0
                if v.notna().sum() >= 2 * MIN_PER_LEVEL and v.nunique() > 1:
                    d[name] = v.to_numpy()
                    terms.append(name)
                    used.append(col)
        from turinglab.stats.factors import factor, reference_levels

        refs = reference_levels(games, participants)  # the same reference in every table (issue 41)
        for col in CATEGORICAL:
            if col in p.columns:
                v = d["interrogator"].map(p[col].astype("object"))
                vc = v.value_counts()
                keep = vc[vc >= MIN_PER_LEVEL].index
                if len(keep) > 1:
                    d[col] = v
                    term = factor(d, col, keep, refs.get(col))
                    _REFS[col] = term.split("reference=")[1][1:-3]
                    terms.append(term)
                    used.append(col)
    d = d.dropna().reset_index(drop=True)
    centre = float(d["game_index"].mean()) if len(d) else 0.0
    d["game_index"] = d["game_index"] - centre
    d.attrs["game_index_centre"] = centre
    return d, "correct ~ " + " + ".join(terms), used


LABELS = {"Intercept": "intercept (human witness, mean games played)", "game_index": "games played (per game, centred)",
          "ai_witness": "AI witness (ref: human)", "game_index:ai_witness": "games played × AI witness",
          "age_decades": "age (per decade)", "llm_knowledge": "LLM knowledge (per point)",
          "chatbot_freq": "chatbot use (per point)"}


def label(term: str) -> str:
    """Readable label of a patsy term; categorical levels name their reference level."""
    if term in LABELS:
        return LABELS[term]
    if term.startswith("C(") and "[T." in term:
        col, level = re.match(r"C\((\w+)", term).group(1), term[term.index("[T.") + 3:-1]
        return f"{col}: {level} (ref: {_REFS.get(col, 'first level')})"
    return term


_REFS: dict[str, str] = {}


# A singular fit, as lme4's isSingular(tol = 1e-4): a random-effect SD (for a binomial GLMM, lme4's theta) at
# its boundary 0. The polished fit (laplace.polish) bounds each SD at 0, so an SD whose maximum likelihood is 0
# lands there; below lme4's tolerance it is called at its boundary.
SINGULAR_SD = 1e-4


def _gpboost_start(d: pd.DataFrame, X: pd.DataFrame, y: np.ndarray, codes: np.ndarray):
    """gpboost's Laplace ML fit: the start of the polish (it stops early when the likelihood is flat)."""
    import gpboost as gpb  # slow import (optuna): only when a mixed model is fitted

    m = gpb.GPModel(group_data=codes, likelihood="bernoulli_logit", num_parallel_threads=1,
                    group_rand_coef_data=d["game_index"].to_numpy(float), ind_effect_group_rand_coef=[1])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        m.fit(y=y, X=X.to_numpy(), params={"trace": False})
    beta = np.asarray(m.get_coef(format_pandas=False), float).ravel()
    var = np.asarray(m.get_cov_pars(format_pandas=False), float).ravel()
    return beta, np.sqrt(np.maximum(var, 0.0)), 2 * float(m.get_current_neg_log_likelihood())


def glmm(d: pd.DataFrame, formula: str, alpha: float = 0.05) -> pd.DataFrame:
    """Binomial GLMM by maximum likelihood (Laplace approximation, lme4's glmer deviance): uncorrelated
    random intercept and game_index slope per interrogator. gpboost's fit is the start; laplace.polish
    takes it to the optimum (SDs bounded at 0). SEs from the Hessian of the deviance (lme4's default
    vcov); Wald z, p and intervals.

    attrs: intercept_var, slope_var (None if the fallback dropped the slope), singular (a variance
    at 0), fallback (why the random-intercept-only fit was used, or ""), deviance (-2 log L),
    start_deviance (gpboost's).
    """
    import patsy

    from turinglab.analysis.live import laplace

    y, X = patsy.dmatrices(formula, d, return_type="dataframe")
    yv = y.to_numpy().ravel()
    codes, _ = pd.factorize(d["interrogator"])
    beta0, sd0, dev0 = _gpboost_start(d, X, yv, codes)
    data = laplace.Data(yv, X.to_numpy(), codes, d["game_index"].to_numpy(float))
    fit = laplace.polish(data, beta0, sd0)
    sd = fit["sd"]
    at_zero = {"intercept": bool(sd[0] < SINGULAR_SD), "slope": bool(sd[1] < SINGULAR_SD)}
    fallback = ""
    try:
        se = np.sqrt(np.diag(laplace.fixed_covariance(data, fit["beta"], sd)))
    except np.linalg.LinAlgError:
        se = np.full(len(beta0), np.nan)
    if not np.all(np.isfinite(se)):
        fit = laplace.polish(data, fit["beta"], sd, free_sd=(True, False))
        sd = fit["sd"]
        se = np.sqrt(np.diag(laplace.fixed_covariance(data, fit["beta"], sd)))
        fallback = ("the random-slope fit gave undefined SEs, so the random-intercept-only fit is reported")
    est = fit["beta"]
    z = est / se
    q = norm.isf(alpha / 2)
    out = pd.DataFrame({
        "term": list(X.columns), "label": [label(t) for t in X.columns], "estimate": est, "se": se, "z": z,
        "p_value": 2 * norm.sf(np.abs(z)), "low": est - q * se, "high": est + q * se,
    })
    var = sd ** 2
    out.attrs["intercept_var"] = float(var[0])
    out.attrs["slope_var"] = None if fallback else float(var[1])
    out.attrs["interrogator_sd"] = float(sd[0])
    out.attrs["slope_sd"] = None if fallback else float(sd[1])
    out.attrs["singular"] = any(at_zero.values())
    out.attrs["singular_terms"] = [k for k, v in at_zero.items() if v]  # which variance is at its boundary
    out.attrs["fallback"] = fallback
    out.attrs["deviance"] = fit["deviance"]
    out.attrs["start_deviance"] = dev0
    return out


mixed_model = glmm  # the name the analysis used for the mixed fit


def subsample(d: pd.DataFrame, max_games: int, seed: int = 0) -> tuple[pd.DataFrame, int]:
    """A seeded random subset of whole interrogators with at most max_games games in all."""
    ids = pd.unique(d["interrogator"])
    ids = ids[np.random.default_rng(seed).permutation(len(ids))]
    sizes = d.groupby("interrogator").size().reindex(ids).to_numpy()
    keep = ids[np.cumsum(sizes) <= max_games]
    return d[d["interrogator"].isin(set(keep))].reset_index(drop=True), len(keep)


def gee(d: pd.DataFrame, formula: str, alpha: float) -> pd.DataFrame:
    import statsmodels.api as sm
    import statsmodels.formula.api as smf

    m = smf.gee(formula, "interrogator", d, family=sm.families.Binomial(),
                cov_struct=sm.cov_struct.Exchangeable())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        r = m.fit()
    ci = np.asarray(r.conf_int(alpha=alpha))
    return pd.DataFrame({
        "term": list(r.params.index), "label": [label(t) for t in r.params.index], "estimate": r.params.to_numpy(), "se": r.bse.to_numpy(),
        "z": r.tvalues.to_numpy(), "p_value": r.pvalues.to_numpy(), "low": ci[:, 0], "high": ci[:, 1],
    })


def regressions(games: pd.DataFrame, participants: pd.DataFrame | None, alpha: float,
                max_games_mixed: int = 5_000, max_games_gee: int = 300_000) -> dict:
    """Fit both models unless the data are too small or too large; say which and why."""
    d, formula, used = design(games, participants)
    out: dict = {"formula": formula, "n_games": len(d), "n_interrogators": int(d["interrogator"].nunique()),
                 "game_index_centre": d.attrs.get("game_index_centre", 0.0),
                 "demographics": used, "mixed": None, "gee": None, "notes": []}
    if len(d) < 20 or d["correct"].nunique() < 2:
        out["notes"].append("too few games (or no variation in accuracy) to fit a regression")
        return out
    dm = d
    if len(d) > max_games_mixed > 0:
        dm, k = subsample(d, max_games_mixed)
        out["notes"].append(f"mixed model fitted on a seeded random subsample of {k} of {out['n_interrogators']} "
                            f"interrogators ({len(dm)} of {len(d)} games; limit {max_games_mixed} games)")
    if max_games_mixed <= 0:
        out["notes"].append("mixed model skipped: turned off (max_games_mixed = 0); GEE only")
    elif len(dm) < 20 or dm["correct"].nunique() < 2:
        out["notes"].append("mixed model skipped: the subsample is too small to fit")
    else:
        try:
            out["mixed"] = glmm(dm, formula, alpha)
            out["mixed_n_games"] = len(dm)
            at = out["mixed"].attrs
            out["random_effects"] = {"intercept_var": at["intercept_var"], "slope_var": at["slope_var"],
                                     "singular": at["singular"]}
            if at["fallback"]:
                out["notes"].append("mixed model: " + at["fallback"])
            if at["singular"]:
                which = " and ".join(at.get("singular_terms") or ["a random-effect"])
                out["notes"].append(f"mixed model: singular fit (the {which} variance is estimated at 0, the "
                                    "boundary); the fixed effects are those of the model without that variance")
        except Exception as exc:  # noqa: BLE001 - a failed fit is reported, not fatal
            out["notes"].append(f"mixed model failed: {type(exc).__name__}: {exc}")
    if len(d) <= max_games_gee:
        try:
            out["gee"] = gee(d, formula, alpha)
        except Exception as exc:  # noqa: BLE001
            out["notes"].append(f"GEE failed: {type(exc).__name__}: {exc}")
    else:
        out["notes"].append(f"GEE skipped: {len(d)} games > {max_games_gee}")
    return out
