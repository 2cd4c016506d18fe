"""A TCP relay to stand between a server and PostgreSQL (or anything else): killing it is a database
outage for everyone connected through it, without stopping the machine's PostgreSQL that other
tests share; starting it again on the same port ends the outage.

    python tests/server/live/tcp_relay.py LISTEN_HOST LISTEN_PORT TARGET_HOST TARGET_PORT
"""

from __future__ import annotations

import asyncio
import socket
import subprocess
import sys
import time
from pathlib import Path


async def _pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    try:
        while data := await reader.read(65536):
            writer.write(data)
            await writer.drain()
    except (ConnectionError, OSError):
        pass
    finally:
        writer.close()


async def _serve(host: str, port: int, to_host: str, to_port: int) -> None:
    async def one(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            up_r, up_w = await asyncio.open_connection(to_host, to_port)
        except OSError:
            writer.close()
            return
        await asyncio.gather(_pipe(reader, up_w), _pipe(up_r, writer))

    server = await asyncio.start_server(one, host, port, reuse_address=True)
    print("listening", flush=True)
    async with server:
        await server.serve_forever()


def start(host: str, port: int, to_host: str, to_port: int) -> subprocess.Popen:
    """The relay as a subprocess, once it listens."""
    proc = subprocess.Popen([sys.executable, str(Path(__file__)), host, str(port), to_host, str(to_port)],
                            stdout=subprocess.PIPE, text=True, start_new_session=True)
    assert proc.stdout is not None and proc.stdout.readline().strip() == "listening", "the TCP relay did not start"
    return proc


def wait_closed(host: str, port: int, timeout: float = 10) -> None:
    """Until nothing answers at host:port (the relay is gone)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            socket.create_connection((host, port), 0.5).close()
        except OSError:
            return
        time.sleep(0.1)
    raise AssertionError(f"{host}:{port} still answers")


if __name__ == "__main__":
    a = sys.argv[1:]
    asyncio.run(_serve(a[0], int(a[1]), a[2], int(a[3])))
