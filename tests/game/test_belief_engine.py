"""The `belief` event in the pure engine (issue 29) and the study setting's hash."""

from __future__ import annotations

from turinglab.game import events as ev
from turinglab.game.config import Rules, Study, canonical_json, config_hash
from turinglab.game.engine import Belief, Game, Send

ON = Rules(belief_tracking=True)


def opened(rules: Rules = ON, fmt: str = "two-player") -> tuple[Game, int]:
    """A game with one question and one reply in conversation A; returns it and the reply's seq."""
    g = Game.start(fmt, rules, 1_000)
    g.apply(Send("interrogator", "hi", "A"), 2_000)
    out = g.apply(Send("A", "hello", "A"), 3_000)
    return g, out.events[-1].seq


def test_a_belief_is_recorded_and_changes_nothing_else():
    g, reply = opened()
    before = g.state_dict()
    out = g.apply(Belief("interrogator", 80, reply), 4_000)
    assert out.ok and [e.type for e in out.events] == [ev.BELIEF]
    e = out.events[0]
    assert (e.actor, e.conversation, e.payload) == ("interrogator", "A", {"value": 80, "after_seq": reply})
    after = g.state_dict()
    assert {k: v for k, v in after.items() if k != "n_events"} == {k: v for k, v in before.items() if k != "n_events"}
    assert g.whose_turn("A") == "interrogator"  # the turn is the same
    assert g.snapshot("A", 4_000) == Game.replay(g.log[:-1]).snapshot("A", 4_000)  # the witness's view too
    r = Game.replay(g.log)
    assert r.state_dict() == g.state_dict() and r.belief == {"value": 80, "after_seq": reply, "seq": e.seq}


def test_belief_refusals():
    g, reply = opened()
    question = reply - 1
    cases = [(Belief("A", 50, reply), ev.NOT_INTERROGATOR), (Belief("interrogator", 101, reply), ev.BAD_BELIEF),
             (Belief("interrogator", -1, reply), ev.BAD_BELIEF), (Belief("interrogator", True, reply), ev.BAD_BELIEF),
             (Belief("interrogator", 50, question), ev.BAD_BELIEF),  # the interrogator's own message
             (Belief("interrogator", 50, 999), ev.BAD_BELIEF), (Belief("interrogator", 50, 0), ev.BAD_BELIEF)]
    for action, code in cases:
        out = g.apply(action, 4_000)
        assert not out.ok and out.code == code, action
        assert out.events[-1].type == ev.REFUSED and out.events[-1].payload["code"] == code
    assert not [e for e in g.log if e.type == ev.BELIEF]
    off, reply = opened(Rules())
    out = off.apply(Belief("interrogator", 50, reply), 4_000)
    assert out.code == ev.BAD_BELIEF and "does not track" in (out.detail or "")


def test_three_player_belief_follows_either_conversation():
    g = Game.start("three-player", ON, 0)
    g.apply(Send("interrogator", "hi B", "B"), 1)
    reply = g.apply(Send("B", "hey", "B"), 2).events[-1].seq
    out = g.apply(Belief("interrogator", 10, reply), 3)
    assert out.ok and out.events[0].conversation == "B"


def test_the_setting_off_keeps_the_study_hash():
    plain = Study(name="s")
    assert "belief_tracking" not in canonical_json(plain)
    on = Study(name="s", rules=ON)
    assert '"belief_tracking":true' in canonical_json(on) and config_hash(on) != config_hash(plain)
