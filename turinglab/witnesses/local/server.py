"""One xllamacpp OpenAI-compatible server per process, on a loopback port, started lazily.

Every local witness of the process talks to it through the same OpenAI client code as remote
models. Defaults suit a small shared machine: 1 thread (``TURINGLAB_LOCAL_THREADS``; on 2 busy
cores 2 threads were far slower), a few slots (``TURINGLAB_LOCAL_SLOTS``) so that concurrent
games each keep their prompt cache, 2048 tokens of context per slot. Each game holds one slot
(`lease_slot`): a prompt read from cold takes ~10 s on one thread and stalls the other slots'
generation meanwhile, so games must not evict each other's prompts.
"""

from __future__ import annotations

import asyncio
import atexit
import gc
import logging
import os
import threading
import time
from pathlib import Path

from turinglab.witnesses.local.weights import model_path

log = logging.getLogger("turinglab.witnesses")

MODEL_ALIAS = "local"


def _env_int(name: str, default: int) -> int:
    raw = os.environ.get(name)
    if not raw:
        return default
    try:
        value = int(raw)
    except ValueError:
        raise ValueError(f"{name}={raw!r} is not an integer") from None
    if value < 1:
        raise ValueError(f"{name}={raw!r} must be at least 1")
    return value


class LocalServer:
    """The xllamacpp server for one GGUF file; `base_url` is its OpenAI-compatible /v1 root."""

    def __init__(
        self,
        gguf: Path | None = None,
        *,
        threads: int | None = None,
        slots: int | None = None,
        ctx_per_slot: int = 2048,
    ) -> None:
        self.gguf = gguf
        self.threads = threads or _env_int("TURINGLAB_LOCAL_THREADS", 1)
        self.slots = slots or _env_int("TURINGLAB_LOCAL_SLOTS", 4)
        self.ctx_per_slot = ctx_per_slot
        self._server = None
        self._address: str | None = None
        self._lock = threading.Lock()
        self.load_s: float | None = None
        self._leases = [0] * self.slots  # games holding each slot
        self._last: list[str | None] = [None] * self.slots  # whose prompt each slot last read

    def lease_slot(self, key: str) -> int:
        """A slot for one game of witness `key`, kept for the game (each request names it:
        ``id_slot``), so the slot's prompt cache holds this game's conversation and no other
        game evicts it. The least-held slot, preferring one that last read `key`'s prompt
        (then only the game's own times at the prompt's end are read again)."""
        with self._lock:
            k = min(range(self.slots), key=lambda i: (self._leases[i], self._last[i] != key, i))
            self._leases[k] += 1
            self._last[k] = key
            return k

    def mark_slot(self, k: int, key: str) -> None:
        """Slot `k` has read witness `key`'s prompt (a warm-up)."""
        with self._lock:
            self._last[k] = key

    def free_slot(self, k: int) -> None:
        with self._lock:
            if 0 <= k < self.slots and self._leases[k] > 0:
                self._leases[k] -= 1

    @property
    def running(self) -> bool:
        return self._server is not None

    def start(self) -> str:
        """Start (if needed) and return the base URL, e.g. ``http://127.0.0.1:40123/v1``."""
        with self._lock:
            if self._server is None:
                import xllamacpp

                path = self.gguf or model_path()
                p = xllamacpp.CommonParams()
                p.model.path = str(path)
                p.model_alias = MODEL_ALIAS
                p.hostnames = ["127.0.0.1"]
                p.port = 0  # any free loopback port
                p.n_parallel = self.slots
                p.n_ctx = self.slots * self.ctx_per_slot
                p.cpuparams.n_threads = self.threads
                p.cpuparams_batch.n_threads = self.threads
                p.cache_prompt = True
                p.warmup = False
                p.verbosity = -1
                t0 = time.monotonic()
                log.info("loading the local model %s (%.2f GB) on %d thread(s)...",
                         path, Path(path).stat().st_size / 1e9, self.threads)
                self._server = xllamacpp.Server(p)
                self.load_s = time.monotonic() - t0
                log.info("local model loaded in %.1f s", self.load_s)
                self._address = self._server.listening_address.rstrip("/")
            return f"{self._address}/v1"

    async def astart(self) -> str:
        """`start` without blocking the event loop (loading takes a few seconds)."""
        if self._server is not None and self._address:
            return f"{self._address}/v1"
        return await asyncio.to_thread(self.start)

    def stop(self) -> None:
        """Stop serving and free the model (the port is closed when this returns)."""
        with self._lock:
            server, self._server, self._address = self._server, None, None
        del server
        gc.collect()


_shared: LocalServer | None = None
_shared_lock = threading.Lock()


def shared_server() -> LocalServer:
    """The process-wide local server (not started until first used)."""
    global _shared
    with _shared_lock:
        if _shared is None:
            _shared = LocalServer()
            atexit.register(_shared.stop)
        return _shared
