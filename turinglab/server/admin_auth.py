"""The admin door (issue 24): named researcher accounts with hashed passwords, a login form with a
session cookie, and login throttles an attacker cannot rotate.

Accounts: the file named by $TURINGLAB_ADMIN_ACCOUNTS (or `create_app(admin_accounts=...)`), one
`name:scrypt$N$r$p$salt$hash` per line (`turinglab admin add-account NAME`), plus the single
password of $TURINGLAB_ADMIN_PASSWORD (or `admin_password=`) as the account `admin`.

Throttles, keyed on what an attacker cannot choose freely:
- per attempted account: after `limit` wrong passwords within `window_s`, each further attempt
  on that account waits a doubling backoff (1, 2, 4 ... s), never more than `max_backoff_s`;
- global: after `global_limit` wrong passwords within `global_window_s` (any accounts), every
  attempt waits for the rest of that short window;
- a browser that has logged in to an account before carries a signed device cookie: its attempts
  on that account skip both throttles (it has its own count), so other people's wrong guesses
  never lock the real researcher out; a new browser waits at most `max_backoff_s`.
The client address plays no part (it can be rotated behind a proxy, or shared by everyone).
"""

from __future__ import annotations

import hashlib
import hmac
import logging
import os
import re
import secrets
import time
from collections import deque
from collections.abc import Callable
from pathlib import Path

log = logging.getLogger("turinglab.server")

ACCOUNTS_ENV, PASSWORD_ENV = "TURINGLAB_ADMIN_ACCOUNTS", "TURINGLAB_ADMIN_PASSWORD"
LEGACY_ACCOUNT = "admin"  # the name of $TURINGLAB_ADMIN_PASSWORD's account
SESSION_COOKIE, DEVICE_COOKIE = "turinglab_admin", "turinglab_admin_device"
SESSION_S, DEVICE_S = 8 * 3600, 90 * 24 * 3600
NAME_RE = re.compile(r"^[A-Za-z0-9._-]{1,64}$")
MIN_PASSWORD = 10
_SCRYPT = (2**14, 8, 1)


def hash_password(password: str, salt: bytes | None = None, params: tuple[int, int, int] = _SCRYPT) -> str:
    salt = salt or secrets.token_bytes(16)
    n, r, p = params
    h = hashlib.scrypt(password.encode(), salt=salt, n=n, r=r, p=p, dklen=32)
    return f"scrypt${n}${r}${p}${salt.hex()}${h.hex()}"


def check_password(password: str, stored: str) -> bool:
    try:
        kind, n, r, p, salt, want = stored.split("$")
        if kind != "scrypt":
            return False
        got = hashlib.scrypt(password.encode(), salt=bytes.fromhex(salt), n=int(n), r=int(r), p=int(p),
                             dklen=len(want) // 2)
    except (ValueError, TypeError):
        return False
    return hmac.compare_digest(got.hex(), want)


class AccountsFileError(ValueError):
    pass


def read_accounts(path: Path) -> dict[str, str]:
    out: dict[str, str] = {}
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        name, sep, stored = line.strip().partition(":")
        if not sep or not NAME_RE.match(name) or not stored.startswith("scrypt$"):
            raise AccountsFileError(f"{path}:{n}: expected NAME:scrypt$..., as written by "
                                    "`turinglab admin add-account NAME --file FILE`")
        out[name] = stored
    return out


def add_account(path: Path, name: str, password: str) -> bool:
    """Add or replace one account in the file (created 0600); True when it replaced one."""
    if not NAME_RE.match(name):
        raise AccountsFileError(f"account name {name!r}: use 1-64 letters, digits, '.', '_' or '-'")
    if len(password) < MIN_PASSWORD:
        raise AccountsFileError(f"the password has {len(password)} characters; use at least {MIN_PASSWORD}")
    accounts = read_accounts(path) if path.exists() else {}
    replaced = name in accounts
    accounts[name] = hash_password(password)
    text = "# turinglab admin accounts (name:scrypt hash); keep this file out of git\n"
    text += "".join(f"{k}:{v}\n" for k, v in accounts.items())
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        f.write(text)
    return replaced


class Accounts:
    """The researcher accounts, read again when the file changes; the legacy single password
    (read at each use, as before) is the account `admin`."""

    def __init__(self, path: str | None = None, password: str | None = None) -> None:
        self.path, self.password = path, password
        self._file: tuple[float, dict[str, str]] = (-1.0, {})
        self._legacy: tuple[str, str] | None = None
        self._dummy = hash_password(secrets.token_hex(8))

    def _table(self) -> dict[str, str]:
        out: dict[str, str] = {}
        path = self.path or os.environ.get(ACCOUNTS_ENV) or None
        if path:
            p = Path(path)
            try:
                mtime = p.stat().st_mtime
            except OSError:
                log.warning("admin accounts file %s cannot be read", path)
                mtime = None
            if mtime is not None:
                if mtime != self._file[0]:
                    self._file = (mtime, read_accounts(p))
                out.update(self._file[1])
        pw = self.password if self.password is not None else os.environ.get(PASSWORD_ENV) or None
        if pw:
            if self._legacy is None or self._legacy[0] != pw:
                self._legacy = (pw, hash_password(pw))
            out.setdefault(LEGACY_ACCOUNT, self._legacy[1])
        return out

    def any(self) -> bool:
        return bool(self._table())

    def exists(self, name: str) -> bool:
        return name in self._table()

    def fingerprint(self, name: str) -> str:
        """What a session of `name` is bound to: its stored hash (a file account) or its password
        (the legacy account, alike on every worker); a new password gives a new fingerprint."""
        stored = self._table().get(name)
        if stored is None:
            return ""
        basis = self._legacy[0] if name == LEGACY_ACCOUNT and self._legacy and stored == self._legacy[1] else stored
        return hashlib.sha256(basis.encode()).hexdigest()

    def verify(self, name: str, password: str) -> bool:
        stored = self._table().get(name)
        ok = check_password(password, stored or self._dummy)  # the same work for unknown names
        return ok and stored is not None


class LoginThrottle:
    def __init__(self, limit: int = 5, window_s: float = 900.0, max_backoff_s: float = 30.0,
                 global_limit: int = 30, global_window_s: float = 10.0,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.limit, self.window_s, self.max_backoff_s = limit, window_s, max_backoff_s
        self.global_limit, self.global_window_s, self.clock = global_limit, global_window_s, clock
        self.fails: dict[str, deque[float]] = {}
        self.all_fails: deque[float] = deque()

    def _recent(self, key: str) -> deque[float]:
        q = self.fails.get(key, deque())
        while q and q[0] <= self.clock() - self.window_s:
            q.popleft()
        if not q:
            self.fails.pop(key, None)
        return q

    def _account_wait(self, key: str) -> float:
        q = self._recent(key)
        if len(q) < self.limit:
            return 0.0
        backoff = min(self.max_backoff_s, 2.0 ** (len(q) - self.limit))
        return max(0.0, q[-1] + backoff - self.clock())

    def wait(self, account: str, device: bool = False) -> float:
        """Seconds before an attempt on `account` is heard (0: now). `device`: the browser carries
        this account's device cookie (only its own failures count)."""
        if device:
            return self._account_wait("device:" + account)
        now = self.clock()
        while self.all_fails and self.all_fails[0] <= now - self.global_window_s:
            self.all_fails.popleft()
        glob = (self.all_fails[-self.global_limit] + self.global_window_s - now
                if len(self.all_fails) >= self.global_limit else 0.0)
        return max(glob, self._account_wait("account:" + account))

    def failed(self, account: str, device: bool = False) -> None:
        if len(self.fails) > 10_000:  # many names tried: forget the stale ones
            for k in list(self.fails):
                self._recent(k)
        now = self.clock()
        self.fails.setdefault(("device:" if device else "account:") + account, deque()).append(now)
        if not device:
            self.all_fails.append(now)
            while len(self.all_fails) > 4 * self.global_limit:
                self.all_fails.popleft()


class Signer:
    """Session and device cookies: `name:expiry:mac` under the server's secret."""

    def __init__(self, secret: bytes, clock: Callable[[], float] = time.time) -> None:
        self.secret, self.clock = secret, clock

    def _mac(self, kind: str, name: str, exp: int, bound: str) -> str:
        return hmac.new(self.secret, f"admin-{kind}:{name}:{exp}:{bound}".encode(), hashlib.sha256).hexdigest()[:40]

    def make(self, kind: str, name: str, seconds: int, bound: str = "") -> str:
        """A cookie for `name`; `bound` (e.g. the account's session generation and password
        fingerprint) is part of the mac, not of the cookie: when it changes the cookie is void."""
        exp = int(self.clock()) + seconds
        return f"{name}:{exp}:{self._mac(kind, name, exp, bound)}"

    def name_of(self, value: str | None) -> str | None:
        """The account a cookie claims (unchecked: look up what it is bound to, then `read`)."""
        parts = (value or "").rsplit(":", 2)
        return parts[0] if len(parts) == 3 else None

    def read(self, kind: str, value: str | None, bound: str = "") -> str | None:
        """The account name of a valid, unexpired cookie, else None."""
        try:
            name, exp_s, mac = (value or "").rsplit(":", 2)
            exp = int(exp_s)
        except ValueError:
            return None
        if exp < self.clock() or not hmac.compare_digest(mac, self._mac(kind, name, exp, bound)):
            return None
        return name


def generation_key(name: str) -> str:
    """The settings row of an account's session generation: a logout writes a new one, which
    ends every session of the account on every worker (the store is shared)."""
    return f"admin_sessions:{name}"[:100]
