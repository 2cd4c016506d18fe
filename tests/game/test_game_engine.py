"""The pure game engine: rules, refusals, verdicts, time, replay."""

from __future__ import annotations

import json
import random

import pytest

from turinglab.game.config import Rules
from turinglab.game.engine import (
    Disconnect,
    End,
    Game,
    GameError,
    GiveVerdict,
    Leave,
    Paste,
    Reconnect,
    ReportAbuse,
    Send,
    Tick,
    Typing,
)
from turinglab.game.events import Event

T0 = 1_700_000_000_000
I = "interrogator"


def two(rules: Rules | None = None) -> Game:
    return Game.start("two-player", rules or Rules(), T0)


def three(rules: Rules | None = None) -> Game:
    return Game.start("three-player", rules or Rules(), T0)


def test_interrogator_opens_then_strict_alternation():
    g = two()
    assert g.whose_turn("A") == I
    out = g.apply(Send("A", "hi"), T0 + 10)
    assert (out.ok, out.code) == (False, "not_your_turn")
    assert out.events[0].type == "refused" and out.events[0].payload["text"] == "hi"
    assert g.apply(Send(I, "hello"), T0 + 20).ok
    assert g.whose_turn("A") == "witness"
    assert g.apply(Send(I, "again"), T0 + 30).code == "not_your_turn"
    assert g.apply(Send("A", "hey"), T0 + 40).ok
    assert g.whose_turn("A") == I
    texts = [m.text for m in g.conversations["A"].messages]
    assert texts == ["hello", "hey"]
    assert g.refusals == 2


def test_three_player_alternation_is_per_conversation():
    g = three()
    assert g.apply(Send(I, "to A", "A"), T0 + 1).ok
    assert g.apply(Send(I, "to B", "B"), T0 + 2).ok  # A has not answered, B is separate
    assert g.apply(Send(I, "A again", "A"), T0 + 3).code == "not_your_turn"
    assert g.apply(Send("B", "b reply"), T0 + 4).ok
    assert g.apply(Send("B", "b twice"), T0 + 5).code == "not_your_turn"
    assert g.whose_turn("A") == "witness" and g.whose_turn("B") == I
    assert g.apply(Send(I, "no conversation"), T0 + 6).code == "unknown_conversation"
    assert g.apply(Send(I, "bad", "C"), T0 + 6).code == "unknown_conversation"
    assert g.apply(Send("A", "into B", "B"), T0 + 7).code == "unknown_conversation"


def test_witness_seat_B_does_not_exist_in_two_player():
    g = two()
    out = g.apply(Send("B", "hi"), T0 + 1)
    assert out.code == "unknown_seat" and "B" in out.detail
    out = g.apply(Send("nobody" * 100, "hi"), T0 + 2)
    assert out.code == "unknown_seat" and out.events[0].actor == "unknown"


def test_length_and_empty_limits():
    g = two(Rules(max_chars=10))
    out = g.apply(Send(I, "x" * 11), T0 + 1)
    assert out.code == "too_long" and "11" in out.detail and "10" in out.detail
    assert g.apply(Send(I, "   \n"), T0 + 2).code == "empty"
    assert g.apply(Send(I, "x" * 10), T0 + 3).ok


def test_free_alternation_once_the_interrogator_has_opened():
    g = two(Rules(strict_alternation=False))
    assert g.apply(Send("A", "early"), T0 + 1).code == "not_your_turn"
    assert g.apply(Send(I, "one"), T0 + 2).ok
    assert g.apply(Send(I, "two"), T0 + 3).ok
    assert g.apply(Send("A", "a"), T0 + 4).ok
    assert g.apply(Send("A", "b"), T0 + 5).ok
    g2 = two(Rules(interrogator_first=False))
    assert g2.apply(Send("A", "I start"), T0 + 1).ok
    assert g2.apply(Send("A", "again"), T0 + 2).code == "not_your_turn"


def test_message_count_limit():
    g = two(Rules(max_messages=1))
    assert g.apply(Send(I, "one"), T0 + 1).ok
    assert g.apply(Send("A", "one"), T0 + 2).ok
    assert g.apply(Send(I, "two"), T0 + 3).code == "too_many_messages"


def test_time_limit_closes_chat_and_forces_verdict():
    g = two(Rules(time_limit_s=5))
    assert g.apply(Send(I, "hi"), T0 + 1000).ok
    assert g.time_left_ms(T0 + 1000) == 4000
    out = g.apply(Send("A", "late"), T0 + 5001)
    assert (out.ok, out.code) == (False, "time_up")
    assert [e.type for e in out.events] == ["time_up", "refused"]
    assert out.events[0].t_ms == T0 + 5000  # at the deadline, not when it was noticed
    assert g.state == "awaiting_verdict" and not g.chat_open and g.time_left_ms(T0 + 5001) == 0
    assert g.apply(Send(I, "more"), T0 + 6000).code == "time_up"
    out = g.apply(GiveVerdict(I, "ai", 80, "too fast"), T0 + 9000)
    assert out.ok and g.state == "ended" and g.end_reason == "verdict"
    assert g.verdict == {"choice": "ai", "confidence": 80, "reason": "too fast", "forced": True, "t_ms": T0 + 9000}


def test_tick_fires_the_time_limit():
    g = two(Rules(time_limit_s=1))
    assert g.apply(Tick(), T0 + 999).events == []
    out = g.apply(Tick(), T0 + 1000)
    assert [e.type for e in out.events] == ["time_up"] and g.state == "awaiting_verdict"


def test_verdict_grace_ends_the_game_without_a_verdict():
    g = two(Rules(time_limit_s=1, verdict_grace_s=2))
    g.apply(Tick(), T0 + 1000)
    g.apply(Tick(), T0 + 2999)
    assert g.state == "awaiting_verdict"
    out = g.apply(GiveVerdict(I, "human", 50), T0 + 3000)
    assert out.code == "game_over" and g.end_reason == "verdict_timeout" and g.verdict is None


def test_verdict_any_time_interrogator_only():
    g = two()
    assert g.apply(GiveVerdict("A", "human", 50), T0 + 1).code == "not_interrogator"
    assert g.apply(GiveVerdict(I, "human", 50), T0 + 2).ok  # before any message
    assert g.state == "ended" and g.verdict["forced"] is False
    assert g.apply(Send(I, "hi"), T0 + 3).code == "game_over"
    assert g.apply(GiveVerdict(I, "ai", 50), T0 + 4).code == "already_decided"  # documented in docs/protocol.md


@pytest.mark.parametrize(
    "fmt,choice,conf,ok",
    [
        ("two-player", "human", 0, True),
        ("two-player", "ai", 100, True),
        ("two-player", "A", 50, False),
        ("two-player", "Human", 50, False),
        ("two-player", "ai", 101, False),
        ("two-player", "ai", -1, False),
        ("two-player", "ai", 50.5, False),
        ("two-player", "ai", True, False),
        ("three-player", "A", 50, True),
        ("three-player", "B", 50, True),
        ("three-player", "human", 50, False),
        ("three-player", "both", 50, False),
    ],
)
def test_verdict_forms(fmt, choice, conf, ok):
    g = Game.start(fmt, Rules(), T0)
    out = g.apply(GiveVerdict(I, choice, conf), T0 + 1)
    assert out.ok is ok
    if not ok:
        assert out.code == "bad_verdict" and g.state == "in_progress" and g.verdict is None
        assert out.events[-1].payload["choice"] == str(choice)


def test_too_long_reason_refused_and_blank_reason_dropped():
    g = two()
    assert g.apply(GiveVerdict(I, "ai", 5, "x" * 2001), T0 + 1).code == "bad_verdict"
    assert g.apply(GiveVerdict(I, "ai", 5, "   "), T0 + 2).ok
    assert g.verdict["reason"] is None


def test_abuse_report_ends_and_flags():
    g = two()
    g.apply(Send(I, "hi"), T0 + 1)
    out = g.apply(ReportAbuse("A", "rude"), T0 + 2)
    assert out.ok and [e.type for e in out.events] == ["abuse_report", "game_ended"]
    assert g.state == "ended" and g.end_reason == "abuse_report" and g.flags["abuse_reported"]


def test_paste_is_recorded_and_blocked_or_allowed():
    g = two()
    out = g.apply(Paste(I, 42), T0 + 1)
    assert out.code == "paste_blocked" and out.events[0].payload == {"length": 42, "blocked": True}
    g2 = two(Rules(block_paste=False))
    out = g2.apply(Paste(I, 42), T0 + 1)
    assert out.ok and g2.pastes == {I: 1}


def test_leave_and_reconnect():
    g = two()
    g.apply(Send(I, "hi"), T0 + 1)
    g.apply(Disconnect("A"), T0 + 2)
    assert g.connected["A"] is False
    g.apply(Reconnect("A"), T0 + 3)
    assert g.connected["A"] is True and g.state == "in_progress"
    g.apply(Leave("A"), T0 + 4)
    assert g.state == "awaiting_verdict" and g.flags["witness_left"]
    assert g.apply(Send(I, "hello?"), T0 + 5).code == "chat_closed"
    assert g.apply(GiveVerdict(I, "human", 70), T0 + 6).ok
    g2 = two()
    g2.apply(Leave(I), T0 + 1)
    assert g2.state == "ended" and g2.end_reason == "interrogator_left" and g2.verdict is None


def test_system_end_and_typing():
    g = two()
    g.apply(Send(I, "hi"), T0 + 1)
    assert g.apply(Typing("A"), T0 + 2).ok
    assert g.apply(End("stdin_closed"), T0 + 3).ok
    assert g.end_reason == "stdin_closed"
    assert g.apply(End("again"), T0 + 4).code == "game_over"


def test_event_times_never_go_backwards():
    g = two()
    g.apply(Send(I, "hi"), T0 + 100)
    out = g.apply(Send("A", "yo"), T0 + 50)
    assert out.events[0].t_ms == T0 + 100


def test_snapshot_hides_what_the_interrogator_must_not_see():
    g = three()
    g.apply(Send(I, "hi A", "A"), T0 + 1)
    g.apply(Send("A", "hey", "A"), T0 + 2)
    g.apply(Disconnect("B"), T0 + 3)
    snap = g.snapshot(I, T0 + 1000)
    assert snap["conversations"]["A"]["messages"][1] == {"t_ms": T0 + 2, "from": "them", "text": "hey"}
    assert snap["conversations"]["A"]["your_turn"] and snap["conversations"]["B"]["your_turn"]
    assert snap["time_left_ms"] == 299_000
    blob = json.dumps(snap)
    for word in ("connected", "disconnected", "kind", "witness_left", "human", "codename"):
        assert word not in blob
    # a witness sees only its own conversation, and no verdict until the end
    a = g.snapshot("A", T0 + 1000)
    assert list(a["conversations"]) == ["A"] and a["conversations"]["A"]["messages"][0]["from"] == "them"
    g.apply(GiveVerdict(I, "A", 60), T0 + 2000)
    assert g.snapshot("B", T0 + 2001)["verdict"]["choice"] == "A"
    with pytest.raises(ValueError, match="unknown seat"):
        g.snapshot("C", T0)


def test_replay_rebuilds_identical_state_and_checks_order():
    g = three(Rules(time_limit_s=3))
    g.apply(Send(I, "a", "A"), T0 + 1)
    g.apply(Send("A", "b"), T0 + 2)
    g.apply(Paste(I, 3, "B"), T0 + 3)
    g.apply(Send(I, "c", "C"), T0 + 4)
    g.apply(Tick(), T0 + 3000)
    g.apply(GiveVerdict(I, "B", 90, "typos"), T0 + 3500)
    dicts = [e.to_dict() for e in g.log]
    again = Game.replay([Event.from_dict(json.loads(json.dumps(d))) for d in dicts])
    assert again.state_dict() == g.state_dict()
    with pytest.raises(GameError, match="gap"):
        Game.replay(g.log[:2] + g.log[3:])
    with pytest.raises(GameError, match="seq 1 .message. cannot be applied"):
        Game.replay([g.log[0], Event(1, T0, "message", I, "A", {"txt": "x"})])
    with pytest.raises(GameError, match="unknown event type"):
        Game.replay([g.log[0], Event(1, T0, "teleport", I, "A", {})])
    with pytest.raises(GameError, match="starts with"):
        Game.replay([Event(0, T0, "message", I, "A", {"text": "x"})])


def random_actions(rng: random.Random, fmt: str, n: int):
    seats = [I, "A"] + (["B"] if fmt == "three-player" else [])
    t = T0
    for _ in range(n):
        t += rng.choice([0, 1, 500, 5_000, 40_000])
        seat = rng.choice(seats)
        conv = rng.choice([None, "A", "B", "Z"])
        kind = rng.random()
        if kind < 0.6:
            text = rng.choice(["", "hi", "x" * 301, "how are you?", "  "])
            a = Send(seat, text, conv)
        elif kind < 0.7:
            a = GiveVerdict(seat, rng.choice(["human", "ai", "A", "B", "x"]), rng.choice([0, 50, 100, 101]),
                            rng.choice([None, "r"]))
        elif kind < 0.75:
            a = Paste(seat, rng.randint(0, 500), conv)
        elif kind < 0.8:
            a = rng.choice([Disconnect(seat), Reconnect(seat), Typing(seat, conv), Tick()])
        elif kind < 0.82:
            a = rng.choice([Leave(seat), ReportAbuse(seat, "r", conv), End("aborted")])
        else:
            a = Send(seat, "ok", conv)
        yield a, t


@pytest.mark.parametrize("seed", range(60))
def test_random_games_replay_exactly(seed):
    rng = random.Random(seed)
    fmt = rng.choice(["two-player", "three-player"])
    rules = Rules(time_limit_s=rng.choice([30, 300]), max_messages=rng.choice([None, 3]),
                  strict_alternation=rng.random() < 0.8, interrogator_first=rng.random() < 0.8)
    g = Game.start(fmt, rules, T0)
    for a, t in random_actions(rng, fmt, 80):
        n, ended = len(g.log), g.state == "ended"
        out = g.apply(a, t)
        assert out.events == g.log[n:]
        if ended:  # nothing is appended after game_ended
            assert not out.ok and out.events == []
        else:
            assert out.ok == (not any(e.type == "refused" for e in out.events))
        assert all(e.seq == i for i, e in enumerate(g.log))
        assert all(x.t_ms <= y.t_ms for x, y in zip(g.log, g.log[1:]))
    for c in g.conversations.values():  # the rules can never be broken, whatever was attempted
        assert all(len(m.text) <= rules.max_chars and m.text.strip() for m in c.messages)
        assert all(m.t_ms < g.deadline_ms for m in c.messages)
        sides = ["i" if m.sender == I else "w" for m in c.messages]
        if rules.interrogator_first and sides:
            assert sides[0] == "i"
        if rules.strict_alternation:
            assert all(x != y for x, y in zip(sides, sides[1:]))
        if rules.max_messages:
            assert max(sides.count("i"), sides.count("w")) <= rules.max_messages
    assert Game.replay(list(g.log)).state_dict() == g.state_dict()


def test_refuse_records_an_outside_refusal_and_replays():
    g = Game.start("two-player", Rules(time_limit_s=60), 1000)
    g.apply(Send("interrogator", "hello", "A"), 1100)
    before = g.state_dict()
    out = g.refuse(Send("A", "a rude word", "A"), "blocked", "word list: 'rude'", 1200)
    assert not out.ok and out.code == "blocked" and out.detail == "word list: 'rude'"
    assert [e.type for e in out.events] == ["refused"]
    e = out.events[0]
    assert (e.actor, e.conversation, e.t_ms, e.seq) == ("A", "A", 1200, 2)
    assert e.payload == {"action": "Send", "code": "blocked", "detail": "word list: 'rude'", "text": "a rude word",
                         "length": 11}
    after = g.state_dict()
    assert after["refusals"] == before["refusals"] + 1
    assert {k: v for k, v in after.items() if k not in ("refusals", "n_events")} == \
        {k: v for k, v in before.items() if k not in ("refusals", "n_events")}
    assert g.may_send("A", "A")  # still the witness's turn
    assert Game.replay(list(g.log)).state_dict() == g.state_dict()
    # past the deadline: time_up comes first, and times never go backwards
    out = g.refuse(Send("interrogator", "late", "A"), "blocked", "x", 1000 + 61_000)
    assert [e.type for e in out.events] == ["time_up", "refused"]
    assert out.events[0].t_ms <= out.events[1].t_ms and g.state == "awaiting_verdict"
    out = g.refuse(Send("A", "x", "A"), "blocked", "x", 5)  # an older clock reading
    assert out.events[0].t_ms == g.log[-2].t_ms
    assert Game.replay(list(g.log)).state_dict() == g.state_dict()
    with pytest.raises(ValueError, match="non-empty code"):
        g.refuse(Send("A", "x", "A"), "", "x", 1)


@pytest.mark.parametrize("name", ["jones-bergen-2023", "jones-bergen-2025"])
def test_presets_end_a_game_abandoned_after_time_up(name):
    """Both presets give the interrogator a verdict grace period, so a game whose interrogator
    left after time-up ends as verdict_timeout instead of staying awaiting_verdict for ever."""
    from turinglab.game.study_file import load_preset

    rules = load_preset(name).rules
    assert rules.verdict_grace_s is not None and 10 <= rules.verdict_grace_s <= 300
    g = Game.start(load_preset(name).format, rules, T0)
    end = T0 + round(rules.time_limit_s * 1000)
    g.apply(Disconnect(I), end - 5)  # the interrogator closed the tab before time ran out
    g.apply(Tick(), end)
    assert g.state == "awaiting_verdict"
    g.apply(Tick(), end + round(rules.verdict_grace_s * 1000))
    assert g.state == "ended" and g.end_reason == "verdict_timeout"


def test_a_held_reply_blocks_the_next_and_is_recorded_undelivered_at_the_end():
    from turinglab.game.engine import Hold

    g = Game.start("two-player", Rules(), 0)
    assert g.apply(Send("interrogator", "hi", "A"), 10).ok
    out = g.apply(Hold("A", "hello there", "A", release_ms=5000), 20)
    assert out.ok and out.events[-1].type == "held" and out.events[-1].payload == {"text": "hello there",
                                                                                  "release_ms": 5000}
    assert g.apply(Hold("A", "again", "A", release_ms=6000), 30).code == "not_your_turn"
    assert g.apply(Send("A", "something else", "A"), 30).code == "not_your_turn"
    assert g.apply(Send("A", "hello there", "A"), 5000).ok  # the release
    assert g.conversations["A"].held is None
    assert g.apply(Send("interrogator", "and?", "A"), 5100).ok
    assert g.apply(Hold("A", "never shown", "A", release_ms=9000), 5200).ok
    out = g.apply(GiveVerdict("interrogator", "human", 50), 5300)
    types = [e.type for e in out.events]
    assert types == ["refused", "verdict", "game_ended"]
    assert out.events[0].payload["code"] == "undelivered" and out.events[0].payload["text"] == "never shown"
    assert Game.replay(g.log).state_dict() == g.state_dict()
    assert Game.replay(g.log).conversations["A"].held is None


def test_a_refused_long_text_keeps_a_bounded_prefix_and_its_length():
    from turinglab.game.engine import MAX_REFUSED_TEXT

    g = Game.start("two-player", Rules(max_chars=300), 0)
    out = g.apply(Send("interrogator", "y" * 20_000, "A"), 1)
    assert out.code == "too_long"
    assert out.events[-1].payload["text"] == "y" * MAX_REFUSED_TEXT and out.events[-1].payload["length"] == 20_000
    assert len(json.dumps(out.events[-1].to_dict())) < 1000


def test_a_witness_message_records_its_author_and_replays():
    from turinglab.game.engine import Hold
    from turinglab.game.events import source_of

    g = three()
    g.apply(Send(I, "hi A", "A"), T0 + 1)
    g.apply(Send(I, "hi B", "B"), T0 + 2)
    ai = {"source": "fallback", "model": "gpt-x", "tries": 2, "latency_ms": 4100}
    g.apply(Send("A", "hello", "A", author=ai), T0 + 3)
    g.apply(Hold("B", "hey", "B", release_ms=T0 + 9, author={"source": "human"}), T0 + 4)
    g.apply(Send("B", "hey", "B", author={"source": "human"}), T0 + 9)
    g.apply(Send(I, "who are you", "A", author={"source": "model"}), T0 + 10)  # not the interrogator's
    msgs = [e for e in g.log if e.type == "message"]
    assert [m.payload for m in msgs[2:]] == [{"text": "hello", **ai}, {"text": "hey", "source": "human"},
                                             {"text": "who are you"}]
    assert Game.replay([Event.from_dict(json.loads(json.dumps(e.to_dict()))) for e in g.log]).log == g.log
    assert source_of({"text": "old"}, "ai") == "unknown" and source_of({"text": "old"}, "human") == "human"
    with pytest.raises(ValueError, match="source must be one of"):
        g.apply(Send("A", "x", "A", author={"source": "guess"}), T0 + 11)
