"""Human-like timing of witness replies (SPEC §1).

- `reply_delay`: how long after the interrogator's message an AI witness's reply is shown:
  ``base_s + s_per_char * n_chars + Gamma(shape, scale) [+ read_s_per_char * prev_chars]``,
  capped at ``max_s`` when set.
- `typing_delay`: when the "typing…" indicator appears: ``typing_min_s + U(0, typing_jitter_s)``.
- `hold_for`: the remaining wait once the model has answered, so the model's own latency is
  absorbed into the designed delay instead of added on top.

`rng` is a ``numpy.random.Generator`` or a stdlib ``random.Random``; seed it for
reproducible games.
"""

from __future__ import annotations

import random
from typing import TYPE_CHECKING, Callable, Union

import numpy as np

if TYPE_CHECKING:
    from turinglab.game.config import Rules, Timing

Rng = Union[np.random.Generator, random.Random]


def _gamma(rng: Rng, shape: float, scale: float) -> float:
    if isinstance(rng, random.Random):
        return rng.gammavariate(shape, scale)  # stdlib: alpha=shape, beta=scale
    return float(rng.gamma(shape, scale))


def _uniform(rng: Rng, low: float, high: float) -> float:
    return float(rng.uniform(low, high))


def delay_for(timing: "Timing", rng: Rng, prev_chars: int = 0) -> Callable[[int], float]:
    """The designed delay as a function of the reply's length, with its random part drawn now.

    Drawn before the reply exists, so a witness that streams its reply knows, at every word,
    when the text so far would be due (deadline-aware generation). Same distribution as
    `reply_delay`, which is ``delay_for(...)(n_chars)``.
    """
    if prev_chars < 0:
        raise ValueError(f"character counts must be >= 0 (got prev_chars={prev_chars})")
    fixed = timing.base_s + timing.read_s_per_char * prev_chars + _gamma(rng, timing.gamma_shape, timing.gamma_scale)

    def delay(n_chars: int) -> float:
        if n_chars < 0:
            raise ValueError(f"character counts must be >= 0 (got n_chars={n_chars})")
        d = fixed + timing.s_per_char * n_chars
        return d if timing.max_s is None else min(d, timing.max_s)

    return delay


def reply_delay(n_chars: int, timing: "Timing", rng: Rng, prev_chars: int = 0) -> float:
    """Seconds from the interrogator's message to showing a reply of `n_chars` characters.

    `prev_chars` is the length of the interrogator's message (reading time, when
    `timing.read_s_per_char` > 0).
    """
    if n_chars < 0 or prev_chars < 0:
        raise ValueError(f"character counts must be >= 0 (got n_chars={n_chars}, prev_chars={prev_chars})")
    return delay_for(timing, rng, prev_chars)(n_chars)


def mean_delay(n_chars: int, timing: "Timing", prev_chars: int = 0) -> float:
    """`reply_delay` without its random part (the Gamma's mean): when a reply of `n_chars` is due
    on average. A live game regenerates a blocked or persona-breaking reply only within it."""
    d = (timing.base_s + timing.s_per_char * n_chars + timing.read_s_per_char * prev_chars
         + timing.gamma_shape * timing.gamma_scale)
    return min(d, timing.max_s) if timing.max_s is not None else d


def typing_delay(rules: "Rules", rng: Rng) -> float:
    """Seconds from the interrogator's message to the "typing…" indicator."""
    return rules.typing_min_s + _uniform(rng, 0.0, rules.typing_jitter_s)


def hold_for(designed_delay_s: float, elapsed_s: float) -> float:
    """What is left to wait: the designed delay minus time already spent (never negative)."""
    return max(0.0, designed_delay_s - elapsed_s)
