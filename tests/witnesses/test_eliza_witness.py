"""ElizaWitness: the Witness interface, one ELIZA state per game."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from turinglab.witnesses.base import GameContext, Turn, Witness
from turinglab.witnesses.eliza import Eliza
from turinglab.witnesses.eliza.witness import ElizaWitness

NOW = datetime(2026, 1, 1, tzinfo=UTC)


def ctx(game_id: str = "g1") -> GameContext:
    return GameContext(game_id=game_id, started_at=NOW, now=NOW, time_limit_s=300, max_chars=300)


async def play(w: ElizaWitness, game: str, texts: list[str], history: list[Turn] | None = None) -> list[str]:
    history = history if history is not None else []
    out = []
    for i, text in enumerate(texts):
        history.append(Turn("interrogator", text, 1000 * i))
        reply = await w.reply(history, ctx(game))
        history.append(Turn("witness", reply.text, 1000 * i + 500))
        out.append(reply.text)
    return out


def test_is_a_witness_with_defaults():
    w = ElizaWitness()
    assert isinstance(w, Witness)
    assert (w.kind, w.codename) == ("eliza", "ELIZA")
    assert ElizaWitness(codename="Echo").codename == "Echo"


async def test_reply_answers_last_turn_with_latency():
    w = ElizaWitness()
    await w.start(ctx())
    reply = await w.reply([Turn("interrogator", "Men are all alike.", 0)], ctx())
    assert reply.text == "IN WHAT WAY"
    assert 0 <= reply.latency_s < 5
    assert reply.meta["keyword"] == "DIT" and reply.meta["source"] == "keyword"
    assert not reply.fallback and reply.error is None


async def test_state_is_per_game():
    w = ElizaWitness()
    a = await play(w, "a", ["Men are all alike.", "Men are all alike."])
    b = await play(w, "b", ["Men are all alike."])
    assert a == ["IN WHAT WAY", "WHAT RESEMBLANCE DO YOU SEE"]
    assert b == ["IN WHAT WAY"]


async def test_interleaved_games_match_separate_conversations():
    texts = ["My dog bites.", "Bananas", "Apples", "Men are alike", "Pears", "Men are alike", "Plums"]
    alone = Eliza()
    expected = [alone.respond(t) for t in texts]
    w = ElizaWitness()
    hist = {"x": [], "y": []}
    got: dict[str, list[str]] = {"x": [], "y": []}
    for t in texts:
        for game in ("x", "y"):
            got[game] += await play(w, game, [t], hist[game])
    assert got["x"] == expected and got["y"] == expected
    assert expected[2].endswith("YOUR DOG BITES")  # the third text recalls the memory


async def test_out_of_step_call_replays_the_history():
    texts = ["My dog bites.", "Bananas", "Apples"]
    w1 = ElizaWitness()
    replies = await play(w1, "g", texts)
    # A fresh witness (e.g. after a restart) given the full history answers the same.
    history = []
    for t, r in zip(texts[:-1], replies[:-1], strict=True):
        history += [Turn("interrogator", t, 0), Turn("witness", r, 0)]
    history.append(Turn("interrogator", texts[-1], 0))
    w2 = ElizaWitness()
    assert (await w2.reply(history, ctx("g"))).text == replies[-1]
    # The same call again (a retry) gives the same answer, not the next one in the cycle.
    assert (await w2.reply(history, ctx("g"))).text == replies[-1]


async def test_start_resets_a_game():
    w = ElizaWitness()
    await play(w, "g", ["Men are all alike."])
    await w.start(ctx("g"))
    assert (await w.reply([Turn("interrogator", "Men are all alike.", 0)], ctx("g"))).text == "IN WHAT WAY"


async def test_history_must_end_with_the_interrogator():
    w = ElizaWitness()
    with pytest.raises(ValueError, match="interrogator"):
        await w.reply([], ctx())
    with pytest.raises(ValueError, match="interrogator"):
        await w.reply([Turn("interrogator", "hi", 0), Turn("witness", "HI", 1)], ctx())


async def test_custom_script_path(tmp_path):
    path = tmp_path / "s.txt"
    path.write_text("(HI)\nSTART\n(CAT ((0) (MEOW)))\n(NONE ((0) (PURR)))\n", encoding="utf-8")
    w = ElizaWitness(script_path=path)
    assert await play(w, "g", ["a cat", "a dog"]) == ["MEOW", "PURR"]


async def test_random_memory_choice_is_reproducible_per_seed():
    texts = [f"My thing {i} here." for i in range(8)]

    async def memories(seed: int) -> list[str]:
        w = ElizaWitness(seed=seed, memory_choice="random")
        await play(w, "g", texts)
        return w._games[("g", "A")][0].memories

    assert await memories(7) == await memories(7)
    with pytest.raises(ValueError, match="memory_choice"):
        ElizaWitness(memory_choice="often")


async def test_close_forgets_games():
    w = ElizaWitness()
    await play(w, "g", ["Men are all alike."])
    await w.close()
    assert w._games == {}
