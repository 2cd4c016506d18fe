"""A deadline for a request's headers: a client that opens connections and sends its headers
slowly (or never) is disconnected after HEADER_TIMEOUT_S, so it cannot hold the server's
connections. uvicorn has a keep-alive timeout but none for headers; this adds one to its HTTP
protocol (httptools when installed, else h11). Pass `http=protocol_class()` to uvicorn."""

from __future__ import annotations

import asyncio
from typing import Any

HEADER_TIMEOUT_S = 10.0


class _HeaderDeadline:
    """Mixin for uvicorn's HTTP protocols: the deadline runs from the connection (or the first
    byte of the next request on a kept-alive connection) to the end of the request's headers."""

    header_timeout_s = HEADER_TIMEOUT_S
    _hdr_timer: asyncio.TimerHandle | None = None

    def connection_made(self, transport: Any) -> None:
        super().connection_made(transport)  # type: ignore[misc]
        self._arm()

    def data_received(self, data: bytes) -> None:
        cycle = self.cycle  # type: ignore[attr-defined]
        if self._hdr_timer is None and (cycle is None or cycle.response_complete):
            self._arm()
        super().data_received(data)  # type: ignore[misc]

    def connection_lost(self, exc: Exception | None) -> None:
        if self._hdr_timer is not None:
            self._hdr_timer.cancel()
            self._hdr_timer = None
        super().connection_lost(exc)  # type: ignore[misc]

    def _arm(self) -> None:
        self._hdr_cycle = self.cycle  # type: ignore[attr-defined]
        self._hdr_timer = self.loop.call_later(self.header_timeout_s, self._expired)  # type: ignore[attr-defined]

    def _expired(self) -> None:
        self._hdr_timer = None
        t = self.transport  # type: ignore[attr-defined]
        # no new request's headers since armed, and still HTTP (not upgraded to a websocket)
        if self.cycle is self._hdr_cycle and t.get_protocol() is self and not t.is_closing():  # type: ignore[attr-defined]
            t.close()


def _build() -> type:
    try:
        from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol as Base
    except ImportError:  # httptools not installed
        from uvicorn.protocols.http.h11_impl import H11Protocol as Base
    cls = type("HeaderDeadlineProtocol", (_HeaderDeadline, Base), {})
    cls.__module__ = __name__  # importable by its qualified name: worker processes unpickle it
    return cls


HeaderDeadlineProtocol = _build()
PROTOCOL_PATH = f"{__name__}:HeaderDeadlineProtocol"  # for uvicorn.run(..., workers=N, http=PROTOCOL_PATH)


def protocol_class() -> type:
    return HeaderDeadlineProtocol
