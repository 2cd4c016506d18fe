"""The benchmarks' small HTTP client (benchmarks/rawhttp.py) against a real socket server: several
requests on one keep-alive connection, Content-Length and chunked bodies, the cookie kept, the
form body sent, and a closed connection reported instead of hanging."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
from rawhttp import Conn, HTTPError  # noqa: E402


async def _serve(seen: list[bytes]) -> asyncio.Server:
    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        n = 0
        while True:
            head = await reader.readuntil(b"\r\n\r\n")
            length = next((int(ln.split(b":")[1]) for ln in head.split(b"\r\n")
                           if ln.lower().startswith(b"content-length:")), 0)
            seen.append(head + await reader.readexactly(length))
            n += 1
            if n == 1:
                writer.write(b"HTTP/1.1 303 See Other\r\nlocation: /p/abc\r\nset-cookie: tl=abc; Path=/\r\n"
                             b"content-length: 0\r\n\r\n")
            elif n == 2:  # the body in pieces, as a slow server sends it
                writer.write(b"HTTP/1.1 200 OK\r\ncontent-length: 11\r\n\r\nhello")
                await writer.drain()
                await asyncio.sleep(0.01)
                writer.write(b" world")
            elif n == 3:
                writer.write(b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n3\r\nabc\r\n2\r\nde\r\n0\r\n\r\n")
            else:
                writer.close()
                return
            await writer.drain()

    return await asyncio.start_server(handle, "127.0.0.1", 0)


def test_keep_alive_bodies_cookie_and_close():
    async def run() -> None:
        seen: list[bytes] = []
        server = await _serve(seen)
        port = server.sockets[0].getsockname()[1]
        c = await Conn.open("127.0.0.1", port)
        status, headers, body = await c.request("POST", "/p/abc/answer", form={"n": "3", "answer": "human"})
        assert (status, headers["location"], body) == (303, "/p/abc", b"")
        assert seen[0].endswith(b"\r\n\r\nn=3&answer=human") and b"Content-Length: 16\r\n" in seen[0]
        assert b"Origin: http://127.0.0.1:" in seen[0]
        assert (await c.request("GET", "/p/abc"))[::2] == (200, b"hello world")
        assert b"Cookie: tl=abc\r\n" in seen[1]  # the cookie of the first response comes back
        assert (await c.request("GET", "/x"))[2] == b"abcde"
        assert len(seen) == 3  # one connection carried all three
        with pytest.raises(HTTPError, match="closed"):
            await asyncio.wait_for(c.request("GET", "/gone"), 5)
        c.close()
        server.close()
        await server.wait_closed()

    asyncio.run(run())
