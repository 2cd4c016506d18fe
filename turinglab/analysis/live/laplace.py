"""The Laplace deviance of a binomial GLMM with an uncorrelated random intercept and random slope per group,
written as lme4's glmer (nAGQ = 1) defines it, and its minimum over the fixed effects and the two SDs.

Spherical random effects u ~ N(0, I), b = diag(sd) u, so an SD of 0 is an ordinary point of the
parameter space (lme4's theta), not the end of a log scale. For binary data

    -2 log L(beta, sd) ~= -2 sum log p(y | eta(u*)) + |u*|^2 + sum_groups log det H_g

with u* each group's conditional mode (Newton, per group, vectorised over groups) and H_g = Z_g'W Z_g + I
its 2 x 2 Laplace precision. `polish` minimises it from a start (gpboost's fit), the SDs bounded at 0
(L-BFGS-B, then a Newton step on a finite-difference Hessian); `hessian` gives lme4's use.hessian = TRUE
covariance of the fixed effects (the inverse Hessian of the deviance over the SDs not at 0 and beta).
"""

from __future__ import annotations

import numpy as np
from scipy import optimize, special


class Data:
    """y (0/1), X (n x p), group codes 0..G-1, z (the random slope's covariate)."""

    def __init__(self, y: np.ndarray, X: np.ndarray, codes: np.ndarray, z: np.ndarray):
        self.y, self.X, self.g, self.z = np.asarray(y, float), np.asarray(X, float), np.asarray(codes), np.asarray(z, float)
        self.G = int(self.g.max()) + 1
        self.zz = self.z * self.z
        self.u = np.zeros((2, self.G))  # the last conditional modes: the next call's start

    def _sum(self, v: np.ndarray) -> np.ndarray:
        return np.bincount(self.g, weights=v, minlength=self.G)


def _loglik(y: np.ndarray, eta: np.ndarray) -> np.ndarray:
    return y * eta - np.logaddexp(0.0, eta)


def deviance(d: Data, beta: np.ndarray, sd: np.ndarray, tol: float = 1e-11) -> float:
    """-2 log L by the Laplace approximation at (beta, sd); sd = (intercept SD, slope SD), each >= 0."""
    off = d.X @ beta
    s0, s1 = float(sd[0]), float(sd[1])
    u = d.u.copy()

    def parts(u):
        eta = off + s0 * u[0][d.g] + s1 * u[1][d.g] * d.z
        return eta, d._sum(_loglik(d.y, eta)) - 0.5 * (u[0] ** 2 + u[1] ** 2)

    eta, obj = parts(u)
    for _ in range(100):
        mu = special.expit(eta)
        r, w = d.y - mu, mu * (1 - mu)
        g0, g1 = s0 * d._sum(r) - u[0], s1 * d._sum(r * d.z) - u[1]
        h00 = s0 * s0 * d._sum(w) + 1
        h01 = s0 * s1 * d._sum(w * d.z)
        h11 = s1 * s1 * d._sum(w * d.zz) + 1
        det = h00 * h11 - h01 * h01
        step = np.vstack([(h11 * g0 - h01 * g1) / det, (h00 * g1 - h01 * g0) / det])
        t = np.ones(d.G)
        for _ in range(30):  # halve the step of any group whose objective would fall (rare for logistic)
            new = u + t * step
            eta_new, obj_new = parts(new)
            bad = obj_new < obj - 1e-12
            if not bad.any():
                break
            t = np.where(bad, t / 2, t)
        u, eta, obj = new, eta_new, obj_new
        if np.max(np.abs(t * step)) < tol:
            break
    d.u = u
    mu = special.expit(eta)
    w = mu * (1 - mu)
    h00 = s0 * s0 * d._sum(w) + 1
    h01 = s0 * s1 * d._sum(w * d.z)
    h11 = s1 * s1 * d._sum(w * d.zz) + 1
    return float(-2 * obj.sum() + np.log(h00 * h11 - h01 * h01).sum())


def polish(d: Data, beta0: np.ndarray, sd0: np.ndarray, free_sd: tuple[bool, bool] = (True, True)) -> dict:
    """Minimise the deviance from (beta0, sd0); an SD not in `free_sd` stays at 0. Returns beta, sd, deviance."""
    p = len(beta0)
    keep = [i for i in (0, 1) if free_sd[i]]

    def unpack(x):
        sd = np.zeros(2)
        sd[keep] = x[:len(keep)]
        return x[len(keep):], sd

    def f(x):
        beta, sd = unpack(x)
        return deviance(d, beta, sd)

    x0 = np.r_[np.maximum(np.asarray(sd0, float)[keep], 0.0), np.asarray(beta0, float)]
    bounds = [(0.0, None)] * len(keep) + [(None, None)] * p
    r = optimize.minimize(f, x0, method="L-BFGS-B", bounds=bounds,
                          options={"ftol": 1e-13, "gtol": 1e-8, "maxiter": 500, "maxfun": 20_000})
    x, best = r.x, float(r.fun)
    # a final Newton step on the parameters off the boundary (L-BFGS-B stops on its own tolerance)
    inside = [i for i in range(len(x)) if i >= len(keep) or x[i] > 1e-4]
    H, gr = _fd(f, x, inside)
    try:
        step = np.linalg.solve(H, gr)
        for t in (1.0, 0.5, 0.25):
            y = x.copy()
            y[inside] -= t * step
            y[:len(keep)] = np.maximum(y[:len(keep)], 0.0)
            fy = f(y)
            if fy < best:
                x, best = y, fy
                break
    except np.linalg.LinAlgError:
        pass
    beta, sd = unpack(x)
    sd = np.where(sd < 1e-7, 0.0, sd)  # at the boundary: exactly 0, as lme4 reports it
    return {"beta": beta, "sd": sd, "deviance": deviance(d, beta, sd), "start_deviance": f(x0)}


def _fd(f, x: np.ndarray, idx: list[int], h: float = 1e-4) -> tuple[np.ndarray, np.ndarray]:
    """Central finite-difference Hessian and gradient of f at x over the coordinates idx."""
    k = len(idx)
    H, g = np.zeros((k, k)), np.zeros(k)
    f0 = f(x)
    e = [np.eye(len(x))[i] * h for i in idx]
    fp = [f(x + ei) for ei in e]
    fm = [f(x - ei) for ei in e]
    for a in range(k):
        g[a] = (fp[a] - fm[a]) / (2 * h)
        H[a, a] = (fp[a] - 2 * f0 + fm[a]) / h ** 2
        for b in range(a):
            H[a, b] = H[b, a] = (f(x + e[a] + e[b]) - fp[a] - fp[b] + 2 * f0 - fm[a] - fm[b]
                                 + f(x - e[a] - e[b])) / (2 * h ** 2)
    return H, g


def fixed_covariance(d: Data, beta: np.ndarray, sd: np.ndarray) -> np.ndarray:
    """Covariance of beta: 2 x the inverse Hessian of the deviance over (SDs off 0, beta), beta's block
    (lme4's vcov with use.hessian = TRUE; an SD at 0 is held there, as in the model without it)."""
    free = [i for i in (0, 1) if sd[i] >= 1e-4]  # below lme4's isSingular tolerance: held, as at 0
    x = np.r_[sd[free], beta]

    def f(v):
        s = np.zeros(2)
        s[free] = v[:len(free)]
        return deviance(d, v[len(free):], s)

    H, _ = _fd(f, x, list(range(len(x))))
    cov = 2 * np.linalg.inv(H)
    return cov[len(free):, len(free):]
