"""Several hosts for real (issue 43 item 5): three network namespaces on this machine, two "hosts"
each running `turinglab serve --workers 2` against one PostgreSQL and one Redis, and one running
Debian's nginx with deploy/nginx.conf (its upstream block given the two hosts' addresses). Human-
human games are played through nginx, their players spread over the hosts; one host's network is
cut mid-game (`ip link set eth0 down` inside it). Every acknowledged message must be stored, once,
and every game must end by its verdict.

The players act as the page does (turinglab/server/static/game.js): they ping, and a connection
that stays silent is dropped and made again (through nginx, which then reaches the other host),
with shorter times than the page's so that the test stays short."""

from __future__ import annotations

import asyncio
import json
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from tests.conftest import _loud_skip
from tests.server.live import netns, tcp_relay
from tests.server.live.test_cluster_chaos import Bot, new_participant, worker_pids

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[3]
PLAYERS = 40  # 20 human-human games
ROUNDS = 6  # questions and answers per game
PING_S, SILENCE_S = 2.0, 6.0  # the page: 20 s and 50 s
STUDY = """
name: hosts
rules: {time_limit_s: 150, typing_min_s: 0.2, typing_jitter_s: 0.3, human_witness_timing: relay}
allocation: {human_ratio: 1.0}
"""


class HostBot(Bot):
    """The chaos test's player, through one address (nginx), with the page's silence check and a
    moment's thought before each message."""

    async def run(self, deadline: float) -> None:
        import websockets

        base = self.bases[0].replace("http", "ws", 1)
        while self.reveal is None and time.monotonic() < deadline:
            try:
                async with websockets.connect(f"{base}/ws/{self.pid}", open_timeout=15, ping_interval=None,
                                              close_timeout=1) as ws:
                    self.ws = ws
                    pinger = asyncio.create_task(self._ping(ws))
                    try:
                        while self.reveal is None:
                            await self.on(json.loads(await asyncio.wait_for(ws.recv(), SILENCE_S)))
                    finally:
                        pinger.cancel()
                    return
            except (OSError, asyncio.TimeoutError, websockets.ConnectionClosed, websockets.InvalidHandshake):
                pass
            self.log.append([round(time.monotonic(), 2), "reconnect"])
            self.reconnects += 1
            await asyncio.sleep(0.3)

    async def _ping(self, ws) -> None:  # noqa: ANN001
        while True:
            await asyncio.sleep(PING_S)
            try:
                await ws.send(json.dumps({"type": "ping"}))
            except Exception:  # noqa: BLE001 - the read loop notices
                return

    async def say(self, text: str) -> None:
        await asyncio.sleep(random.uniform(0.3, 0.8))
        await super().say(text)

    async def act(self, resend_verdict: bool = False) -> None:
        if self.role == "interrogator":
            if self.theirs >= ROUNDS:
                if not self.verdict_sent or resend_verdict:
                    self.verdict_sent = True
                    await self.send({"type": "verdict", "choice": "human", "confidence": 70})
            elif not self.outbox and self.mine == self.theirs:
                await self.say(f"{self.name} q{self.mine}")
        elif self.role == "witness" and not self.outbox and self.theirs > self.mine:
            await self.say(f"{self.name} r{self.mine}")


def nginx_conf(folder: Path, upstreams: list[str]) -> Path:
    """deploy/nginx.conf, its upstream block given `upstreams`, included in a main file of the test's own."""
    conf, n = re.subn(r"upstream turinglab \{[^}]*\}",
                      "upstream turinglab { " + " ".join(f"server {u};" for u in upstreams) + " }",
                      (ROOT / "deploy/nginx.conf").read_text())
    assert n == 1, "deploy/nginx.conf has no `upstream turinglab { ... }` block"
    (folder / "turinglab.conf").write_text(conf)
    temps = " ".join(f"{k}_temp_path {folder}/{k};" for k in ("client_body", "proxy", "fastcgi", "uwsgi", "scgi"))
    main = folder / "nginx.conf"
    main.write_text(f"user root; worker_processes 1; pid {folder}/nginx.pid; error_log {folder}/error.log warn;\n"
                    f"events {{ worker_connections 1024; }}\n"
                    f"http {{ access_log {folder}/access.log; {temps} include {folder}/turinglab.conf; }}\n")
    return main


def wait_http(url: str, until: float, procs: list[subprocess.Popen], what: str, logs: list[Path]) -> None:
    while True:
        for p in procs:
            assert p.poll() is None, f"{what}: a process exited ({p.returncode}): " + \
                " | ".join(x.read_text()[-1500:] for x in logs if x.exists())
        try:
            if httpx.get(url, timeout=3).status_code == 200:
                return
        except httpx.TransportError:
            pass
        assert time.monotonic() < until, f"{what} did not answer: " + " | ".join(x.read_text()[-1500:] for x in logs)
        time.sleep(0.3)


def stop(proc: subprocess.Popen) -> None:
    """A process started in its own session, and its children."""
    if proc.poll() is None:
        group = os.getpgid(proc.pid)
        assert group != os.getpgrp(), "not in a session of its own"
        os.killpg(group, signal.SIGTERM)
        try:
            proc.wait(15)
        except subprocess.TimeoutExpired:
            os.killpg(group, signal.SIGKILL)
            proc.wait(5)


async def test_two_hosts_behind_nginx_lose_nothing_when_one_host_is_cut(postgres_url, tmp_path):
    import redis as redis_py
    from sqlalchemy.engine import make_url

    from turinglab.server.testing import free_port
    from turinglab.store.api import Store

    reason = netns.why_not()
    if reason:
        _loud_skip(f"several-hosts test: network namespaces cannot be made here ({reason})")
    nginx = shutil.which("nginx") or ("/usr/sbin/nginx" if Path("/usr/sbin/nginx").exists() else None)
    if nginx is None or shutil.which("redis-server") is None:
        _loud_skip("several-hosts test: needs Debian's nginx and redis-server (apt-get install nginx redis-server)")
    study = tmp_path / "hosts.yaml"
    study.write_text(STUDY)
    hosts = netns.Hosts()
    procs: list[subprocess.Popen] = []
    serving: dict[str, subprocess.Popen] = {}
    logs = {h: tmp_path / f"{h}.log" for h in ("h1", "h2")}
    try:
        px = hosts.add("px", 10)
        addr = {h: hosts.add(h, n) for h, n in (("h1", 11), ("h2", 12))}
        gw = hosts.gateway  # the machine, as the hosts reach it: one Redis, one PostgreSQL (through a relay)
        rport, pport = free_port(), free_port()
        procs.append(subprocess.Popen(["redis-server", "--bind", gw, "--port", str(rport), "--protected-mode", "no",
                                       "--save", "", "--appendonly", "no"], stdout=subprocess.DEVNULL,
                                      start_new_session=True))
        pg = make_url(postgres_url)
        procs.append(tcp_relay.start(gw, pport, pg.host or "127.0.0.1", pg.port or 5432))
        db = pg.set(host=gw, port=pport).render_as_string(hide_password=False)
        redis_url = f"redis://{gw}:{rport}/0"
        env = {**os.environ, "PYTHONPATH": str(ROOT), "TURINGLAB_SECRET": "hosts-test-secret",
               "TURINGLAB_REDIS_PREFIX": "hosts", "TURINGLAB_START_LIMIT": "off"}
        until = time.monotonic() + 90
        for h in ("h1", "h2"):  # the same command on each host (h2 once h1's parent has migrated the database)
            serving[h] = hosts.run(h, [sys.executable, "-m", "turinglab.cli", "serve", "--study", str(study),
                                       "--db", db, "--redis", redis_url, "--workers", "2", "--host", "0.0.0.0",
                                       "--port", "8000", "--no-warm-up", "--forwarded-allow-ips", px],
                                   env=env, stdout=logs[h].open("w"), stderr=subprocess.STDOUT)
            while "worker(s) on" not in logs[h].read_text():
                assert time.monotonic() < until and serving[h].poll() is None, logs[h].read_text()[-2000:]
                time.sleep(0.3)
        for h in ("h1", "h2"):
            wait_http(f"http://{addr[h]}:8000/healthz", until, list(serving.values()), h, list(logs.values()))
            while logs[h].read_text().count("Application startup complete") < 2:
                assert time.monotonic() < until, logs[h].read_text()[-2000:]
                time.sleep(0.3)
        ng = tmp_path / "nginx"
        ng.mkdir()
        main = nginx_conf(ng, [f"{addr['h1']}:8000", f"{addr['h2']}:8000"])
        checked = subprocess.run(["ip", "netns", "exec", hosts.ns["px"], nginx, "-t", "-p", str(ng), "-c", str(main)],
                                 capture_output=True, text=True)
        assert checked.returncode == 0, checked.stderr
        procs.append(hosts.run("px", [nginx, "-p", str(ng), "-c", str(main), "-g", "daemon off;"],
                               stderr=(ng / "stderr.log").open("w")))
        base = f"http://{px}"
        wait_http(base + "/healthz", until, procs, "nginx", [ng / "error.log"])

        async with httpx.AsyncClient(timeout=60) as c:
            sem = asyncio.Semaphore(8)

            async def person() -> str:
                async with sem:
                    return await new_participant(c, base)

            pids = await asyncio.gather(*(person() for _ in range(PLAYERS)))
        bots = [HostBot(p, [base], 0, f"bot {i}") for i, p in enumerate(pids)]
        deadline = time.monotonic() + 120

        async def play(b: HostBot, after: float) -> None:
            await asyncio.sleep(after)
            await b.run(deadline)

        # two by two, 0.5 s apart: nginx sends the two of a pair to different hosts (round robin) and the
        # room matches them together (all at once, each host's players would reach the room in a batch)
        tasks = [asyncio.create_task(play(b, 0.5 * (i // 2))) for i, b in enumerate(bots)]
        r = redis_py.Redis.from_url(redis_url, decode_responses=True)
        t0 = time.monotonic()
        while sum(1 for b in bots if b.acked and b.reveal is None) < PLAYERS // 2 and time.monotonic() - t0 < 60:
            await asyncio.sleep(0.2)
        alive_before = {k.split(":")[-1] for k in r.keys("hosts:alive:*")}
        at = {b.pid: r.get(f"hosts:at:{b.pid}") for b in bots if b.gid and b.reveal is None}
        games_at_cut = {b.gid for b in bots if b.gid and b.reveal is None}
        hosts.cut("h1")
        # h1's workers stop renewing: their `alive` keys expire (4 s); so we learn which workers were on h1
        while len(alive_after := {k.split(":")[-1] for k in r.keys("hosts:alive:*")}) > 2 and \
                time.monotonic() < deadline:
            await asyncio.sleep(0.5)
        await asyncio.wait(tasks, timeout=max(1.0, deadline - time.monotonic()))
        on_h1 = alive_before - alive_after
        unfinished = [b for b in bots if b.reveal is None]
        (tmp_path / "unfinished.json").write_text(json.dumps(
            [{"pid": u.pid, "gid": u.gid, "role": u.role, "mine": u.mine, "theirs": u.theirs, "outbox": list(u.outbox),
              "errors": u.errors, "reconnects": u.reconnects, "log": u.log} for u in unfinished], indent=1))
        r.close()
    finally:
        for p in [*serving.values(), *procs]:
            stop(p)
        hosts.close()
    (tmp_path / "at_cut.json").write_text(json.dumps({"on_h1": sorted(on_h1), "alive": sorted(alive_before), "players": [
        [b.pid, b.gid, b.role, at.get(b.pid)] for b in bots]}, indent=1))
    assert len(alive_before) == 4 and len(on_h1) == 2, (alive_before, alive_after)
    by_game: dict[str, set[bool]] = {}
    for b in bots:
        if b.pid in at and at[b.pid]:
            by_game.setdefault(b.gid, set()).add(at[b.pid] in on_h1)
    across = [g for g, where in by_game.items() if where == {True, False}]
    assert len(games_at_cut) >= PLAYERS // 4 and len(across) >= 3, (len(games_at_cut), by_game)
    assert not unfinished, (len(unfinished), [(u.pid, u.role, u.mine, u.theirs, u.errors[-2:]) for u in unfinished[:5]])
    assert "took over game" in logs["h2"].read_text(), "h1 owned no game at the cut (nothing was taken over)"
    assert len(worker_pids(logs["h2"])) == 2
    with Store(postgres_url) as st:
        games = {g.id: g for g in st.games()}
        stored = {gid: st.events(gid) for gid in games}
    assert len(games) == PLAYERS // 2
    for b in bots:
        texts = [e.payload.get("text") for e in stored[b.gid] if e.type == "message"]
        for _, text in b.acked.values():  # every acknowledged message stored, once
            assert texts.count(text) == 1, (b.pid, text, texts)
    ended = {gid: (g.end_reason, g.verdict is not None) for gid, g in games.items()}
    assert all(v == ("verdict", True) for v in ended.values()), ended
