"""A small HTTP/1.1 keep-alive client for the benchmarks: one connection per simulated user (as a
browser keeps one), requests written as bytes and responses parsed by hand (status line, headers,
Content-Length or chunked body). It costs the benchmark process tens of microseconds per request,
where a general client costs about a millisecond, so a 2-core machine can serve and drive hundreds
of users at once and the measured latency is the server's, not the client's queue.

    conn = await Conn.open("127.0.0.1", port)
    status, headers, body = await conn.request("POST", "/p/x/answer", form={"n": "0"})
"""

from __future__ import annotations

import asyncio
from urllib.parse import urlencode


class HTTPError(Exception):
    """The connection closed or the server sent something this client cannot read."""


class _Proto(asyncio.Protocol):
    def __init__(self) -> None:
        self.buf = bytearray()
        self.waiter: asyncio.Future | None = None
        self.closed: Exception | None = None
        self.transport: asyncio.Transport | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]

    def data_received(self, data: bytes) -> None:
        self.buf += data
        self._wake()

    def connection_lost(self, exc: Exception | None) -> None:
        self.closed = exc or HTTPError("connection closed by the server")
        self._wake()

    def _wake(self) -> None:
        if self.waiter is not None and not self.waiter.done():
            self.waiter.set_result(None)

    async def more(self) -> None:
        if self.closed is not None:
            raise HTTPError(str(self.closed))
        self.waiter = asyncio.get_running_loop().create_future()
        await self.waiter
        self.waiter = None


class Conn:
    """One keep-alive connection; requests on it go one at a time (as a browser tab's)."""

    def __init__(self, proto: _Proto, host: str) -> None:
        self.p, self.host = proto, host
        self.cookie: str | None = None

    @classmethod
    async def open(cls, host: str, port: int) -> Conn:
        _, proto = await asyncio.get_running_loop().create_connection(_Proto, host, port)
        return cls(proto, f"{host}:{port}")

    def close(self) -> None:
        if self.p.transport is not None:
            self.p.transport.close()

    async def request(self, method: str, path: str, form: dict[str, str] | None = None
                      ) -> tuple[int, dict[str, str], bytes]:
        body = urlencode(form).encode() if form is not None else b""
        head = f"{method} {path} HTTP/1.1\r\nHost: {self.host}\r\nAccept: text/html\r\n"
        if self.cookie:
            head += f"Cookie: {self.cookie}\r\n"
        if method == "POST":  # a browser's form post names its origin
            head += f"Origin: http://{self.host}\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: {len(body)}\r\n"
        if self.p.closed is not None or self.p.transport is None:
            raise HTTPError(f"connection closed ({self.p.closed})")
        self.p.transport.write(head.encode() + b"\r\n" + body)
        return await self._response(method)

    async def _response(self, method: str) -> tuple[int, dict[str, str], bytes]:
        p = self.p
        while (end := p.buf.find(b"\r\n\r\n")) < 0:
            await p.more()
        lines = bytes(p.buf[:end]).decode("latin-1").split("\r\n")
        del p.buf[:end + 4]
        parts = lines[0].split(" ", 2)
        if len(parts) < 2 or not parts[0].startswith("HTTP/1.") or not parts[1].isdigit():
            raise HTTPError(f"not an HTTP response: {lines[0]!r}")
        status = int(parts[1])
        headers: dict[str, str] = {}
        for ln in lines[1:]:
            k, _, v = ln.partition(":")
            k, v = k.strip().lower(), v.strip()
            if k == "set-cookie":
                self.cookie = v.split(";", 1)[0]
            headers[k] = v
        if method == "HEAD" or status in (204, 304) or 100 <= status < 200:
            return status, headers, b""
        if headers.get("transfer-encoding", "").lower() == "chunked":
            return status, headers, await self._chunked()
        n = int(headers.get("content-length", "0"))
        while len(p.buf) < n:
            await p.more()
        body = bytes(p.buf[:n])
        del p.buf[:n]
        return status, headers, body

    async def _chunked(self) -> bytes:
        p, out = self.p, bytearray()
        while True:
            while (end := p.buf.find(b"\r\n")) < 0:
                await p.more()
            size = int(bytes(p.buf[:end]).split(b";")[0], 16)
            del p.buf[:end + 2]
            while len(p.buf) < size + 2:
                await p.more()
            out += p.buf[:size]
            del p.buf[:size + 2]
            if size == 0:
                return bytes(out)
