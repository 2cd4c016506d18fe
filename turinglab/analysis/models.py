"""Regressions of interrogator accuracy on games played and demographics.

Mixed-effects logistic regression with a random intercept per interrogator
(statsmodels BinomialBayesMixedGLM, variational Bayes), cross-checked by a GEE
(binomial, exchangeable working correlation, groups = interrogator; robust SEs).
"""

from __future__ import annotations

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
        terms.append("ai_witness")
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
        for col in CATEGORICAL:
            if col in p.columns:
                v = d["interrogator"].map(p[col].astype("object"))
                vc = v.value_counts()
                keep = vc[vc >= MIN_PER_LEVEL].index
                if len(keep) > 1:
                    d[col] = v.where(v.isin(keep))
                    terms.append(f"C({col})")
                    used.append(col)
    d = d.dropna().reset_index(drop=True)
    return d, "correct ~ " + " + ".join(terms), used


def mixed_model(d: pd.DataFrame, formula: str, alpha: float = 0.05) -> pd.DataFrame:
    """Random intercept per interrogator; variational Bayes with L-BFGS-B and a sparse
    random-effects design (statsmodels' default dense BFGS takes minutes at 3000 games)."""
    import patsy
    import scipy.sparse as sp
    from statsmodels.genmod.bayes_mixed_glm import BinomialBayesMixedGLM

    y, X = patsy.dmatrices(formula, d, return_type="dataframe")
    codes, uniq = pd.factorize(d["interrogator"])
    Z = sp.csr_matrix((np.ones(len(d)), (np.arange(len(d)), codes)), shape=(len(d), len(uniq)))
    m = BinomialBayesMixedGLM(y.to_numpy().ravel(), X.to_numpy(), Z, np.zeros(len(uniq), dtype=int),
                              fep_names=list(X.columns), vcp_names=["interrogator"])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        r = m.fit_vb(fit_method="L-BFGS-B", minim_opts={"maxiter": 5000, "ftol": 1e-13, "gtol": 1e-9})
    mean, sd = np.asarray(r.fe_mean), np.asarray(r.fe_sd)
    z = mean / sd
    q = norm.isf(alpha / 2)  # the report's level, like the GEE's conf_int(alpha)
    out = pd.DataFrame({
        "term": list(X.columns), "estimate": mean, "se": sd, "z": z,
        "p_value": 2 * norm.sf(np.abs(z)),
        "low": mean - q * sd, "high": mean + q * sd,
    })
    out.attrs["interrogator_sd"] = float(np.exp(np.asarray(r.vcp_mean)[0]))
    return out


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
        "term": list(r.params.index), "estimate": r.params.to_numpy(), "se": r.bse.to_numpy(),
        "z": r.tvalues.to_numpy(), "p_value": r.pvalues.to_numpy(), "low": ci[:, 0], "high": ci[:, 1],
    })


def regressions(games: pd.DataFrame, participants: pd.DataFrame | None, alpha: float,
                max_games_mixed: int = 5_000, max_games_gee: int = 300_000) -> dict:
    """Fit both models unless the data are too small or too large; say which and why."""
    d, formula, used = design(games, participants)
    out: dict = {"formula": formula, "n_games": len(d), "n_interrogators": int(d["interrogator"].nunique()),
                 "demographics": used, "mixed": None, "gee": None, "notes": []}
    if len(d) < 20 or d["correct"].nunique() < 2:
        out["notes"].append("too few games (or no variation in accuracy) to fit a regression")
        return out
    if len(d) <= max_games_mixed:
        try:
            out["mixed"] = mixed_model(d, formula, alpha)
        except Exception as exc:  # noqa: BLE001 - a failed fit is reported, not fatal
            out["notes"].append(f"mixed model failed: {type(exc).__name__}: {exc}")
    else:
        out["notes"].append(f"mixed model skipped: {len(d)} games > {max_games_mixed} (too slow); GEE only")
    if len(d) <= max_games_gee:
        try:
            out["gee"] = gee(d, formula, alpha)
        except Exception as exc:  # noqa: BLE001
            out["notes"].append(f"GEE failed: {type(exc).__name__}: {exc}")
    else:
        out["notes"].append(f"GEE skipped: {len(d)} games > {max_games_gee}")
    return out
