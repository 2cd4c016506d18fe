"""What the server's logs may hold and how fast they may grow (issue 24).

- `TokenScrubber`: a participant's token is their login, so it never reaches a log line: every
  `/p/<token>`, `/ws/<token>` and bare participant id (`p` + 16 hex digits) becomes `~` + a short
  hash (the same token always gives the same hash, so one person's lines can still be followed).
- `RateCap`: each kind of line (logger, level, message template) at most `per_kind` times per
  `period_s`, all kinds together at most `total`; the first line of a kind after a quiet spell
  says how many of its kind were left out. A flood of requests cannot flood the log.

`install()` puts both on the loggers of uvicorn and turinglab (once per process)."""

from __future__ import annotations

import hashlib
import logging
import re
import threading
import time
from collections.abc import Callable

LOGGERS = ("uvicorn.access", "uvicorn.error", "turinglab", "turinglab.server", "turinglab.cluster",
           "turinglab.witnesses")
_TOKEN_PATH = re.compile(r"(/(?:p|ws)/)([A-Za-z0-9_-]{6,64})")
_BARE_ID = re.compile(r"\bp[0-9a-f]{16}\b")


def token_hash(token: str) -> str:
    return "~" + hashlib.sha256(token.encode()).hexdigest()[:10]


def scrub(text: str) -> str:
    text = _TOKEN_PATH.sub(lambda m: m.group(1) + token_hash(m.group(2)), text)
    return _BARE_ID.sub(lambda m: token_hash(m.group(0)), text)


class TokenScrubber(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        if isinstance(record.msg, str):
            record.msg = scrub(record.msg)
        if record.args:
            if isinstance(record.args, tuple):
                record.args = tuple(scrub(a) if isinstance(a, str) else a for a in record.args)
            elif isinstance(record.args, dict):
                record.args = {k: scrub(v) if isinstance(v, str) else v for k, v in record.args.items()}
        return True


class RateCap(logging.Filter):
    def __init__(self, per_kind: int = 50, total: int = 500, period_s: float = 10.0,
                 clock: Callable[[], float] = time.monotonic) -> None:
        super().__init__()
        self.per_kind, self.total, self.period_s, self.clock = per_kind, total, period_s, clock
        self._lock = threading.Lock()
        self._window = -1.0
        self._counts: dict[tuple, int] = {}
        self._all = 0
        self._left_out: dict[tuple, int] = {}

    def filter(self, record: logging.LogRecord) -> bool:
        kind = _kind(record)
        with self._lock:
            now = self.clock()
            if now - self._window >= self.period_s:
                self._window, self._counts, self._all = now, {}, 0
            n = self._counts.get(kind, 0)
            if n >= self.per_kind or self._all >= self.total:
                self._left_out[kind] = self._left_out.get(kind, 0) + 1
                return False
            self._counts[kind] = n + 1
            self._all += 1
            left = self._left_out.pop(kind, 0)
        if left:
            record.msg = f"{record.msg} [{left} more line(s) like this were left out]"
        return True


def _kind(record: logging.LogRecord) -> tuple:
    args = record.args
    if record.name == "uvicorn.access" and isinstance(args, tuple) and len(args) == 5:
        # (client, method, path, http version, status): a kind per method, first path part, status
        first = str(args[2]).split("?")[0].split("/")[1:2]
        return (record.name, args[1], first[0] if first else "", args[4])
    return (record.name, record.levelno, str(record.msg)[:200])


_installed: dict[str, tuple[TokenScrubber, RateCap]] = {}
_install_lock = threading.Lock()


def install(cap: RateCap | None = None) -> RateCap:
    """Scrub tokens and cap the rate on every server logger (idempotent; one cap shared by all)."""
    with _install_lock:
        shared = cap or (next(iter(_installed.values()))[1] if _installed else RateCap())
        for name in LOGGERS:
            logger = logging.getLogger(name)
            old = _installed.get(name)
            if old is not None:
                logger.removeFilter(old[0])
                logger.removeFilter(old[1])
            scrubber = TokenScrubber()
            logger.addFilter(scrubber)  # scrub first: the cap's kinds are then token-free too
            logger.addFilter(shared)
            _installed[name] = (scrubber, shared)
        return shared
