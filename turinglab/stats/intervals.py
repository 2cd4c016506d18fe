"""Confidence sets for a binomial rate: exact Sterne and Blaker sets, and the usual intervals.

Sterne's set (Giunti's footnote 7) and Blaker's set are the p0 not rejected by the
corresponding two-sided exact test. They are computed exactly, without a grid:

1. The p-value as a function of p0 is P(p0) = F(lo; p0) + S(hi - 1; p0), where the counted
   set {0..lo} U {hi..n} only changes at finitely many breakpoints. For Sterne these are in
   closed form: outcome j joins or leaves the counted set where pmf(j) = pmf(k) exactly,
   i.e. logit(p0) = (log C(n, k) - log C(n, j)) / (j - k). No tie tolerance is used here (the
   1e-7 of a p-value at a given float p0 would move a bound by ~1e-9 and could carry it
   across a threshold: 60 of 100 has the exact set [0.5, 0.6945], which passes 0.5). For
   Blaker they are found by bisection (each is a single crossing of two tail probabilities).
2. Between two breakpoints P is quasi-convex: its derivative n*b(hi-1; n-1) - n*b(lo; n-1)
   changes sign once, at a p* known in closed form. So on each piece the accepted set is the
   piece minus at most one open interval around p*, found by brentq to a relative 4 * eps
   (an absolute tolerance would leave a bound of 5e-11 at n = 10^9 right to 6.5e-6 only).
3. Accepted parts of adjacent pieces are merged. At a breakpoint P takes the larger of its
   two one-sided limits, so the accepted set is closed.

Only p0 that could possibly be accepted are examined (pmf(k) * (n + 1) * (1 + 1e-7) >= alpha
for Sterne, the Clopper-Pearson interval for Blaker). For Sterne that range still holds ~sqrt(n)
breakpoints, so it is cut into chunks that are surely rejected or accepted by bounds on the
p-value (see _sterne_chunked) and only the chunks near the bounds are walked: ~log(n) work. For
k = 0 (k = n) every p0 with pmf(k) >= alpha is accepted without looking, so the examined range
holds only a few dozen outcomes even at n = 10^9.
"""

from __future__ import annotations

import math

import numpy as np
from scipy import optimize, special  # not scipy.stats: it alone doubles the CLI start-up

from .binomial import (
    LOG_RTOL,
    RTOL,
    blaker_split,
    cdf,
    sf,
    check_alpha,
    check_counts,
    counted_pvalue,
    log_choose,
    sterne_split,
    two_sided_pvalues,
)
from .results import IntervalSet

METHODS = ("sterne", "blaker", "clopper-pearson", "wilson", "jeffreys")
# brentq stops at |error| < xtol + rtol * |x|: xtol negligible, so every bound, however
# small, is found to a relative 4 * eps (scipy's least rtol)
_XTOL = 1e-300
_RTOL = 4 * np.finfo(float).eps
_WAYS = 8  # parts a chunk is cut into
_CHUNK = 64  # breakpoints a chunk may hold before it goes through the exact walk


def check_method(method: str) -> str:
    if method not in METHODS:
        raise ValueError(f"unknown method {method!r}; use {'|'.join(METHODS)}")
    return method


# --- the exact engine ---------------------------------------------------------------------


def _log_pmf_k(k: int, n: int, p: float) -> float:
    return float(log_choose(n, k)) + special.xlogy(k, p) + special.xlog1py(n - k, -p)


def _sterne_range(k: int, n: int, alpha: float) -> tuple[float, float]:
    """p0 outside this range have pmf(k) too small for the p-value to reach alpha."""
    thr = math.log(alpha / ((n + 1) * (1 + RTOL))) - 1e-9
    mle = k / n
    g = lambda p: _log_pmf_k(k, n, p) - thr  # noqa: E731
    a = 0.0 if k == 0 else optimize.brentq(g, 0.0, mle, xtol=_XTOL, rtol=_RTOL)
    b = 1.0 if k == n else optimize.brentq(g, mle, 1.0, xtol=_XTOL, rtol=_RTOL)
    # widen by the root's own tolerance, so the range surely holds every accepted p
    return max(0.0, a * (1 - 4 * _RTOL)), min(1.0, b * (1 + 4 * _RTOL))


def _sterne_breakpoints(k: int, n: int, a: float, b: float) -> tuple[np.ndarray, np.ndarray]:
    """Breakpoints in (a, b) and the outcome j that changes status at each, sorted by p.

    Outcome j > k is counted iff p <= p_j and j < k iff p >= p_j (closed form). Only outcomes
    whose status differs between a and b, or that sit next to k, lo or hi, can have p_j there.
    """
    ends = np.array([max(a, 1e-300), min(b, 1 - 1e-16)])
    lo, hi = sterne_split(k, n, ends, 0.0)
    window = np.concatenate(
        [np.arange(k - 2, k + 3), np.arange(lo.min() - 2, lo.max() + 3), np.arange(hi.min() - 2, hi.max() + 3)]
    )
    j = np.unique(window[(window >= 0) & (window <= n) & (window != k)]).astype(float)
    t = (log_choose(n, k) - log_choose(n, j)) / (j - k)
    p = special.expit(t)
    keep = (p > a) & (p < b)
    order = np.argsort(p[keep], kind="stable")
    return p[keep][order], j[keep][order].astype(np.int64)


def _walk_states(k: int, n: int, edges: np.ndarray, bp: np.ndarray, bj: np.ndarray):
    """(lo, hi) on each segment between consecutive edges, by updating across breakpoints.

    Crossing p_j upwards, j > k leaves the counted set {0..lo} U {hi..n} and j < k joins it;
    contiguity means only lo or hi moves. Returns None if the bookkeeping ever disagrees.
    """
    lo0, hi0 = sterne_split(k, n, 0.5 * (edges[0] + edges[1]), 0.0)
    lo, hi = int(lo0[0]), int(hi0[0])
    nseg = len(edges) - 1
    los, his = np.empty(nseg, np.int64), np.empty(nseg, np.int64)
    los[0], his[0] = lo, hi
    seg, i = 0, 0
    bpl, bjl, edl = bp.tolist(), bj.tolist(), edges.tolist()
    for seg in range(1, nseg):
        edge = edl[seg]
        while i < len(bpl) and bpl[i] <= edge:
            j = bjl[i]
            if j > k:  # leaves
                if hi == n + 1 and lo == n:  # everything was counted: j opens the gap
                    lo, hi = j - 1, j + 1
                elif j == hi:
                    hi += 1
                elif j == lo:
                    lo -= 1
                else:
                    return None
            else:  # joins
                if j == lo + 1:
                    lo += 1
                elif j == hi - 1:
                    hi -= 1
                else:
                    return None
            if hi == lo + 1:  # everything counted: canonical form
                lo, hi = n, n + 1
            i += 1
        los[seg], his[seg] = lo, hi
    return los, his


def _blaker_breakpoints(k: int, n: int, a: float, b: float) -> np.ndarray:
    """Where an outcome joins or leaves Blaker's counted set, inside (a, b)."""
    lo, hi = blaker_split(k, n, np.array([a + (b - a) * 1e-12, b - (b - a) * 1e-12]))
    cand = np.unique(
        np.concatenate(
            [
                np.arange(min(lo) - 2, max(lo) + 3),
                np.arange(min(hi) - 2, max(hi) + 3),
            ]
        )
    )
    cand = cand[(cand >= 0) & (cand <= n) & (cand != k)].astype(float)
    if cand.size == 0:
        return cand

    def counted(v, p):
        gv = np.minimum(cdf(v, n, p), sf(v - 1, n, p))
        gk = np.minimum(cdf(k, n, p), sf(k - 1, n, p))
        return gv <= gk * (1 + RTOL)

    left = np.full(cand.shape, a)
    right = np.full(cand.shape, b)
    at_a, at_b = counted(cand, left), counted(cand, right)
    change = at_a != at_b
    cand, left, right, at_a = cand[change], left[change], right[change], at_a[change]
    for _ in range(1100):  # bisection to float resolution, relative (a tiny bound needs ~100 steps)
        mid = 0.5 * (left + right)
        same = counted(cand, mid) == at_a
        left = np.where(same, mid, left)
        right = np.where(same, right, mid)
        if np.all(right - left <= _RTOL * right):
            break
    return right


def _accepted_pieces(k: int, n: int, alpha: float, kind: str) -> list[tuple[float, float]]:
    if kind == "blaker":
        a, b = _clopper_pearson(k, n, alpha / (1 + RTOL))
        return _merge(_exact_pieces(k, n, alpha, kind, a, b))
    sure: list[tuple[float, float]] = []
    a, b = _sterne_range(k, n, alpha)
    # the p-value is at least pmf(k); at k = 0 (k = n) that alone accepts [0, c] ([1 - c, 1])
    if k == 0:
        c = float(-np.expm1(math.log(alpha) / n))
        if c < b:
            sure, a = [(0.0, c)], c
    elif k == n:
        c = float(np.exp(math.log(alpha) / n))
        if c > a:
            sure, b = [(c, 1.0)], c
    return _merge(sure + _sterne_chunked(k, n, alpha, a, b))


def _sterne_chunked(k: int, n: int, alpha: float, a: float, b: float) -> list[tuple[float, float]]:
    """Sterne's accepted set in [a, b] without visiting every breakpoint.

    As p grows, outcomes below k only join the counted set A(p) and outcomes above k only
    leave it, so on [u, v] every A(p) lies between A(u) & A(v) and A(u) | A(v); with F
    falling and S rising in p, the p-value on [u, v] is at most F(max lo; u) + S(min hi - 1; v)
    and at least F(min lo; v) + S(max hi - 1; u) (widened by one outcome for float ties).
    Chunks are halved until they are surely rejected, surely accepted, or hold at most
    CHUNK breakpoints; only those last ones go through the exact walk. The work is then
    ~log(n) bisections instead of ~sqrt(n) breakpoints.
    """
    u = np.array([a])
    v = np.array([b])
    lu, hu = sterne_split(k, n, np.maximum(u, 1e-300), 0.0)
    lv, hv = sterne_split(k, n, np.minimum(v, 1 - 1e-16), 0.0)
    out: list[tuple[float, float]] = []
    exact: list[tuple[float, float]] = []
    for _ in range(80):
        if u.size == 0:
            break
        lmax, hmin = np.maximum(lu, lv) + 1, np.minimum(hu, hv) - 1
        lmin, hmax = np.minimum(lu, lv) - 1, np.maximum(hu, hv) + 1
        upper = np.where(hmin <= lmax + 1, 1.0, cdf(lmax, n, u) + sf(hmin - 1, n, v))
        lower = np.where(hmax <= lmin + 1, 1.0, cdf(lmin, n, v) + sf(hmax - 1, n, u))
        nbp = np.abs(lv - lu) + np.abs(hv - hu)
        accept = lower >= alpha * (1 + 1e-12)
        reject = (upper < alpha * (1 - 1e-12)) & ~accept
        small = ~accept & ~reject & ((nbp <= _CHUNK) | (v - u <= 1e-13 * v))
        out += list(zip(u[accept].tolist(), v[accept].tolist()))
        exact += list(zip(u[small].tolist(), v[small].tolist()))
        split = ~(accept | reject | small)
        u, v, lu, hu, lv, hv = (x[split] for x in (u, v, lu, hu, lv, hv))
        # cut each into _WAYS parts at once (fewer rounds of the vectorised bisection)
        f = np.arange(1, _WAYS) / _WAYS
        m = (u[:, None] + (v - u)[:, None] * f).ravel()
        lm, hm = sterne_split(k, n, m, 0.0) if m.size else (m.astype(np.int64), m.astype(np.int64))
        lm, hm = lm.reshape(-1, _WAYS - 1), hm.reshape(-1, _WAYS - 1)
        pts = np.column_stack([u, m.reshape(-1, _WAYS - 1), v])
        los, his = np.column_stack([lu, lm, lv]), np.column_stack([hu, hm, hv])
        u, v = pts[:, :-1].ravel(), pts[:, 1:].ravel()
        lu, hu, lv, hv = los[:, :-1].ravel(), his[:, :-1].ravel(), los[:, 1:].ravel(), his[:, 1:].ravel()
    for x, y in list(zip(u.tolist(), v.tolist())) + exact:
        out += _exact_pieces(k, n, alpha, "sterne", x, y)
    return out


def _exact_pieces(k: int, n: int, alpha: float, kind: str, a: float, b: float) -> list[tuple[float, float]]:
    """The accepted parts of [a, b], breakpoint by breakpoint (unmerged)."""
    states = None
    if kind == "sterne":
        bp, bj = _sterne_breakpoints(k, n, a, b)
        edges = np.unique(np.concatenate([[a], bp, [b]]))
        if len(edges) > 2:
            states = _walk_states(k, n, edges, bp, bj)
        split = sterne_split
    else:
        edges = np.unique(np.concatenate([[a], _blaker_breakpoints(k, n, a, b), [b]]))
        split = blaker_split
    s, e = edges[:-1], edges[1:]
    if states is None:
        mid = 0.5 * (s + e)
        lo, hi = split(k, n, mid, 0.0) if kind == "sterne" else split(k, n, mid)
    else:
        lo, hi = states
    ps = counted_pvalue(lo, hi, n, s)
    if states is not None:
        # at a Sterne breakpoint the limits differ by the changed outcomes, each of probability
        # pmf(k) * (1 + 1e-7) there: pe[i] = ps[i + 1] + (leaving - joining) * that
        leaving = np.searchsorted(bp[bj > k], e[:-1], side="right") - np.searchsorted(bp[bj > k], s[:-1], side="right")
        joining = np.searchsorted(bp[bj < k], e[:-1], side="right") - np.searchsorted(bp[bj < k], s[:-1], side="right")
        lpk = log_choose(n, k) + special.xlogy(k, e[:-1]) + special.xlog1py(n - k, -e[:-1])
        pe = np.empty_like(ps)
        pe[:-1] = ps[1:] + (leaving - joining) * np.exp(lpk)
        pe[-1] = counted_pvalue(lo[-1:], hi[-1:], n, e[-1:])[0]
    else:
        pe = counted_pvalue(lo, hi, n, e)

    # the minimum of each piece: derivative n*b(hi-1; n-1, p) - n*b(lo; n-1, p) = 0
    both = (lo >= 0) & (hi <= n) & (hi - 1 > lo)
    pstar = np.full(s.shape, np.nan)
    if both.any():
        l1, h1 = lo[both].astype(float), hi[both].astype(float) - 1
        t = (log_choose(n - 1, l1) - log_choose(n - 1, h1)) / (h1 - l1)
        pstar[both] = special.expit(t)
    inside = (pstar > s) & (pstar < e)
    pmin = np.full(s.shape, np.inf)
    if inside.any():
        pmin[inside] = counted_pvalue(lo[inside], hi[inside], n, pstar[inside])
    whole = (ps >= alpha) & (pe >= alpha) & (pmin >= alpha)
    out: list[tuple[float, float]] = list(zip(s[whole].tolist(), e[whole].tolist()))
    partial = ~whole & ((ps >= alpha) | (pe >= alpha))
    for i in np.flatnonzero(partial):  # only pieces where the p-value crosses alpha
        lo_i, hi_i, s_i, e_i = int(lo[i]), int(hi[i]), float(s[i]), float(e[i])
        f = lambda p: float(counted_pvalue(lo_i, hi_i, n, p)) - alpha  # noqa: E731
        left_end = float(pstar[i]) if inside[i] else e_i
        right_start = float(pstar[i]) if inside[i] else s_i
        if ps[i] >= alpha:
            out.append((s_i, optimize.brentq(f, s_i, left_end, xtol=_XTOL, rtol=_RTOL)))
        if pe[i] >= alpha:
            out.append((optimize.brentq(f, right_start, e_i, xtol=_XTOL, rtol=_RTOL), e_i))
    return out


def _merge(pieces: list[tuple[float, float]]) -> list[tuple[float, float]]:
    """Union of closed intervals, as sorted disjoint pieces (touching pieces are joined)."""
    if not pieces:
        return []
    arr = np.array(sorted(pieces), dtype=float)
    reach = np.maximum.accumulate(arr[:, 1])
    new = np.concatenate([[True], arr[1:, 0] > reach[:-1]])
    starts = arr[new, 0]
    ends = np.append(reach[np.flatnonzero(new)[1:] - 1], reach[-1])
    return list(zip(starts.tolist(), ends.tolist()))


def _grid_pieces(k: int, n: int, alpha: float, kind: str, step: float) -> list[tuple[float, float]]:
    """Giunti's footnote 7: walk out from k/n (rounded to the grid) and keep the last accepted point."""
    if not (isinstance(step, (int, float)) and 0 < step < 1):
        raise ValueError(f"grid_step must be a number strictly between 0 and 1 (e.g. 0.01), got {step!r}")
    digits = max(0, -math.floor(math.log10(step))) + 3
    c = round(round(k / n / step) * step, digits)

    def accepted(p: float) -> bool:
        return float(two_sided_pvalues(k, n, p, kind)[0]) >= alpha

    if not accepted(c):
        raise ValueError(
            f"the grid point nearest k/n ({c:g}) is itself rejected: grid_step {step:g} is too coarse, use a finer one"
        )

    def walk(direction: int) -> float:
        last, i = c, 1
        while True:
            p = round(c + direction * i * step, digits)
            if p < 0 or p > 1 or not accepted(p):
                return last
            last, i = p, i + 1

    return [(walk(-1), walk(+1))]


# --- the usual intervals ----------------------------------------------------------------------


def _clopper_pearson(k: int, n: int, alpha: float) -> tuple[float, float]:
    lo = 0.0 if k == 0 else float(special.betaincinv(k, n - k + 1, alpha / 2))
    hi = 1.0 if k == n else float(special.betainccinv(k + 1, n - k, alpha / 2))
    return lo, hi


def _wilson(k: int, n: int, alpha: float) -> tuple[float, float]:
    z = float(-special.ndtri(alpha / 2))
    phat = k / n
    centre = (phat + z * z / (2 * n)) / (1 + z * z / n)
    half = z / (1 + z * z / n) * math.sqrt(phat * (1 - phat) / n + z * z / (4 * n * n))
    return max(0.0, centre - half), min(1.0, centre + half)


def _jeffreys(k: int, n: int, alpha: float) -> tuple[float, float]:
    """Equal-tailed Beta(k + 1/2, n - k + 1/2) interval (no boundary modification)."""
    a, b = k + 0.5, n - k + 0.5
    return float(special.betaincinv(a, b, alpha / 2)), float(special.betainccinv(a, b, alpha / 2))


def interval(
    k: int, n: int, alpha: float = 0.05, method: str = "sterne", grid_step: float | None = None
) -> IntervalSet:
    """The 1 - alpha confidence set for a binomial rate from k successes in n trials.

    method: ``sterne`` (default; Giunti's choice), ``blaker``, ``clopper-pearson``, ``wilson``,
    ``jeffreys``. Sterne and Blaker sets may have gaps: ``pieces`` lists them, ``low``/``high``
    give the hull and ``is_interval`` says whether it is one interval. With ``grid_step``
    (Sterne/Blaker only) the paper's grid walk is reproduced instead of the exact set.
    """
    k, n = check_counts(k, n)
    alpha = check_alpha(alpha)
    check_method(method)
    name = method
    if grid_step is not None:
        if method not in ("sterne", "blaker"):
            raise ValueError("grid_step only applies to the exact methods sterne and blaker")
        pieces = _grid_pieces(k, n, alpha, method, grid_step)
        name = f"{method} (grid step {grid_step:g})"
    elif method in ("sterne", "blaker"):
        pieces = _accepted_pieces(k, n, alpha, method)
    else:
        f = {"clopper-pearson": _clopper_pearson, "wilson": _wilson, "jeffreys": _jeffreys}[method]
        pieces = [f(k, n, alpha)]
    return IntervalSet(
        method=name,
        low=pieces[0][0],
        high=pieces[-1][1],
        pieces=tuple((float(a), float(b)) for a, b in pieces),
        is_interval=len(pieces) == 1,
        alpha=alpha,
    )


def one_sided_interval(k: int, n: int, alpha: float, alternative: str) -> IntervalSet:
    """Exact one-sided (Clopper-Pearson) bound: the p0 not rejected by the one-sided test."""
    if alternative == "greater":  # H1: p > p0; the set is [lower bound, 1]
        pieces = [(0.0 if k == 0 else float(special.betaincinv(k, n - k + 1, alpha)), 1.0)]
    else:
        pieces = [(0.0, 1.0 if k == n else float(special.betainccinv(k + 1, n - k, alpha)))]
    return IntervalSet(f"clopper-pearson one-sided ({alternative})", pieces[0][0], pieces[0][1], tuple(pieces), True, alpha)
