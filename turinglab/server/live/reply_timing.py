"""When a witness's reply to a question may show (docs/protocol.md): one rule for human and AI witnesses."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from turinglab.witnesses import timing


def designed_delay(t: Any, rng: Any, question: str, typing_ms: int, typing_min_s: float) -> Callable[[int], int]:
    """The designed delay (ms after the question) of a reply of n characters under Timing `t`
    (None: delays off, benchmarks), its random part drawn now from `rng`: known before the reply
    is written, for deadline-aware generation. Never before "typing…" (shown `typing_ms` after
    the question) has shown for a plausible time (the same rule for every witness)."""
    if t is None:
        return lambda n: 0
    delay = timing.delay_for(t, rng, prev_chars=len(question))
    floor = typing_ms + round(1000 * typing_min_s)
    return lambda n: max(round(1000 * delay(n)), floor)


def not_before(shown_ms: int | None, typing_min_s: float) -> int:
    """Host ms before which no reply shows: typing_min_s after its indicator really showed
    (`shown_ms`; later than planned when its commit was slow), so the rule holds under load."""
    return 0 if shown_ms is None else shown_ms + round(1000 * typing_min_s)
