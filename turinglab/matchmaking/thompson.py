"""Choosing an AI witness: Thompson sampling (Jones & Bergen) or uniform.

Each witness has confidence-weighted wins w and losses l (a win is a verdict that the
witness is human; its weight is the confidence's place on the study's scale,
(c - min) / (max - min): c / 100 on 0-100, (c + 100) / 200 on -100..100). Thompson sampling draws
x_i ~ Beta(w_i + 1, l_i + 1) for every witness and takes the largest. Since this makes some
witnesses play far more games than others, the probability with which the chosen witness
was picked is estimated (Monte Carlo, seeded) and stored with the game.

Allocation floor: pure Thompson sampling can starve a weak witness (12 games of 1 500), which
leaves its inverse-probability-weighted estimate unusable. So a share ``floor`` of AI games
picks a witness uniformly and the rest by Thompson sampling; every witness then has a
selection probability of at least floor / (number of witnesses), and the stored probability
is the exact mixture floor / m + (1 - floor) * P(Thompson picks it).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from scipy import integrate, stats

DEFAULT_FLOOR = 0.2  # share of AI games allocated uniformly (see the module docstring)


@dataclass
class Tally:
    """Confidence-weighted wins and losses of one witness, plus raw counts."""

    wins: float = 0.0
    losses: float = 0.0
    games: int = 0
    judged_human: int = 0

    @property
    def success_rate(self) -> float | None:
        return self.judged_human / self.games if self.games else None


@dataclass
class WitnessStats:
    """Tallies of every AI witness of a study, keyed by codename (order is kept)."""

    tallies: dict[str, Tally] = field(default_factory=dict)

    @classmethod
    def for_codenames(cls, codenames: list[str]) -> "WitnessStats":
        return cls({c: Tally() for c in codenames})

    def record(self, codename: str, judged_human: bool, confidence: float,
               scale: tuple[float, float] = (0, 100)) -> None:
        """Add one verdict about `codename`; `scale` is the study's (confidence_min, confidence_max):
        the weight is the confidence's place on it (0 at the bottom, 1 at the top), or on a
        directional scale (-100..100) how far towards its end the verdict was (|c| / 100)."""
        from turinglab.game.config import confidence_weight

        weight = confidence_weight(confidence, scale)
        t = self.tallies.setdefault(codename, Tally())
        if judged_human:
            t.wins += weight
            t.judged_human += 1
        else:
            t.losses += weight
        t.games += 1

    def params(self, codenames: list[str]) -> tuple[np.ndarray, np.ndarray]:
        """Beta parameters (alpha, beta) for the given witnesses."""
        ts = [self.tallies.get(c, Tally()) for c in codenames]
        return np.array([t.wins + 1 for t in ts]), np.array([t.losses + 1 for t in ts])


def thompson_choice(
    stats_: WitnessStats, codenames: list[str], rng: np.random.Generator
) -> int:
    """Index of the witness with the largest Beta draw."""
    a, b = stats_.params(codenames)
    return int(np.argmax(rng.beta(a, b)))


def selection_probabilities_mc(
    stats_: WitnessStats, codenames: list[str], draws: int = 2000, seed: int = 0
) -> np.ndarray:
    """Monte Carlo estimate of P(each witness has the largest draw), seeded."""
    rng = np.random.default_rng(seed)
    a, b = stats_.params(codenames)
    x = rng.beta(a[None, :], b[None, :], size=(draws, len(codenames)))
    counts = np.bincount(np.argmax(x, axis=1), minlength=len(codenames))
    return counts / draws


def selection_probabilities_exact(stats_: WitnessStats, codenames: list[str]) -> np.ndarray:
    """P(witness i has the largest draw) = ∫ f_i(x) Π_{j≠i} F_j(x) dx, by quadrature.

    An independent reference for the Monte Carlo estimate.
    """
    a, b = stats_.params(codenames)
    dists = [stats.beta(ai, bi) for ai, bi in zip(a, b)]
    out = []
    for i, di in enumerate(dists):
        others = [d for j, d in enumerate(dists) if j != i]

        def f(x: float, di=di, others=others) -> float:
            return float(di.pdf(x) * np.prod([d.cdf(x) for d in others]))

        val, _ = integrate.quad(f, 0.0, 1.0, limit=200, points=[float(di.mean())])
        out.append(val)
    return np.array(out)


def choose_witness(
    policy: str,
    stats_: WitnessStats,
    codenames: list[str],
    rng: np.random.Generator,
    prob_draws: int = 2000,
    floor: float = DEFAULT_FLOOR,
) -> tuple[str, float]:
    """Pick one AI witness; return its codename and the probability it had of being picked.

    floor: share of picks made uniformly (Thompson only); 0 is pure Thompson sampling.
    """
    if not codenames:
        raise ValueError("no AI witness configured: add one to the study's 'witnesses'")
    if policy == "uniform" or len(codenames) == 1:
        i = int(rng.integers(len(codenames)))
        return codenames[i], 1.0 / len(codenames)
    if policy != "thompson":
        raise ValueError(f"unknown witness policy {policy!r}: use 'thompson' or 'uniform'")
    if not 0.0 <= floor <= 1.0:
        raise ValueError(f"the allocation floor must be between 0 and 1, got {floor}")
    m = len(codenames)
    if floor > 0 and rng.random() < floor:
        i = int(rng.integers(m))
    else:
        i = thompson_choice(stats_, codenames, rng)
    seed = int(rng.integers(2**31))
    probs = selection_probabilities_mc(stats_, codenames, draws=prob_draws, seed=seed)
    # the chosen witness had a positive chance; a zero estimate means too few draws
    ts = max(float(probs[i]), 1.0 / prob_draws)
    return codenames[i], floor / m + (1.0 - floor) * ts
