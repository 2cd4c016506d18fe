"""The mixed model of the report, refitted from this export's files (called by rebuild.py).

Maximum likelihood by lme4's Laplace deviance (glmer, nAGQ = 1) for binary data with an uncorrelated
random intercept and games-played slope per interrogator: effects u ~ N(0, I) scaled by the two SDs, each
interrogator's conditional mode by Newton, -2 log L = -2 sum log p(y | mode) + |u|^2 + sum log det(I + L'Z'WZL).
The fit starts at gpboost's and is minimised with the SDs bounded at 0; SEs are those of the inverse
Hessian of the deviance (lme4's vcov(use.hessian = TRUE)). numpy, scipy and gpboost only.
"""

from __future__ import annotations

import warnings

import numpy as np
from scipy import optimize, special


def _dev(beta, sd, y, X, grp, z, k, state):
    """-2 log L (Laplace) at (beta, sd); state["u"] carries the modes to the next call."""
    base = X @ beta
    u0, u1 = state["u"]
    sums = lambda v: np.bincount(grp, weights=v, minlength=k)  # noqa: E731
    for _ in range(200):
        eta = base + sd[0] * u0[grp] + sd[1] * u1[grp] * z
        p = special.expit(eta)
        w, r = p * (1 - p), y - p
        a, b, c = sd[0] ** 2 * sums(w) + 1, sd[0] * sd[1] * sums(w * z), sd[1] ** 2 * sums(w * z * z) + 1
        g0, g1 = sd[0] * sums(r) - u0, sd[1] * sums(r * z) - u1
        det = a * c - b * b
        d0, d1 = (c * g0 - b * g1) / det, (a * g1 - b * g0) / det
        u0, u1 = u0 + d0, u1 + d1
        if max(np.abs(d0).max(), np.abs(d1).max()) < 1e-11:
            break
    state["u"] = (u0, u1)
    eta = base + sd[0] * u0[grp] + sd[1] * u1[grp] * z
    p = special.expit(eta)
    w = p * (1 - p)
    a, b, c = sd[0] ** 2 * sums(w) + 1, sd[0] * sd[1] * sums(w * z), sd[1] ** 2 * sums(w * z * z) + 1
    ll = (y * eta - np.logaddexp(0, eta)).sum()
    return -2 * ll + (u0 ** 2).sum() + (u1 ** 2).sum() + np.log(a * c - b * b).sum()


def _hess(f, x, h=1e-4):
    n = len(x)
    E = np.eye(n) * h
    f0 = f(x)
    H = np.empty((n, n))
    for i in range(n):
        for j in range(i, n):
            if i == j:
                H[i, i] = (f(x + E[i]) - 2 * f0 + f(x - E[i])) / h ** 2
            else:
                H[i, j] = H[j, i] = (f(x + E[i] + E[j]) - f(x + E[i] - E[j]) - f(x - E[i] + E[j])
                                     + f(x - E[i] - E[j])) / (4 * h * h)
    return H


def fit(y, X, groups, z, slope: bool = True):
    """(beta, sd (2,), se of beta); sd[1] = 0 when slope is False."""
    import gpboost as gpb

    y, X, z = np.asarray(y, float), np.asarray(X, float), np.asarray(z, float)
    kw = {"group_rand_coef_data": z, "ind_effect_group_rand_coef": [1]}
    m = gpb.GPModel(group_data=groups, likelihood="bernoulli_logit", num_parallel_threads=1, **kw)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        m.fit(y=y, X=X, params={"trace": False})
    beta0 = np.asarray(m.get_coef(format_pandas=False), float).ravel()
    sd0 = np.sqrt(np.maximum(np.asarray(m.get_cov_pars(format_pandas=False), float).ravel(), 0))
    k = int(groups.max()) + 1
    state = {"u": (np.zeros(k), np.zeros(k))}
    ns = 2 if slope else 1
    p = X.shape[1]

    def f(x):
        sd = np.r_[x[:ns], [0.0] * (2 - ns)]
        return _dev(x[ns:], sd, y, X, groups, z, k, state)

    x0 = np.r_[sd0[:ns], beta0]
    r = optimize.minimize(f, x0, method="L-BFGS-B", bounds=[(0, None)] * ns + [(None, None)] * p,
                          options={"ftol": 1e-13, "gtol": 1e-8, "maxiter": 500, "maxfun": 20_000})
    x = r.x
    free = [i for i in range(len(x)) if i >= ns or x[i] > 1e-4]  # a Newton step off the boundary

    def sub(v):
        full = x.copy()
        full[free] = v
        return f(full)

    H = _hess(sub, x[free])
    grad = np.array([(sub(x[free] + e) - sub(x[free] - e)) / 2e-4 for e in np.eye(len(free)) * 1e-4])
    try:
        for t in (1.0, 0.5, 0.25):
            cand = x.copy()
            cand[free] = x[free] - t * np.linalg.solve(H, grad)
            cand[:ns] = np.maximum(cand[:ns], 0)
            if f(cand) < f(x):
                x = cand
                break
    except np.linalg.LinAlgError:
        pass
    sd = np.r_[x[:ns], [0.0] * (2 - ns)]
    sd = np.where(sd < 1e-7, 0.0, sd)
    beta = x[ns:]
    on = [i for i in range(2) if sd[i] >= 1e-4]  # an SD at (or within 1e-4 of) 0 is held

    def g(v):
        s = np.zeros(2)
        s[on] = v[:len(on)]
        return _dev(v[len(on):], s, y, X, groups, z, k, state)

    cov = 2 * np.linalg.inv(_hess(g, np.r_[sd[on], beta]))
    with np.errstate(invalid="ignore"):
        return beta, sd, np.sqrt(np.diag(cov)[len(on):])
