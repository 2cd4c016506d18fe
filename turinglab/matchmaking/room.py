"""The waiting room (Jones & Bergen matchmaking), pure: the caller passes the time.

Two-player:
- On joining, a participant is assigned at random to a human game (probability
  `Allocation.human_ratio`) or an AI game.
- Two participants assigned to human games are matched as soon as both wait; their
  roles (interrogator / witness A) are random.
- An AI game starts after a wait equal to the mean wait of the participants of the
  last `wait_match_window` human matches (so the wait does not reveal the witness kind;
  before any human match, `initial_ai_wait_ms`).
- A participant assigned to a human game who finds no partner within
  `45 + N(1, 7)` s (drawn when joining, never below 0) is matched with an AI.
- The AI witness is picked by Thompson sampling (or uniformly), with its selection
  probability. Policy "groups" (Jones & Bergen 2025): each interrogator meets the study's
  witness groups in turn, a group they have met least often (ties at random), and a witness of
  it uniformly; the recorded probability is that of this draw, given their history (`faced`).

Three-player: two humans and one AI. The interrogator is the one of the two who has
interrogated fewer times in this room (ties at random), so roles rotate; the AI's side
(A or B) is random. No AI fallback: a three-player game needs a second human.

Capacity (`capacity.Capacity`, optional): an AI witness the estimate says cannot answer in time
(at its limit of games at once, or too slow even alone at the machine's current load) is not
drawn; the draw is among the witnesses that can serve (the recorded selection probability is the
one of that draw), else the study's overflow witness plays, else the participant keeps waiting
(the masked wait goes on) until `retry` (a game ended, a new timing) lets the draw be tried again.
The match of such a draw keeps what was withheld and why (`Match.allocation`: stored with the
game, never sent to a participant).

Demo mode (`turinglab serve --demo`) pins a participant's part in `pinned`: "interrogator" or
"witness" wait for each other (a human game, no AI fallback; the pinned interrogator asks), "ai"
gets an AI game at once. Nobody else is pinned, so a study's matchmaking is unchanged.

Call `join`, `leave`, `poll(now_ms)` (returns new matches), `release(codename)` when an AI game
ends, and `next_wakeup()`.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from typing import Literal

import numpy as np

from turinglab.game.config import Study
from turinglab.matchmaking.capacity import Capacity
from turinglab.matchmaking.thompson import WitnessStats, choose_witness

Assignment = Literal["human", "ai", "three"]


@dataclass(frozen=True)
class Slot:
    """Who sits in a witness seat (the Witness identity of the shared vocabulary)."""

    kind: Literal["human", "ai"]
    participant_id: str | None = None
    witness: str | None = None
    selection_prob: float | None = None

    def identity(self) -> dict:
        return {
            "kind": self.kind,
            "witness": self.witness,
            "participant_id": self.participant_id,
            "selection_prob": self.selection_prob,
        }


@dataclass(frozen=True)
class Match:
    format: str
    interrogator: str
    seats: dict[str, Slot]
    waited_ms: dict[str, int]  # participant id -> how long they waited
    reason: str  # "human" | "ai" | "fallback" | "three"
    # the AI draw left witnesses out: {"withheld": {codename: why}, "overflow": bool, "waited": bool}
    allocation: dict | None = None

    @property
    def participants(self) -> list[str]:
        return [self.interrogator] + [s.participant_id for s in self.seats.values() if s.participant_id]


@dataclass
class Waiting:
    participant_id: str
    joined_ms: int
    assignment: Assignment
    due_ms: int | None  # AI game start (ai) or AI fallback (human); None: wait for a human


@dataclass
class WaitingRoom:
    study: Study
    rng: np.random.Generator
    stats: WitnessStats = field(default_factory=WitnessStats)
    initial_ai_wait_ms: int = 10_000
    prob_draws: int = 2000
    waiting: dict[str, Waiting] = field(default_factory=dict)
    human_waits: deque = field(default_factory=deque)  # one list of waits per human match
    interrogated: dict[str, int] = field(default_factory=dict)
    capacity: Capacity | None = None
    stalled: set = field(default_factory=set)  # due for an AI game, but every witness is full
    faced: dict = field(default_factory=dict)  # "groups": interrogator -> {group index: AI games}
    pinned: dict = field(default_factory=dict)  # demo mode: participant -> "interrogator" | "witness" | "ai"

    def note_faced(self, interrogator: str, codename: str) -> None:
        """An AI game of `interrogator` against `codename` (also when rebuilding from the store)."""
        for gi, group in enumerate(self.study.allocation.witness_groups):
            if codename in group:
                d = self.faced.setdefault(interrogator, {})
                d[gi] = d.get(gi, 0) + 1

    def _group_choice(self, names: list[str], interrogator: str | None) -> tuple[str, float]:
        groups = [[c for c in g if c in names] for g in self.study.allocation.witness_groups]
        open_ = [i for i, g in enumerate(groups) if g]
        seen = self.faced.get(interrogator, {}) if interrogator else {}
        least = min(seen.get(i, 0) for i in open_)
        pick = [i for i in open_ if seen.get(i, 0) == least]
        gi = pick[int(self.rng.integers(len(pick)))]
        g = groups[gi]
        return g[int(self.rng.integers(len(g)))], 1.0 / (len(pick) * len(g))

    @property
    def codenames(self) -> list[str]:
        return [w.codename for w in self.study.witnesses]

    # ---- waits -------------------------------------------------------------
    def mean_human_wait_ms(self) -> int:
        """Mean wait of the participants of the last N human matches."""
        waits = [w for match in self.human_waits for w in match]
        return int(round(sum(waits) / len(waits))) if waits else self.initial_ai_wait_ms

    def _fallback_ms(self) -> int:
        a = self.study.allocation
        noise = self.rng.normal(a.ai_fallback_noise_mu, a.ai_fallback_noise_sigma)
        return max(0, int(round((a.ai_fallback_mean_s + noise) * 1000)))

    # ---- entering and leaving ---------------------------------------------
    def join(self, participant_id: str, now_ms: int) -> Waiting:
        """Enter the waiting room (joining twice keeps the first entry)."""
        if participant_id in self.waiting:
            return self.waiting[participant_id]
        pin = self.pinned.get(participant_id)
        if self.study.format == "three-player":
            entry = Waiting(participant_id, now_ms, "three", None)
        elif pin is not None and (pin != "ai" or self.codenames):
            entry = Waiting(participant_id, now_ms, "ai", now_ms) if pin == "ai" else \
                Waiting(participant_id, now_ms, "human", None)
        else:
            has_ai = bool(self.codenames)
            human = (not has_ai) or self.rng.random() < self.study.allocation.human_ratio
            if human:
                due = now_ms + self._fallback_ms() if has_ai else None
                entry = Waiting(participant_id, now_ms, "human", due)
            else:
                entry = Waiting(participant_id, now_ms, "ai", now_ms + self.mean_human_wait_ms())
        self.waiting[participant_id] = entry
        return entry

    def leave(self, participant_id: str) -> bool:
        self.stalled.discard(participant_id)
        return self.waiting.pop(participant_id, None) is not None

    def next_wakeup(self) -> int | None:
        """The earliest time at which `poll` may produce a match without a new join (or a release)."""
        dues = [w.due_ms for w in self.waiting.values() if w.due_ms is not None and w.participant_id not in self.stalled]
        return min(dues) if dues else None

    def release(self, codename: str) -> None:
        """An AI game of `codename` ended: its place is free, and stalled participants are tried again."""
        if self.capacity is not None:
            self.capacity.release(codename)
        self.retry()

    def retry(self) -> None:
        """Try the draw of stalled participants again (a place came free, or a witness became fast enough)."""
        self.stalled.clear()

    # ---- matching ----------------------------------------------------------
    def _ai_slot(self, interrogator: str | None = None, waiting: tuple[str, ...] = ()) -> tuple[Slot | None, dict | None]:
        """The AI witness of a new game (None when no witness can serve and there is no overflow),
        and the note of what the draw withheld (None: nothing). `waiting`: the participants it is for."""
        names = self.codenames
        cap = self.capacity
        note = None
        if cap is not None:
            overflow = self.study.allocation.overflow_witness
            regular = [c for c in names if c != overflow] or names
            withheld = cap.withheld(regular)
            free = [c for c in regular if c not in withheld]
            for c in withheld:
                cap.withheld_draws[c] = cap.withheld_draws.get(c, 0) + 1
            if withheld:
                note = {"withheld": withheld, "overflow": not free and overflow is not None,
                        "waited": any(p in cap.deferred_ids for p in waiting)}
            if free:
                cap.reallocated += len(free) < len(regular)
                names = free
            elif overflow is not None:
                cap.overflowed += 1
                names = [overflow]
            else:
                return None, note
        if self.study.allocation.witness_policy == "groups":
            codename, prob = self._group_choice(names, interrogator)
            if interrogator is not None:
                self.note_faced(interrogator, codename)
        else:
            codename, prob = choose_witness(
                self.study.allocation.witness_policy, self.stats, names, self.rng, self.prob_draws,
                floor=self.study.allocation.thompson_floor,
            )
        if cap is not None:
            cap.acquire(codename)
        return Slot("ai", witness=codename, selection_prob=prob), note

    def _stall(self, *pids: str) -> None:
        if self.capacity is not None:
            self.capacity.deferred_ids.update(pids)
        self.stalled.update(pids)

    def poll(self, now_ms: int) -> list[Match]:
        """Every match that can be made at `now_ms`, in order of arrival."""
        matches: list[Match] = []
        queue = sorted(self.waiting.values(), key=lambda w: (w.joined_ms, w.participant_id))
        if self.study.format == "three-player":
            while len(queue) >= 2:
                roles = self._roles(queue[0], queue[1]) if self.study.allocation.witness_policy == "groups" else None
                slot, note = self._ai_slot(roles[0].participant_id if roles else None,
                                           (queue[0].participant_id, queue[1].participant_id))
                if slot is None:
                    self._stall(*(w.participant_id for w in queue))
                    break
                a, b = queue.pop(0), queue.pop(0)
                matches.append(self._three(a, b, now_ms, slot, roles, note))
        else:
            humans = [w for w in queue if w.assignment == "human"]
            while len(humans) >= 2:
                a, b = humans.pop(0), humans.pop(0)
                matches.append(self._two_humans(a, b, now_ms))
            for w in queue:
                if w.participant_id not in self.waiting or w.due_ms is None or now_ms < w.due_ms:
                    continue
                if w.participant_id in self.stalled:
                    continue
                slot, note = self._ai_slot(w.participant_id, (w.participant_id,))
                if slot is None:
                    self._stall(w.participant_id)
                    continue
                reason = "ai" if w.assignment == "ai" else "fallback"
                del self.waiting[w.participant_id]
                self.stalled.discard(w.participant_id)
                matches.append(
                    Match("two-player", w.participant_id, {"A": slot},
                          {w.participant_id: now_ms - w.joined_ms}, reason, note)
                )
        return matches

    def _two_humans(self, a: Waiting, b: Waiting, now_ms: int) -> Match:
        del self.waiting[a.participant_id], self.waiting[b.participant_id]
        waits = {a.participant_id: now_ms - a.joined_ms, b.participant_id: now_ms - b.joined_ms}
        self.human_waits.append(list(waits.values()))
        while len(self.human_waits) > self.study.allocation.wait_match_window:
            self.human_waits.popleft()
        if {self.pinned.get(a.participant_id), self.pinned.get(b.participant_id)} == {"interrogator", "witness"}:
            inter, wit = (a, b) if self.pinned[a.participant_id] == "interrogator" else (b, a)
        else:
            inter, wit = (a, b) if self.rng.random() < 0.5 else (b, a)
        return Match("two-player", inter.participant_id,
                     {"A": Slot("human", participant_id=wit.participant_id)}, waits, "human")

    def _roles(self, a: Waiting, b: Waiting) -> tuple[Waiting, Waiting]:
        """(interrogator, witness): the one who has interrogated fewer times, ties at random."""
        na, nb = self.interrogated.get(a.participant_id, 0), self.interrogated.get(b.participant_id, 0)
        if na == nb:
            return (a, b) if self.rng.random() < 0.5 else (b, a)
        return (a, b) if na < nb else (b, a)

    def _three(self, a: Waiting, b: Waiting, now_ms: int, ai: Slot,
               roles: tuple[Waiting, Waiting] | None = None, note: dict | None = None) -> Match:
        del self.waiting[a.participant_id], self.waiting[b.participant_id]
        self.stalled.discard(a.participant_id)
        self.stalled.discard(b.participant_id)
        inter, wit = roles or self._roles(a, b)
        self.interrogated[inter.participant_id] = self.interrogated.get(inter.participant_id, 0) + 1
        ai_seat = "A" if self.rng.random() < 0.5 else "B"
        human_seat = "B" if ai_seat == "A" else "A"
        seats = {ai_seat: ai, human_seat: Slot("human", participant_id=wit.participant_id)}
        waits = {a.participant_id: now_ms - a.joined_ms, b.participant_id: now_ms - b.joined_ms}
        return Match("three-player", inter.participant_id, dict(sorted(seats.items())), waits, "three", note)
