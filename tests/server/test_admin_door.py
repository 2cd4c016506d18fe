"""Issue 24 item 2: the admin door. Named accounts with hashed passwords, a login form with a
session cookie, throttles keyed on the account (not the rotatable address) with a short global
cap, trusted proxies only from a setting."""

from __future__ import annotations

import httpx
from typer.testing import CliRunner

from turinglab.cli import app as cli
from turinglab.server.admin_auth import check_password, hash_password
from turinglab.server.app import create_app
from turinglab.server.proxies import proxy_settings
from turinglab.server.testing import serve_in_thread
from tests.server.live.test_server import FAST, study


def _accounts(tmp_path) -> str:
    path = tmp_path / "admins.txt"
    for name, pw in (("alice", "alice-long-secret"), ("bob", "bob-long-secret")):
        r = CliRunner().invoke(cli, ["admin", "add-account", name, "--file", str(path), "--password-stdin"], input=pw + "\n")
        assert r.exit_code == 0, r.output
    r = CliRunner().invoke(cli, ["admin", "add-account", "carol", "--file", str(path), "--password-stdin"], input="short\n")
    assert r.exit_code == 2 and "at least 10" in r.output
    text = path.read_text()
    assert "alice-long-secret" not in text and "alice:scrypt$" in text and oct(path.stat().st_mode)[-3:] == "600"
    return str(path)


def _app(db_url, tmp_path, **kw):
    return create_app(study(), db_url, human_timing=FAST, initial_ai_wait_s=0.1, admin_password="legacy-pw",
                      admin_accounts=_accounts(tmp_path), **kw)


async def _login(c: httpx.AsyncClient, name: str, pw: str, **headers) -> httpx.Response:
    return await c.post("/admin/login", data={"name": name, "password": pw, "next": "/admin"}, headers=headers)


async def logout(c: httpx.AsyncClient) -> None:
    """Press "Log out" on the admin page (its form carries the token)."""
    import re

    token = re.search(r'action="/admin/logout"[^>]*><input type="hidden" name="csrf" value="([0-9a-f]+)"',
                      (await c.get("/admin")).text).group(1)
    r = await c.post("/admin/logout", data={"csrf": token})
    assert r.status_code == 303 and r.headers["location"] == "/admin/login"


async def test_a_copied_cookie_is_void_after_a_password_change_or_removal(sqlite_url, tmp_path):
    web = _app(sqlite_url, tmp_path)
    path = web.state.admin_accounts.path
    with serve_in_thread(web) as base:
        async with httpx.AsyncClient(base_url=base) as c:
            assert (await _login(c, "alice", "alice-long-secret")).status_code == 303
            assert (await _login(c, "bob", "bob-long-secret")).status_code == 303  # the jar holds bob's now
            bob = c.cookies.get("turinglab_admin")
        async with httpx.AsyncClient(base_url=base) as c:
            assert (await _login(c, "alice", "alice-long-secret")).status_code == 303
            alice = c.cookies.get("turinglab_admin")
        for cookie in (alice, bob):
            async with httpx.AsyncClient(base_url=base, cookies={"turinglab_admin": cookie}) as x:
                assert (await x.get("/admin")).status_code == 200
        import os
        import time

        r = CliRunner().invoke(cli, ["admin", "add-account", "alice", "--file", path, "--password-stdin"],
                               input="alice-new-secret\n")
        assert r.exit_code == 0, r.output
        os.utime(path, (time.time() + 5, time.time() + 5))  # the file's new mtime is seen even within one tick
        async with httpx.AsyncClient(base_url=base, cookies={"turinglab_admin": alice}) as x:
            assert (await x.get("/admin")).status_code == 303  # the password changed: the old session ends
        async with httpx.AsyncClient(base_url=base, cookies={"turinglab_admin": bob}) as x:
            assert (await x.get("/admin")).status_code == 200  # other accounts keep theirs
        text = open(path).read()
        open(path, "w").write("".join(line for line in text.splitlines(True) if not line.startswith("bob:")))
        os.utime(path, (time.time() + 10, time.time() + 10))
        async with httpx.AsyncClient(base_url=base, cookies={"turinglab_admin": bob}) as x:
            assert (await x.get("/admin")).status_code == 303  # the account is gone
        # the legacy account: a new TURINGLAB_ADMIN_PASSWORD ends its sessions
        async with httpx.AsyncClient(base_url=base) as c:
            assert (await _login(c, "admin", "legacy-pw")).status_code == 303
            legacy = c.cookies.get("turinglab_admin")
        web.state.admin_accounts.password = "legacy-pw-2"
        async with httpx.AsyncClient(base_url=base, cookies={"turinglab_admin": legacy}) as x:
            assert (await x.get("/admin")).status_code == 303


def test_password_hashes():
    h = hash_password("x" * 12)
    assert h.startswith("scrypt$") and check_password("x" * 12, h) and not check_password("x" * 11, h)
    assert hash_password("x" * 12) != h  # salted
    assert not check_password("x", "plain") and not check_password("x", "scrypt$1$2")


async def test_named_accounts_log_in_with_a_form_and_a_session_cookie(db_url, tmp_path):
    with serve_in_thread(_app(db_url, tmp_path)) as base:
        async with httpx.AsyncClient(base_url=base) as c:
            r = await c.get("/admin/export/games.csv")
            assert r.status_code == 303 and r.headers["location"] == "/admin/login?next=/admin/export/games.csv"
            form = await c.get(r.headers["location"])
            assert 'name="password"' in form.text and 'value="/admin/export/games.csv"' in form.text
            assert (await c.get("/admin", auth=("alice", "alice-long-secret"))).status_code == 303  # no basic auth
            r = await _login(c, "alice", "bob-long-secret")
            assert r.status_code == 401 and "Wrong account name or password" in r.text
            r = await _login(c, "alice", "alice-long-secret")
            assert r.status_code == 303 and r.headers["location"] == "/admin"
            cookie = next(v for v in r.headers.get_list("set-cookie") if v.startswith("turinglab_admin="))
            low = cookie.lower()
            assert "httponly" in low and "samesite=strict" in low and "secure" not in low  # plain http
            assert (await c.get("/admin")).status_code == 200
            assert (await c.get("/admin/export/games.csv")).status_code == 200
            copied = c.cookies.get("turinglab_admin")
            r = await c.post("/admin/logout")  # without the form token: refused, still logged in
            assert r.status_code == 403 and (await c.get("/admin")).status_code == 200
            await logout(c)
            assert (await c.get("/admin")).status_code == 303
            async with httpx.AsyncClient(base_url=base, cookies={"turinglab_admin": copied}) as thief:
                assert (await thief.get("/admin")).status_code == 303  # a copied cookie ends with the logout
        for name, pw in (("bob", "bob-long-secret"), ("admin", "legacy-pw")):  # the env password's account
            async with httpx.AsyncClient(base_url=base) as c:
                assert (await _login(c, name, pw)).status_code == 303
                assert (await c.get("/admin")).status_code == 200
        async with httpx.AsyncClient(base_url=base) as c:  # a forged cookie is no session
            c.cookies.set("turinglab_admin", "alice:99999999999:" + "0" * 40)
            assert (await c.get("/admin")).status_code == 303
            r = await _login(c, "alice", "alice-long-secret", Origin="http://evil.example")
            assert r.status_code == 403  # a login sent from another site


async def test_rotating_addresses_does_not_help_and_the_admin_still_gets_in(db_url, tmp_path):
    web = _app(db_url, tmp_path)
    with serve_in_thread(web, forwarded_allow_ips="") as base:
        now = [1000.0]
        web.state.login_throttle.clock = lambda: now[0]
        async with httpx.AsyncClient(base_url=base) as admin:  # the researcher's own browser, earlier
            assert (await _login(admin, "alice", "alice-long-secret")).status_code == 303
            await logout(admin)
        codes = []
        async with httpx.AsyncClient(base_url=base) as attacker:
            for n in range(30):
                r = await _login(attacker, "alice", f"guess-{n}", **{"X-Forwarded-For": f"10.0.{n}.1"})
                codes.append(r.status_code)
            assert codes[:5] == [401] * 5 and set(codes[5:]) == {429}
            r = await _login(attacker, "alice", "alice-long-secret", **{"X-Forwarded-For": "10.9.9.9"})
            assert r.status_code == 429 and 1 <= int(r.headers["Retry-After"]) <= 30  # the right guess is not heard
        # the researcher's browser (device cookie) is not locked out by the guesses
        assert (await _login(admin_again := httpx.AsyncClient(base_url=base, cookies=admin.cookies),
                             "alice", "alice-long-secret")).status_code == 303
        await admin_again.aclose()
        async with httpx.AsyncClient(base_url=base) as fresh:  # a new browser waits at most the short cap
            r = await _login(fresh, "alice", "alice-long-secret")
            assert r.status_code == 429 and int(r.headers["Retry-After"]) <= 30
            now[0] += 31
            assert (await _login(fresh, "alice", "alice-long-secret")).status_code == 303
            assert (await _login(fresh, "bob", "bob-long-secret")).status_code == 303  # other accounts untouched


async def test_a_short_global_cap_stops_spraying_many_account_names(sqlite_url, tmp_path):
    web = _app(sqlite_url, tmp_path)
    with serve_in_thread(web) as base:
        now = [50.0]
        web.state.login_throttle.clock = lambda: now[0]
        async with httpx.AsyncClient(base_url=base) as c:
            codes = [(await _login(c, f"user{n}", "guess-guess")).status_code for n in range(32)]
            assert codes[:30] == [401] * 30 and codes[30:] == [429, 429]
            r = await _login(c, "bob", "bob-long-secret")
            assert r.status_code == 429 and int(r.headers["Retry-After"]) <= 10
            now[0] += 10.5
            assert (await _login(c, "bob", "bob-long-secret")).status_code == 303


async def test_forwarded_headers_only_from_configured_proxies(sqlite_url, tmp_path):
    assert proxy_settings() == {"proxy_headers": False, "forwarded_allow_ips": ""}
    assert proxy_settings("127.0.0.1") == {"proxy_headers": True, "forwarded_allow_ips": "127.0.0.1"}
    web = _app(sqlite_url, tmp_path)
    tls = {"X-Forwarded-Proto": "https", "X-Forwarded-For": "203.0.113.9"}
    with serve_in_thread(web) as base:  # the default: nothing trusted, not even 127.0.0.1
        async with httpx.AsyncClient(base_url=base) as c:
            r = await _login(c, "bob", "bob-long-secret", **tls)
            assert "secure" not in r.headers["set-cookie"].lower()
    with serve_in_thread(web, forwarded_allow_ips="127.0.0.1") as base:  # behind a TLS proxy on this host
        async with httpx.AsyncClient(base_url=base) as c:
            r = await _login(c, "bob", "bob-long-secret", **tls)
            assert r.status_code == 303 and "; secure" in r.headers["set-cookie"].lower()


def test_serve_passes_the_setting_and_the_nginx_example_sets_the_headers():
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    conf = (root / "deploy/nginx.conf").read_text()
    assert "proxy_set_header X-Forwarded-For $remote_addr;" in conf and "X-Forwarded-Proto $scheme" in conf
    r = CliRunner().invoke(cli, ["serve", "--help"])
    assert "--forwarded-allow-ips" in r.output


async def test_a_logout_on_one_worker_ends_the_session_on_another(sqlite_url, tmp_path):
    """Two servers on one database with one secret (a cluster's workers): the session generation is
    in the store, so a logout on one voids the same cookie on the other."""
    a, b = (create_app(study(), sqlite_url, human_timing=FAST, initial_ai_wait_s=0.1, admin_password="legacy-pw",
                       secret="s" * 32) for _ in range(2))
    with serve_in_thread(a) as base_a, serve_in_thread(b) as base_b:
        async with httpx.AsyncClient(base_url=base_a) as c:
            assert (await _login(c, "admin", "legacy-pw")).status_code == 303
            cookie = c.cookies.get("turinglab_admin")
            async with httpx.AsyncClient(base_url=base_b, cookies={"turinglab_admin": cookie}) as other:
                assert (await other.get("/admin")).status_code == 200  # one session, both workers
                await logout(c)
                assert (await other.get("/admin")).status_code == 303
