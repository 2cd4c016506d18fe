"""Deterministic doubles of the models for `static generate` / `static conversations` tests (the
real local model is exercised in test_static_generate_local.py)."""

from __future__ import annotations

from turinglab.witnesses.base import Reply, Witness

LINES = ["oh nice, what got you into that", "honestly i read about it on the train most days",
         "the train is where i get anything done really", "same here, my commute is an hour each way",
         "an hour is rough, do you drive or take the bus", "bus mostly, podcasts help a lot",
         "which podcasts are you listening to lately", "mostly history ones and some comedy",
         "history ones are great for long trips", "yeah they make the time fly by",
         "got any recommendations for a newbie", "try the one about the roman empire",
         "adding it to my list right now", "let me know what you think of it",
         "will do, thanks for the tip", "no worries, enjoy the next ride"]


class FakeWitness(Witness):
    """Replies from LINES by turn; with `stuck`, the same sentence every time (a repeating model)."""

    kind = "llm"

    def __init__(self, name: str, seed: int, stuck: bool) -> None:
        self.codename, self.seed, self.stuck, self.closed = name, seed, stuck, False

    async def reply(self, history, ctx):
        if self.stuck:
            return Reply("i just really like talking about this topic")
        return Reply(LINES[(len(history) - 1) % len(LINES)])

    async def close(self) -> None:
        self.closed = True


def stuck_first_attempt(base_seed: int = 1):
    """A witness factory: every conversation's first attempt repeats itself, later ones do not."""
    made: list[FakeWitness] = []

    def make(name: str, seed: int) -> FakeWitness:
        attempt = (seed - base_seed) % 500  # generate(): A gets seed, B seed + 500
        w = FakeWitness(name, seed, stuck=attempt == 0)
        made.append(w)
        return w

    make.made = made  # type: ignore[attr-defined]
    return make


def fake_chat(answers: dict[str, list[str]]):
    """An async chat double: the cue (last word of the prompt) -> its answers, one per call, the last repeated."""
    calls: dict[str, int] = {}

    async def chat(messages, settings):
        cue = messages[-1]["content"].rsplit(" ", 1)[-1]
        seq = answers.get(cue, ["association"])
        k = calls.get(cue, 0)
        calls[cue] = k + 1
        return seq[min(k, len(seq) - 1)]

    chat.calls = calls  # type: ignore[attr-defined]
    return chat
