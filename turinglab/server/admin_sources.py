"""/admin's view of who wrote the AI witnesses' replies (issue 35): each reply's source on a game's
page, and a warning while a witness's fallback wrote more than FALLBACK_WARN of its last
FALLBACK_WINDOW replies (its model failing or too slow: the games test the fallback, not it)."""

from __future__ import annotations

from typing import Any

from turinglab.game.events import MESSAGE, source_of

FALLBACK_WINDOW = 20  # the last replies of a witness the warning reads
FALLBACK_WARN = 0.2  # warn above this share of them written by the fallback


def reply_source(payload: dict[str, Any], kind: str) -> str:
    """What a transcript shows of a witness reply's author."""
    src = source_of(payload, kind)
    if src in ("human", "unknown"):
        return src
    model = payload.get("model")
    return f"{src} ({model})" if model else src


def fallback_warnings(store: Any, games: list, window: int = FALLBACK_WINDOW,
                      warn: float = FALLBACK_WARN) -> list[dict[str, Any]]:
    """Per AI witness whose fallback wrote more than `warn` of its last `window` replies (newest
    games first, stored replies only): codename, fallback replies, replies read, share."""
    seen: dict[str, list[str]] = {}
    for g in sorted(games, key=lambda g: g.started_ms, reverse=True):
        ai = {seat: i.witness for seat, i in g.seats.items() if i.kind == "ai"
              and len(seen.get(i.witness, ())) < window}
        if not ai:
            continue
        for e in reversed(store.events(g.id)):
            if e.type == MESSAGE and e.actor in ai and len(seen.setdefault(ai[e.actor], [])) < window:
                seen[ai[e.actor]].append(source_of(e.payload, "ai"))
    out = []
    for codename, sources in sorted(seen.items()):
        fell = sum(s == "fallback" for s in sources)
        if sources and fell / len(sources) > warn:
            out.append({"codename": codename, "fallback": fell, "replies": len(sources),
                        "share": f"{fell / len(sources):.0%}"})
    return out
