"""ELIZA as a game witness: one ELIZA state (memory queue, cycling, counter) per game."""

from __future__ import annotations

import time
from collections import OrderedDict
from pathlib import Path

from turinglab.witnesses.base import GameContext, Reply, Turn, Witness
from turinglab.witnesses.eliza.engine import Eliza, doctor_script
from turinglab.witnesses.eliza.script import Script

MAX_GAMES = 512  # states kept at once; an evicted game is rebuilt from its history if it comes back


class ElizaWitness(Witness):
    """Answers the interrogator's last message with ELIZA running DOCTOR (or another script).

    ELIZA is deterministic by default (the 1966 program picks memories with a hash), so
    a game's state can always be rebuilt by replaying the interrogator's messages: that
    is what happens when a call arrives out of step (a retry, a restart, an evicted game).
    `seed` is used only with memory_choice="random" (the paper's wording), per game.
    """

    kind = "eliza"

    def __init__(
        self,
        codename: str = "ELIZA",
        script_path: str | Path | None = None,
        seed: int | None = None,
        memory_choice: str = "hash",
    ) -> None:
        if memory_choice not in ("hash", "random"):
            raise ValueError(f"memory_choice must be 'hash' or 'random', not {memory_choice!r}")
        self.codename = codename
        self.script: Script = Script.from_file(script_path) if script_path else doctor_script()
        self.seed = seed
        self.memory_choice = memory_choice
        self._games: OrderedDict[tuple[str, str], tuple[Eliza, int]] = OrderedDict()

    def _fresh(self, ctx: GameContext) -> Eliza:
        seed = None if self.seed is None else f"{self.seed}:{ctx.game_id}:{ctx.seat}"
        return Eliza(self.script, memory_choice=self.memory_choice, seed=seed)

    def _keep(self, key: tuple[str, str], state: Eliza, answered: int) -> None:
        self._games[key] = (state, answered)
        self._games.move_to_end(key)
        while len(self._games) > MAX_GAMES:
            self._games.popitem(last=False)

    async def start(self, ctx: GameContext) -> None:
        self._keep((ctx.game_id, ctx.seat), self._fresh(ctx), 0)

    async def reply(self, history: list[Turn], ctx: GameContext) -> Reply:
        if not history or history[-1].role != "interrogator":
            raise ValueError("ELIZA answers the interrogator: the history must end with an interrogator turn")
        t0 = time.perf_counter()
        asked = [t.text for t in history if t.role == "interrogator"]
        key = (ctx.game_id, ctx.seat)
        state, answered = self._games.get(key, (None, 0))
        if state is None or answered != len(asked) - 1:  # out of step: replay the game so far
            state = self._fresh(ctx)
            for text in asked[:-1]:
                state.trace(text)
        r = state.trace(asked[-1])
        self._keep(key, state, len(asked))
        return Reply(
            text=r.text,
            latency_s=time.perf_counter() - t0,
            meta={"source": r.source, "keyword": r.keyword, "rule": r.rule},
        )

    async def close(self) -> None:
        self._games.clear()
