"""Exact inference and pass criteria for Turing tests: pure functions over counts.

See docs in each module; the main entry points are re-exported here.
"""

from .bayes import beta_posterior, confidence_sequence
from .binomial import binom_pvalue, blaker_pvalue
from .criteria import binom_test, pass_size, three_player, two_player, two_sample_test
from .intervals import METHODS, interval
from .power import power
from .ratio import RATIO_METHODS
from .results import (
    BetaPosterior,
    BinomResult,
    ConfidenceSequence,
    DPrimeResult,
    Estimate,
    IntervalSet,
    PowerResult,
    ThreePlayerResult,
    TwoPlayerResult,
    decide,
)
from .sdt import dprime, dprime_2afc

__all__ = [
    "METHODS",
    "RATIO_METHODS",
    "BetaPosterior",
    "BinomResult",
    "ConfidenceSequence",
    "DPrimeResult",
    "Estimate",
    "IntervalSet",
    "PowerResult",
    "ThreePlayerResult",
    "TwoPlayerResult",
    "beta_posterior",
    "binom_pvalue",
    "binom_test",
    "blaker_pvalue",
    "confidence_sequence",
    "decide",
    "dprime",
    "dprime_2afc",
    "interval",
    "pass_size",
    "power",
    "three_player",
    "two_player",
    "two_sample_test",
]
