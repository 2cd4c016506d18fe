"""The bonus payments of a study (issues 27, 35, 36): who is paid what, for which games.

Amounts are counted in hundredths (pence, cents), so the total printed is the file's exact sum.
A Prolific id is paid automatically only when it has Prolific's shape (24 lowercase hex
characters); another id is kept, shown in the games table as unverified, and never paid. Each
Prolific id is paid at most once per game (two browsers of one id in one game: one seat's bonus,
and no bonus for a verdict about itself). Blocked participants and games that do not count
(turinglab/store/counting.py) are left out unless the study's `prolific.pay_blocked` /
`pay_not_counting` say otherwise; the games table says why a line is not paid.
"""

from __future__ import annotations

import csv
import io
import re
from dataclasses import dataclass, field
from typing import Any

from turinglab.store import admin_log
from turinglab.store.counting import min_rule, not_counting

PROLIFIC_ID = re.compile(r"[0-9a-f]{24}")
FORMULA_START = ("=", "+", "-", "@", "\t", "\r")  # what a spreadsheet may read as a formula
PAID = "paid"
TABLE_COLUMNS = ("prolific_pid", "status", "amount", "games", "correct_verdicts", "game_ids")


def verified(prolific_pid: str | None) -> bool:
    """Whether the id has Prolific's shape (24 lowercase hex characters)."""
    return bool(prolific_pid) and PROLIFIC_ID.fullmatch(prolific_pid) is not None


def safe_cell(text: str) -> str:
    """A cell no spreadsheet runs: control characters shown escaped, a formula start quoted."""
    text = "".join(c if c.isprintable() else ascii(c)[1:-1] for c in text)
    return "'" + text if text.startswith(FORMULA_START) else text


@dataclass
class Line:
    """One Prolific id's bonus, or the part of it not paid and why (`status`)."""

    prolific_pid: str
    status: str = PAID
    cents: int = 0
    games: list[str] = field(default_factory=list)
    correct: int = 0

    @property
    def amount(self) -> str:
        return f"{self.cents // 100}.{self.cents % 100:02d}"


@dataclass
class Payments:
    paid: list[Line]
    unpaid: list[Line]

    @property
    def total(self) -> str:
        cents = sum(x.cents for x in self.paid)
        return f"{cents // 100}.{cents % 100:02d}"


def payments(store: Any, study_id: int, per_game: float, per_correct: float, study: Any = None) -> Payments:
    """The bonuses of a study at the given rates; `study` (default: the stored one) gives the
    counting rule and whether blocked participants and games that do not count are paid."""
    study = study if study is not None else store.get_study(study_id).study
    pro = getattr(study, "prolific", None)
    pay_blocked, pay_all = bool(pro and pro.pay_blocked), bool(pro and pro.pay_not_counting)
    g_cents, c_cents = round(per_game * 100), round(per_correct * 100)
    skip = not_counting(store, study_id, min_rule(study))
    games = store.games(study_id)
    people = {g.interrogator_id for g in games} | {i.participant_id for g in games for i in g.seats.values()}
    pid_of = {p.id: p.prolific_pid for p in store.get_participants(sorted(x for x in people if x))}
    blocked = admin_log.blocked(store, study_id)
    blocked_pids = {pid_of.get(b) for b in blocked} - {None}
    lines: dict[tuple[str, str], Line] = {}

    def line(pp: str, why: str) -> Line:
        return lines.setdefault((pp, why), Line(pp, why))

    for g in games:
        seats = [g.interrogator_id, *(i.participant_id for i in g.seats.values())]
        ids = [pid_of.get(x) for x in seats if x]
        if g.status != "ended":
            game_why = "not paid: game in progress"
        elif g.id in skip and not (pay_all and skip[g.id] not in ("bot", "demo")):
            game_why = f"not paid: game does not count ({skip[g.id]})"
        else:
            game_why = PAID
        asker = pid_of.get(g.interrogator_id) if g.interrogator_id else None
        for pp in dict.fromkeys(x for x in ids if x):  # each Prolific id once per game
            if not verified(pp):
                why = "not paid: unverified Prolific id"
            elif any(x in blocked for x in seats if x and pid_of.get(x) == pp) or pp in blocked_pids:
                why = "not paid: blocked" if not pay_blocked else game_why
            else:
                why = game_why
            x = line(pp, why)
            x.games.append(g.id)
            x.cents += g_cents
            right = g.verdict is not None and g.verdict.correct and pp == asker and ids.count(pp) == 1
            if right:
                x.correct += 1
                x.cents += c_cents
    paid = sorted((x for (_, why), x in lines.items() if why == PAID and x.cents > 0), key=lambda x: x.prolific_pid)
    unpaid = sorted((x for (_, why), x in lines.items() if why != PAID), key=lambda x: (x.prolific_pid, x.status))
    return Payments(paid, unpaid)


def prolific_csv(p: Payments) -> str:
    """Prolific's bulk-bonus file: `participant id,amount` lines, no header; each row is checked
    (a Prolific id's shape, an amount) before it is written."""
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    for x in p.paid:
        if not verified(x.prolific_pid) or x.cents <= 0:
            raise ValueError(f"refusing to write a bonus line for {safe_cell(x.prolific_pid)!r}: not a Prolific id")
        w.writerow([x.prolific_pid, x.amount])
    return buf.getvalue()


def games_csv(p: Payments) -> str:
    """The human-readable table beside Prolific's file: per line the games it pays for, and the
    lines not paid with the reason."""
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(TABLE_COLUMNS)
    for x in [*p.paid, *p.unpaid]:
        w.writerow([safe_cell(x.prolific_pid), x.status, x.amount, len(x.games), x.correct, " ".join(x.games)])
    return buf.getvalue()
