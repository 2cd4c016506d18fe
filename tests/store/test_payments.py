"""The bonus payments (issues 35.6 and 36.1) on a real SQLite database: games played through the
engine and stored, then paid. Only Prolific-shaped ids are paid, the file parses as Prolific's two
columns whose sum is the printed total, one seat per id per game, blocked participants and games
that do not count left out unless the study says otherwise."""

from __future__ import annotations

import csv
import io
from decimal import Decimal

import pytest

from turinglab.game.config import Counting, Prolific, Rules, Study
from turinglab.game.engine import Game, GiveVerdict, Send
from turinglab.game.events import Identity
from turinglab.store import admin_log
from turinglab.store.api import Store
from turinglab.store.payments import games_csv, payments, prolific_csv, safe_cell, verified

T0 = 1_700_000_000_000
HEX = ["5f0c1a2b3c4d5e6f70819a2b", "60aa1b2c3d4e5f60718293a4", "61bb2c3d4e5f6071829304b5", "62cc3d4e5f607182930415c6"]
EVIL = ["5f0c1a2b3c4d5e6f70819a2b,99.99", "x\n60aa1b2c3d4e5f60718293a4,50", "=HYPERLINK(\"http://e.x\",\"y\")",
        "@SUM(A1:A9)"]


def study(**kw) -> Study:
    return Study.model_validate({"name": "pay", "witnesses": [{"codename": "Dragon", "kind": "eliza"}],
                                 "prolific": {"bonus_per_game": 0.1, "bonus_per_correct": 0.2}, **kw})


def play(store: Store, sid: int, asker: str, witness: str | None, *, messages: int = 2, choice: str = "human",
         t0: int = T0, seconds: int = 60) -> str:
    """A two-player game stored event by event: `messages` exchanges, then the verdict."""
    seat = Identity("human", None, witness, 1.0) if witness else Identity("ai", "Dragon", None, 1.0)
    gid = store.create_game(sid, "two-player", {"A": seat}, asker, t0)
    g = Game.start("two-player", Rules(), t0)
    evs = list(g.log)
    t = t0
    for i in range(messages):
        t += 1000
        evs += g.apply(Send("interrogator", f"hi {i}"), t).events
        t += 1000
        evs += g.apply(Send("A", f"hey {i}"), t).events
    evs += g.apply(GiveVerdict("interrogator", choice, 80), max(t, t0 + seconds * 1000)).events
    store.append_events(gid, evs)
    return gid


def parse(text: str) -> list[tuple[str, Decimal]]:
    rows = list(csv.reader(io.StringIO(text)))
    assert all(len(r) == 2 for r in rows), rows
    return [(a, Decimal(b)) for a, b in rows]


@pytest.fixture
def store(sqlite_url):
    s = Store(sqlite_url)
    yield s
    s.close()


def test_only_prolific_ids_are_paid_and_the_file_sums_to_the_total(store):
    sid = store.register_study(study())
    good = [store.create_participant(t_ms=1, prolific_pid=h) for h in HEX[:2]]
    bad = [store.create_participant(t_ms=1, prolific_pid=e) for e in EVIL]
    for i, b in enumerate(bad):
        play(store, sid, b, good[i % 2], choice="human", t0=T0 + i * 100_000)  # right verdicts for the evil ids
    play(store, sid, good[0], None, choice="ai", t0=T0 + 900_000)  # right: 0.1 + 0.2
    pay = payments(store, sid, 0.1, 0.2)
    text = prolific_csv(pay)
    rows = parse(text)
    assert [r[0] for r in rows] == HEX[:2]
    assert all(verified(r[0]) for r in rows)
    assert str(sum(a for _, a in rows)) == pay.total == "0.70"  # 0.1 x 2 + 0.3, and 0.1 x 2
    assert dict(rows) == {HEX[0]: Decimal("0.50"), HEX[1]: Decimal("0.20")}
    for e in EVIL:  # kept, listed as unverified in the games table, never in Prolific's file
        assert e not in text and e.split(",")[0].split("\n")[-1] not in {r[0] for r in rows} - set(HEX[:2])
    table = list(csv.DictReader(io.StringIO(games_csv(pay))))
    unverified = [r for r in table if r["status"] == "not paid: unverified Prolific id"]
    assert len(unverified) == 4
    for r in table:  # nothing a spreadsheet runs, no raw line break
        assert not r["prolific_pid"].startswith(("=", "+", "-", "@", "\t", "\r")) and "\n" not in r["prolific_pid"]
    assert sum(int(r["games"]) for r in table if r["status"] == "paid") == 5
    assert {r["prolific_pid"] for r in table if r["status"] == "paid"} == set(HEX[:2])
    assert safe_cell("=1+1") == "'=1+1" and safe_cell("a\nb") == "a\\nb"


def test_the_file_writer_checks_every_row(store):
    sid = store.register_study(study())
    pay = payments(store, sid, 0.1, 0.2)
    from turinglab.store.payments import Line

    pay.paid.append(Line("=cmd|'/c calc'!A1", cents=100))
    with pytest.raises(ValueError, match="not a Prolific id"):
        prolific_csv(pay)


def test_one_seat_per_id_per_game(store):
    sid = store.register_study(study())
    a = store.create_participant(t_ms=1, prolific_pid=HEX[0])
    a2 = store.create_participant(t_ms=1, prolific_pid=HEX[0], label="duplicate_prolific_pid")  # a second browser
    b = store.create_participant(t_ms=1, prolific_pid=HEX[1])
    gid = play(store, sid, a, a2, choice="human")  # the same id in both seats, "right" about itself
    play(store, sid, b, a, choice="human", t0=T0 + 100_000)
    pay = payments(store, sid, 0.1, 0.2)
    amounts = dict(parse(prolific_csv(pay)))
    assert amounts == {HEX[0]: Decimal("0.20"), HEX[1]: Decimal("0.30")}  # one seat of gid, no bonus for it
    line = next(x for x in pay.paid if x.prolific_pid == HEX[0])
    assert line.games.count(gid) == 1 and line.correct == 0


def test_blocked_and_not_counting_left_out_unless_the_study_says(store):
    sid = store.register_study(study(counting=Counting(min_messages=2)))
    a, b, c = (store.create_participant(t_ms=1, prolific_pid=h) for h in HEX[:3])
    long_game = play(store, sid, a, None, choice="ai")
    short = play(store, sid, a, None, messages=0, choice="ai", t0=T0 + 100_000)  # an instant verdict
    one = play(store, sid, c, None, messages=1, choice="ai", t0=T0 + 200_000)  # below min_messages
    play(store, sid, b, None, choice="ai", t0=T0 + 300_000)
    admin_log.record(store, sid, "ana", "block", b, "abuse", T0)
    pay = payments(store, sid, 0.1, 0.2)
    assert dict(parse(prolific_csv(pay))) == {HEX[0]: Decimal("0.30")}
    assert next(x for x in pay.paid if x.prolific_pid == HEX[0]).games == [long_game]
    why = {(x.prolific_pid, x.status): x.games for x in pay.unpaid}
    assert why == {(HEX[0], "not paid: game does not count (too_short)"): [short],
                   (HEX[1], "not paid: blocked"): [pay_game(store, b)],
                   (HEX[2], "not paid: game does not count (too_short)"): [one]}
    # the quota counts the same games
    assert admin_log.counts(store, sid, (2, 0.0))[0] == 2
    # the study may pay them
    generous = study(counting=Counting(min_messages=2),
                     prolific=Prolific(bonus_per_game=0.1, bonus_per_correct=0.2, pay_blocked=True, pay_not_counting=True))
    pay = payments(store, sid, 0.1, 0.2, generous)
    assert dict(parse(prolific_csv(pay))) == {HEX[0]: Decimal("0.60"), HEX[1]: Decimal("0.30"), HEX[2]: Decimal("0.30")}
    assert pay.total == "1.20"


def pay_game(store: Store, pid: str) -> str:
    return next(g.id for g in store.games() if g.interrogator_id == pid)
