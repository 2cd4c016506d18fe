"""Which proxies may say who the client is (issue 24). uvicorn trusts X-Forwarded-For and
X-Forwarded-Proto from 127.0.0.1 by default, so anyone behind a local proxy that does not set the
header could choose their address; here nothing is trusted unless `serve --forwarded-allow-ips`
(or $TURINGLAB_FORWARDED_ALLOW_IPS) names the proxies, e.g. "127.0.0.1" or "10.0.0.5,10.0.0.6"."""

from __future__ import annotations

import os

ENV = "TURINGLAB_FORWARDED_ALLOW_IPS"


def proxy_settings(allow: str | None = None) -> dict[str, object]:
    """uvicorn's keyword arguments: proxy headers only from the named addresses (none by default)."""
    allow = (allow if allow is not None else os.environ.get(ENV, "")).strip()
    return {"proxy_headers": bool(allow), "forwarded_allow_ips": allow or ""}
