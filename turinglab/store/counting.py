"""Which games count (issues 35 and 36): one rule for the quotas of `stop_after`, the bonus file
and the admin counts. A game does not count when it is a bot or demo game, a researcher ended it,
or it is too short: ended with fewer interrogator messages than the study's
`counting.min_messages` (at least 1, so an instant verdict never counts) or shorter than
`counting.min_seconds`. A game still in progress may count, so the quotas hold a seat for it.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from sqlalchemy import func, select

from turinglab.store.models import EventRow, GameRow

SHORT_FLAG = "too_short"  # the reason of a game that ended too short to count (instant verdicts included)
NEVER_COUNT = ("bot", "demo", "ended_by_researcher", SHORT_FLAG)


def min_rule(study: Any) -> tuple[int, float]:
    """(minimum interrogator messages, minimum seconds) of a study (its `counting`, or the default)."""
    c = getattr(study, "counting", None)
    return (max(1, c.min_messages), c.min_seconds) if c is not None else (1, 0.0)


def too_short(messages: int, started_ms: int, ended_ms: int | None, rule: tuple[int, float]) -> bool:
    """An ended game below the rule's minimum messages or length."""
    if ended_ms is None:
        return False
    return messages < rule[0] or (ended_ms - started_ms) / 1000 < rule[1]


def why_not(flags: dict[str, Any] | None, short: bool = False) -> str | None:
    """Why a game does not count (the first flag of NEVER_COUNT it has), None when it counts."""
    if short:
        return SHORT_FLAG
    return next((f for f in NEVER_COUNT if (flags or {}).get(f)), None)


def interrogator_messages(store: Any, game_ids: Iterable[str]) -> dict[str, int]:
    """How many messages each game's interrogator sent (games without any are left out)."""
    ids = list(game_ids)
    out: dict[str, int] = {}
    with store._tx() as s:
        for chunk in (ids[i:i + 500] for i in range(0, len(ids), 500)):
            q = (select(EventRow.game_id, func.count()).where(EventRow.game_id.in_(chunk), EventRow.type == "message",
                                                              EventRow.actor == "interrogator")
                 .group_by(EventRow.game_id))
            out.update({g: int(n) for g, n in s.execute(q)})
    return out


def not_counting(store: Any, study_id: int, rule: tuple[int, float]) -> dict[str, str]:
    """The study's games that do not count, each with its reason (a flag name)."""
    with store._tx() as s:
        rows = list(s.execute(select(GameRow.id, GameRow.flags, GameRow.status, GameRow.started_ms, GameRow.ended_ms)
                              .where(GameRow.study_id == study_id)))
    ended = [r for r in rows if r[2] == "ended" and not why_not(r[1])]
    msgs = interrogator_messages(store, [r[0] for r in ended])
    out = {r[0]: why for r in rows if (why := why_not(r[1]))}
    for gid, _, _, start, end in ended:
        if too_short(msgs.get(gid, 0), start, end, rule):
            out[gid] = SHORT_FLAG
    return out
