"""Guards the live and judge pages share (issue 24): the per-address limit of POST /start, the
health check's once-per-outage log, the participant's frame bucket, and a returning browser."""

from __future__ import annotations

import asyncio
import logging
import os
import time

from fastapi import Request
from fastapi.responses import Response

from turinglab.store.api import Store

log = logging.getLogger("turinglab.server")

START_BURST, START_PER_S = 30, 0.5  # new participants (POST /start) per client address: at once / per second after


START_ENV = "TURINGLAB_START_LIMIT"  # "BURST/PER_S" (e.g. "30/0.5"), or "off" for load tests from one address


class PerAddress:
    """POST /start per client address (the address uvicorn gives: forwarded headers only from
    `--forwarded-allow-ips`): a token bucket each; `wait(host)` is 0 when allowed."""

    def __init__(self, burst: float | None = None, per_s: float | None = None) -> None:
        setting = os.environ.get(START_ENV, "").strip().lower()
        self.off = setting == "off" and burst is None
        if setting and not self.off and burst is None:
            try:
                b, _, r = setting.partition("/")
                burst, per_s = float(b), float(r)
            except ValueError:
                raise ValueError(f"${START_ENV}={setting!r}: expected BURST/PER_S such as 30/0.5, or off") from None
        self.burst = START_BURST if burst is None else burst
        self.per_s = START_PER_S if per_s is None else per_s
        self.buckets: dict[str, TokenBucket] = {}

    def wait(self, host: str) -> float:
        if self.off:
            return 0.0
        if len(self.buckets) > 10_000:  # forget the full ones
            for k in [k for k, b in self.buckets.items() if b.take() and b.tokens + 1 >= b.capacity]:
                del self.buckets[k]
        b = self.buckets.setdefault(host, TokenBucket(self.burst, self.per_s))
        return 0.0 if b.take() else (1 - b.tokens) / self.per_s


def too_many_starts(request: Request, message, wait: float) -> Response:  # noqa: ANN001
    secs = max(1, round(wait))
    log.warning("POST /start refused: too many new participants from %s", request.client.host if request.client else "?")
    _ = request.app.state.gettext
    r = message(request, _("Please wait a moment"),
                _("Many people have just started from your network, so new starts are paused briefly. "
                  "Wait %(seconds)s seconds, then press Start again.", seconds=secs), 429, link="/",
                link_text=_("Back to the start page"))
    r.headers["Retry-After"] = str(secs)
    return r


class HealthLog:
    """One log line when the database stops answering and one when it answers again, not a
    traceback per request."""

    def __init__(self) -> None:
        self.down_since: float | None = None

    def failed(self, exc: BaseException) -> None:
        if self.down_since is None:
            self.down_since = time.monotonic()
            why = " ".join(str(exc).split())[:200] or type(exc).__name__
            log.error("health check: the database does not answer (%s: %s); logged once until it answers again",
                      type(exc).__name__, why)

    def ok(self) -> None:
        if self.down_since is not None:
            log.warning("health check: the database answers again after %.0f s", time.monotonic() - self.down_since)
            self.down_since = None


class TokenBucket:
    """A flood guard per participant, shared by all their connections (frames beyond it get
    `rate_limited` and are not processed)."""

    def __init__(self, capacity: float, per_s: float) -> None:
        self.capacity, self.per_s = capacity, per_s
        self.tokens, self.t = capacity, time.monotonic()

    def take(self) -> bool:
        now = time.monotonic()
        self.tokens = min(self.capacity, self.tokens + (now - self.t) * self.per_s)
        self.t = now
        if self.tokens >= 1:
            self.tokens -= 1
            return True
        return False


async def returning(store: Store, prolific_pid: str, cookie: str | None, study: str | None = None) -> str | None:
    """The participant of this browser's cookie when it came with the same Prolific id (and, given
    `study`, belongs to that study), else None."""
    if not cookie or not (1 <= len(cookie) <= 40 and cookie.isascii() and cookie.isalnum()):
        return None
    from turinglab.store.api import UnknownId

    try:
        mine = await asyncio.to_thread(store.get_participant, cookie)
    except UnknownId:
        return None
    if study is not None and mine.study not in (None, study):
        return None
    return mine.id if mine.prolific_pid == prolific_pid else None


DISK_FULL = ("no space left", "disk is full", "disk full", "enospc", "could not extend file", "quota exceeded")


class WriteHealth:
    """The outcome of the last write of a live game, for /healthz and /admin (issue 43): a write
    that failed, or a full disk (said by the failure, or an SQLite file's disk with under 1 MiB
    free), makes the server `degraded`. /healthz shows no time of a successful write: when a game
    writes tells what writes it (a human witness's held reply is written before it shows)."""

    def __init__(self, db_url: str = "") -> None:
        self.ok: bool | None = None  # None: nothing written yet
        self.at = 0.0  # time.monotonic() of the last write
        self.failed_since: float | None = None  # the first failure of the current run of failures
        self.error = ""
        self.folder = None
        if db_url.startswith("sqlite:///") and ":memory:" not in db_url:
            from pathlib import Path

            self.folder = Path(db_url.removeprefix("sqlite:///")).resolve().parent

    def wrote(self, exc: BaseException | None = None) -> None:
        self.at = time.monotonic()
        self.ok = exc is None
        if exc is None:
            self.failed_since, self.error = None, ""
            return
        self.error = " ".join(str(exc).split())[:300] or type(exc).__name__
        if self.failed_since is None:
            self.failed_since = self.at

    def disk_full(self) -> bool:
        if self.ok is False and any(w in self.error.lower() for w in DISK_FULL):
            return True
        if self.folder is not None:
            import shutil

            try:
                return shutil.disk_usage(self.folder).free < 2**20
            except OSError:
                return False
        return False

    def public(self) -> dict:
        """For /healthz: the outcome, and how long writes have been failing (never when one succeeded)."""
        out: dict = {"writes": {None: "none", True: "ok", False: "failed"}[self.ok],
                     "disk": "full" if self.disk_full() else "ok"}
        if self.failed_since is not None:
            out["failing_for_s"] = round(time.monotonic() - self.failed_since, 1)
        return out

    def degraded(self) -> bool:
        return self.ok is False or self.disk_full()

    def admin(self) -> dict:
        """For /admin (researchers): also the last write's age and error."""
        return {**self.public(), "last_write_age_s": None if self.ok is None else round(time.monotonic() - self.at, 1),
                "error": self.error}
