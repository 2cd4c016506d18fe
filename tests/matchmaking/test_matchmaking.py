"""Matchmaking: assignment ratio, roles, AI wait, fallback, Thompson sampling, three-player."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats as sps

from turinglab.game.config import Allocation, Study, WitnessSpec
from turinglab.matchmaking import WaitingRoom, WitnessStats
from turinglab.matchmaking.thompson import (
    choose_witness,
    selection_probabilities_exact,
    selection_probabilities_mc,
)

ELIZA = WitnessSpec(codename="Eliza", kind="eliza")
LOCAL = WitnessSpec(codename="Sierra", kind="local")


def study(fmt="two-player", ratio=0.5, witnesses=(ELIZA, LOCAL), **alloc) -> Study:
    return Study(name="t", format=fmt, witnesses=witnesses, allocation=Allocation(human_ratio=ratio, **alloc))


def room(s: Study, seed=1, **kw) -> WaitingRoom:
    return WaitingRoom(s, np.random.default_rng(seed), WitnessStats.for_codenames([w.codename for w in s.witnesses]), **kw)


def test_assignment_follows_human_ratio():
    r = room(study(ratio=0.3), seed=7)
    kinds = [r.join(f"p{i}", 0).assignment for i in range(4000)]
    share = kinds.count("human") / len(kinds)
    # exact binomial test: the share is consistent with 0.3 and not with 0.5
    assert sps.binomtest(kinds.count("human"), len(kinds), 0.3).pvalue > 0.001
    assert abs(share - 0.5) > 0.1


def test_two_humans_matched_with_random_roles():
    interrogators = []
    for seed in range(200):
        r = room(study(ratio=1.0), seed=seed)
        r.join("a", 0)
        assert r.poll(1000) == []
        r.join("b", 3000)
        (m,) = r.poll(3000)
        assert m.reason == "human" and m.format == "two-player"
        assert {m.interrogator, m.seats["A"].participant_id} == {"a", "b"}
        assert m.seats["A"].kind == "human" and m.seats["A"].witness is None
        assert m.waited_ms == {"a": 3000, "b": 0}
        interrogators.append(m.interrogator)
    assert sps.binomtest(interrogators.count("a"), 200, 0.5).pvalue > 0.001
    assert 0 < interrogators.count("a") < 200


def test_ai_game_waits_mean_of_last_five_human_matches():
    r = room(study(ratio=1.0), seed=3, initial_ai_wait_ms=4000)
    assert r.mean_human_wait_ms() == 4000
    t = 0
    waits = []
    for k in range(7):  # 7 human matches, the second arrives k seconds later
        r.join(f"x{k}", t)
        r.join(f"y{k}", t + 1000 * k)
        (m,) = r.poll(t + 1000 * k)
        waits.append([1000 * k, 0])
        t += 100_000
    last5 = [w for pair in waits[-5:] for w in pair]
    assert r.mean_human_wait_ms() == round(sum(last5) / len(last5))
    # now a participant assigned to an AI game starts exactly after that wait
    r2 = room(study(ratio=0.0), seed=3)
    r2.human_waits = r.human_waits
    entry = r2.join("solo", 50)
    assert entry.assignment == "ai" and entry.due_ms == 50 + r.mean_human_wait_ms()
    assert r2.poll(entry.due_ms - 1) == []
    (m,) = r2.poll(entry.due_ms)
    assert m.interrogator == "solo" and m.seats["A"].kind == "ai" and m.reason == "ai"
    assert m.seats["A"].witness in ("Eliza", "Sierra") and 0 < m.seats["A"].selection_prob <= 1


def test_fallback_delay_distribution_is_45_plus_normal_1_7():
    r = room(study(ratio=1.0), seed=11)
    dues = np.array([r.join(f"p{i}", 0).due_ms for i in range(3000)]) / 1000
    # Kolmogorov-Smirnov against N(46, 7): the draw is 45 + N(1, 7) (clipping at 0 is negligible)
    assert sps.kstest(dues, sps.norm(46, 7).cdf).pvalue > 0.001


def test_fallback_matches_with_ai_after_deadline():
    r = room(study(ratio=1.0), seed=5)
    e = r.join("lonely", 0)
    assert r.next_wakeup() == e.due_ms
    assert r.poll(e.due_ms - 1) == []
    (m,) = r.poll(e.due_ms)
    assert m.reason == "fallback" and m.interrogator == "lonely" and m.seats["A"].kind == "ai"
    assert r.waiting == {}


def test_no_ai_witness_means_everyone_waits_for_humans():
    r = room(study(ratio=0.0, witnesses=()), seed=2)
    e = r.join("p", 0)
    assert e.assignment == "human" and e.due_ms is None
    assert r.poll(10**9) == []
    assert r.leave("p") and not r.leave("p")


def test_three_player_rotates_roles_and_randomises_ai_side():
    r = room(study(fmt="three-player"), seed=9)
    inter_counts = {"a": 0, "b": 0}
    ai_sides = []
    for k in range(40):
        r.join("a", k * 1000)
        r.join("b", k * 1000 + 10)
        (m,) = r.poll(k * 1000 + 10)
        assert m.format == "three-player"
        kinds = sorted(s.kind for s in m.seats.values())
        assert kinds == ["ai", "human"] and set(m.seats) == {"A", "B"}
        human = next(s for s in m.seats.values() if s.kind == "human")
        assert {m.interrogator, human.participant_id} == {"a", "b"}
        inter_counts[m.interrogator] += 1
        ai_sides.append(next(k for k, s in m.seats.items() if s.kind == "ai"))
        assert abs(inter_counts["a"] - inter_counts["b"]) <= 1  # rotation
    assert 5 < ai_sides.count("A") < 35


def test_three_player_needs_two_humans():
    r = room(study(fmt="three-player"), seed=9)
    r.join("a", 0)
    assert r.poll(10**8) == [] and r.next_wakeup() is None


def test_thompson_mc_matches_exact_quadrature():
    s = WitnessStats.for_codenames(["A", "B", "C"])
    for _ in range(6):
        s.record("A", True, 80)
    for _ in range(3):
        s.record("B", False, 50)
    s.record("C", True, 30)
    s.record("C", False, 90)
    names = ["A", "B", "C"]
    exact = selection_probabilities_exact(s, names)
    mc = selection_probabilities_mc(s, names, draws=200_000, seed=1)
    assert exact.sum() == pytest.approx(1.0, abs=1e-6)
    np.testing.assert_allclose(mc, exact, atol=0.005)
    assert exact[0] > exact[2] > exact[1]  # more human verdicts -> chosen more


def test_thompson_chooses_in_proportion_to_probability():
    s = WitnessStats.for_codenames(["A", "B"])
    for _ in range(4):
        s.record("A", True, 100)
        s.record("B", False, 100)
    rng = np.random.default_rng(0)
    picks = [choose_witness("thompson", s, ["A", "B"], rng, prob_draws=500, floor=0.0) for _ in range(2000)]
    p_a = selection_probabilities_exact(s, ["A", "B"])[0]
    n_a = sum(1 for c, _ in picks if c == "A")
    assert sps.binomtest(n_a, 2000, p_a).pvalue > 0.001
    probs_a = [p for c, p in picks if c == "A"]
    assert abs(np.mean(probs_a) - p_a) < 0.02


def test_allocation_floor_keeps_a_weak_witness_in_play():
    from turinglab.game.config import Allocation

    assert Allocation().thompson_floor > 0  # on by default
    s = WitnessStats.for_codenames(["A", "B", "C"])
    for _ in range(40):
        s.record("A", True, 100)
        s.record("B", False, 100)
        s.record("C", False, 100)
    names = ["A", "B", "C"]
    ts_b = selection_probabilities_exact(s, names)[1]
    assert ts_b < 1e-6  # pure Thompson sampling starves B
    floor = 0.3
    want = floor / 3 + (1 - floor) * ts_b
    rng = np.random.default_rng(3)
    picks = [choose_witness("thompson", s, names, rng, prob_draws=500, floor=floor) for _ in range(3000)]
    n_b = sum(1 for c, _ in picks if c == "B")
    assert sps.binomtest(n_b, 3000, want).pvalue > 0.001
    # the stored probability is the mixture, never below the floor's share
    assert all(p >= floor / 3 for _, p in picks)
    assert np.mean([p for c, p in picks if c == "B"]) == pytest.approx(want, abs=0.002)
    with pytest.raises(ValueError, match="floor"):
        choose_witness("thompson", s, names, rng, floor=1.5)


def test_confidence_weights_and_bad_confidence():
    s = WitnessStats()
    s.record("X", True, 40)
    s.record("X", False, 100)
    t = s.tallies["X"]
    assert (t.wins, t.losses, t.games, t.judged_human) == (0.4, 1.0, 2, 1)
    assert t.success_rate == 0.5
    with pytest.raises(ValueError, match="0-100"):
        s.record("X", True, 101)


def test_uniform_policy_and_errors():
    s = WitnessStats()
    rng = np.random.default_rng(0)
    c, p = choose_witness("uniform", s, ["A", "B", "C", "D"], rng)
    assert p == 0.25 and c in "ABCD"
    with pytest.raises(ValueError, match="no AI witness"):
        choose_witness("thompson", s, [], rng)
    with pytest.raises(ValueError, match="unknown witness policy"):
        choose_witness("greedy", s, ["A", "B"], rng)


def test_demo_pinned_roles_meet_each_other_and_the_ai_at_once():
    """Demo mode: a pinned interrogator and witness meet each other whatever the ratio (no AI
    fallback while they wait), the interrogator always asks; a pinned "ai" gets an AI game at once;
    participants nobody pinned keep the study's assignment."""
    for seed in range(40):
        r = room(study(ratio=0.0), seed=seed)
        r.pinned.update({"w": "witness", "i": "interrogator", "x": "ai"})
        r.join("w", 0)
        assert r.poll(10**9) == [] and "w" in r.waiting  # waits for its interrogator, never an AI
        r.join("x", 5)
        r.join("i", 10**9)
        r.join("other", 10**9)
        assert r.waiting["other"].assignment == "ai"  # ratio 0: not pinned, not a human game
        ms = {m.reason: m for m in r.poll(10**9)}
        assert ms["human"].interrogator == "i" and ms["human"].seats["A"].participant_id == "w"
        assert ms["ai"].interrogator == "x" and ms["ai"].seats["A"].kind == "ai"


def test_readme_friend_study_always_pairs_two_people(tmp_path):
    """The README's `friend.yaml` (issue 27): two people who join, however far apart, meet each other
    and nobody is ever sent to an AI."""
    import re
    from pathlib import Path

    from turinglab.game.study_file import load_study

    readme = (Path(__file__).parents[2] / "README.md").read_text()
    block = re.search(r"```yaml\n# friend\.yaml\n(.*?)```", readme, re.S).group(1)
    (tmp_path / "friend.yaml").write_text(block)
    s = load_study(tmp_path / "friend.yaml")
    for seed in range(20):
        r = room(s, seed=seed)
        r.join("a", 0)
        assert r.poll(3_600_000) == [] and r.next_wakeup() is None  # an hour alone: still waiting
        r.join("b", 3_600_000)
        (m,) = r.poll(3_600_000)
        assert m.reason == "human" and {m.interrogator, m.seats["A"].participant_id} == {"a", "b"}
