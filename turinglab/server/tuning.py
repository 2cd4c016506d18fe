"""Process settings for a long-running server.

The garbage collector's full collections pause the event loop (tens to hundreds of
milliseconds once a server holds many games); with these settings they are rare. Memory is still
reclaimed by reference counting; only reference cycles wait longer. `turinglab serve` and the
benchmark call `tune_gc()` once at start.
"""

from __future__ import annotations

import gc


def tune_gc(gen0: int = 100_000, gen1: int = 50, gen2: int = 1000) -> None:
    gc.freeze()  # what is alive at start (imports, config) is never scanned again
    gc.set_threshold(gen0, gen1, gen2)
