"""Network namespaces as "hosts" on one machine (root only): one bridge in the machine's own
namespace, and each host a namespace with one veth on it (`eth0`, address 10.X.Y.N/24). The
machine's side of the bridge has the address .1, where its services are reached."""

from __future__ import annotations

import os
import random
import shutil
import subprocess


def ip(*args: str, ns: str | None = None, check: bool = True) -> subprocess.CompletedProcess:
    cmd = ["ip", *(["netns", "exec", ns, "ip"] if ns else []), *args]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=30)
    if check and r.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)}: {r.stderr.strip()}")
    return r


def why_not() -> str | None:
    """Why namespaces cannot be made here (None: they can)."""
    if os.geteuid() != 0:
        return "network namespaces need root"
    if shutil.which("ip") is None:
        return "the ip command (Debian package iproute2) is not installed"
    probe = f"tlprobe{os.getpid()}"
    r = subprocess.run(["ip", "netns", "add", probe], capture_output=True, text=True)
    if r.returncode != 0:
        return f"ip netns add failed: {r.stderr.strip()}"
    subprocess.run(["ip", "netns", "del", probe], capture_output=True)
    return None


class Hosts:
    """A bridge and a namespace per named host; `close()` removes them all."""

    def __init__(self) -> None:
        self.tag = f"{os.getpid() % 10000:04d}"
        self.net = f"10.{random.randint(200, 250)}.{random.randint(0, 254)}"
        self.bridge = f"tlbr{self.tag}"
        self.gateway = f"{self.net}.1"
        self.ns: dict[str, str] = {}  # host -> namespace
        self.addr: dict[str, str] = {}  # host -> its address
        ip("link", "add", self.bridge, "type", "bridge")
        ip("addr", "add", f"{self.gateway}/24", "dev", self.bridge)
        ip("link", "set", self.bridge, "up")

    def add(self, host: str, n: int) -> str:
        """A namespace `host` at address .n, linked to the bridge; its address."""
        ns, outer, inner = f"tl{self.tag}{host}", f"tv{self.tag}{host}", f"tp{self.tag}{host}"
        ip("netns", "add", ns)
        self.ns[host] = ns
        ip("link", "add", outer, "type", "veth", "peer", "name", inner)
        ip("link", "set", inner, "netns", ns)
        ip("link", "set", outer, "master", self.bridge)
        ip("link", "set", outer, "up")
        ip("link", "set", inner, "name", "eth0", ns=ns)
        ip("addr", "add", f"{self.net}.{n}/24", "dev", "eth0", ns=ns)
        ip("link", "set", "eth0", "up", ns=ns)
        ip("link", "set", "lo", "up", ns=ns)
        self.addr[host] = f"{self.net}.{n}"
        return self.addr[host]

    def cut(self, host: str) -> None:
        """The host's network gone, as a pulled cable: its link down inside it."""
        ip("link", "set", "eth0", "down", ns=self.ns[host])

    def run(self, host: str, cmd: list[str], **kw) -> subprocess.Popen:  # noqa: ANN003
        """A process inside the host's namespace (its own session, so `os.killpg` stops it all)."""
        return subprocess.Popen(["ip", "netns", "exec", self.ns[host], *cmd], start_new_session=True, **kw)

    def close(self) -> None:
        for host, ns in self.ns.items():
            ip("link", "del", f"tv{self.tag}{host}", check=False)  # and its peer, inside the namespace
            ip("netns", "del", ns, check=False)
        ip("link", "del", self.bridge, check=False)
