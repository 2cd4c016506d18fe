"""Showing a stored game to a researcher: `turinglab db show` and `turinglab db games`."""

from __future__ import annotations

import json
from dataclasses import asdict
from datetime import datetime, timezone
from typing import Any

from rich.markup import escape
from rich.table import Table

from turinglab.game.events import AUTHOR_KEYS, MESSAGE, source_of
from turinglab.store.api import GameInfo, Store


def iso(ms: int | None) -> str:
    if ms is None:
        return ""
    return datetime.fromtimestamp(ms / 1000, tz=timezone.utc).isoformat(timespec="milliseconds")


def game_json(store: Store, game_id: str) -> dict[str, Any]:
    """The game, its seats and verdict, and every event (with hidden identities), as JSON data."""
    info = store.game(game_id)
    return {
        "game": asdict(info),
        "events": [
            {**r.event.to_dict(), "identity": r.identity, "study_hash": r.study_hash}
            for r in store.event_rows(game_id)
        ],
    }


def game_table(store: Store, game_id: str) -> tuple[str, Table]:
    """A header line and a table of the game's events (user text escaped for rich)."""
    info = store.game(game_id)
    seats = ", ".join(f"{s}={i.kind}" + (f":{i.witness}" if i.witness else "") for s, i in info.seats.items())
    verdict = "none"
    if info.verdict:
        v = info.verdict
        verdict = f"{v.choice} ({v.confidence}) correct={v.correct}" + (" forced" if v.forced else "")
    head = (f"game {info.id}  study {info.study_id} ({info.study_hash[:12]})  {info.format}  "
            f"status {info.status}  end {info.end_reason or '-'}  seats {seats}  verdict {verdict}  "
            f"flags {json.dumps(info.flags)}")
    t0 = info.started_ms
    table = Table(show_lines=False)
    for col in ("seq", "+s", "type", "actor", "conv", "source", "payload"):
        table.add_column(col, justify="right" if col in ("seq", "+s") else "left", overflow="fold")
    for r in store.event_rows(game_id):
        e = r.event
        table.add_row(str(e.seq), f"{(e.t_ms - t0) / 1000:.3f}", e.type, e.actor, e.conversation or "",
                      reply_source(e, info), escape(_payload(e.payload)))
    return head, table


def reply_source(e: Any, info: GameInfo) -> str:
    """Who wrote a witness message (events.source_of, with the AI's model, calls and latency); ''
    for other events."""
    if e.type != MESSAGE or e.actor not in info.seats:
        return ""
    seat = info.seats[e.actor]
    src = source_of(e.payload, seat.kind)
    if src in ("human", "unknown"):
        return src
    p = e.payload
    return f"{src} ({p.get('model') or '?'}, {p.get('tries', '?')} tries, {p.get('latency_ms', '?')} ms)"


def _payload(p: dict[str, Any]) -> str:
    p = {k: v for k, v in p.items() if k not in AUTHOR_KEYS}  # the author has its own column
    if set(p) == {"text"}:
        return repr(p["text"])
    return json.dumps(p, ensure_ascii=False)


GAME_COLUMNS = ("game", "study", "format", "started (UTC)", "status", "end", "seats", "verdict", "flags")


def games_rows(games: list[GameInfo]) -> list[tuple[str, ...]]:
    """One row of plain text per game, in the order of GAME_COLUMNS."""
    rows = []
    for g in games:
        seats = " ".join(f"{s}:{i.witness or i.kind}" for s, i in g.seats.items())
        v = g.verdict
        verdict = f"{v.choice}/{v.confidence}{'' if v.correct is None else (' ✓' if v.correct else ' ✗')}" if v else ""
        started = datetime.fromtimestamp(g.started_ms / 1000, tz=timezone.utc).strftime("%Y-%m-%d %H:%M:%S")
        rows.append((g.id, str(g.study_id), g.format, started, g.status, g.end_reason or "", seats, verdict,
                     ",".join(sorted(g.flags))))
    return rows


def games_table(games: list[GameInfo]) -> Table:
    table = Table()
    for col in GAME_COLUMNS:
        table.add_column(col, overflow="fold", no_wrap=col == "game")
    for row in games_rows(games):
        table.add_row(*row[:6], *(escape(c) for c in row[6:]))
    return table


def names_static_study(db: str | None, study: str | None) -> bool:
    """Does `study` name a static study (and no live one) in the database at `db`? Without a
    study: no live study has games and there is exactly one static study. No database: False."""
    from turinglab.store.db import StoreError, existing_database

    try:
        with Store(existing_database(db)) as st:
            static = st.static_studies()
            if not static:
                return False
            live = st.studies()
            if study is None:
                return len(static) == 1 and not any(st.has_games(s.id) for s in live)
            is_live = any(str(s.id) == str(study) or s.name == study for s in live)
            return not is_live and any(str(s.id) == str(study) or s.name == study for s in static)
    except StoreError:
        return False


def games_tsv(games: list[GameInfo]) -> str:
    """The same rows tab-separated, for a pipe or a file (a table would fold its cells at 80 columns)."""
    clean = [tuple(c.replace("\t", " ").replace("\n", " ") for c in row) for row in games_rows(games)]
    return "\n".join("\t".join(row) for row in [GAME_COLUMNS, *clean]) + "\n"
