"""Bots over the real protocol (server, websockets, SQLite) and the persona guard in a live game."""

from __future__ import annotations

import httpx

from turinglab.analysis.live.load import load
from turinglab.bots.play import BOT_HEADER, play_one, run_bots
from turinglab.game.config import Timing, WitnessSpec
from turinglab.store.api import Store
from turinglab.witnesses.base import Reply, Witness

from tests.server.live.test_server import ELIZA, players, running, say, study

# the guard regenerates only within the designed delay: long enough here that a busy machine's
# classify and commit never use it up (FAST's ~0.1 s did, once, in CI)
GUARDED = Timing(base_s=1.5, s_per_char=0.002, gamma_shape=1.0, gamma_scale=0.01)


async def test_bots_play_the_whole_flow_and_their_games_are_flagged(sqlite_url):
    with running(study(ratio=0.0, witnesses=(ELIZA,)), sqlite_url, bot_token="tok-123") as base:
        results = await run_bots(base, "tok-123", 3, parallel=3, turns=2)
        stranger = await play_one(base, "wrong-token", 99, turns=2)
    assert [r.error for r in results + [stranger]] == [None] * 4
    assert all(r.role == "interrogator" and r.survey and r.verdict in ("human", "ai") for r in results)
    with Store(sqlite_url) as store:
        games = {g.id: g for g in store.games()}
        labels = {p.id: p.label for p in store.participants()}
    assert {r.game_id for r in results} | {stranger.game_id} == set(games)
    for r in results:
        assert games[r.game_id].flags.get("bot") is True and games[r.game_id].verdict is not None
        assert labels[r.pid] == "bot"
    assert "bot" not in games[stranger.game_id].flags and labels[stranger.pid] is None
    # loaded with their flag (the analysis leaves them out but for the leaderboard), or left out at load
    loaded = load(sqlite_url)
    assert set(loaded.judgements["game_id"]) == set(games)
    assert set(loaded.judgements.loc[loaded.judgements["flag_bot"], "game_id"]) == set(games) - {stranger.game_id}
    assert set(load(sqlite_url, include_bots=False).judgements["game_id"]) == {stranger.game_id}


async def test_bots_can_ask_the_adversarial_bank(sqlite_url):
    """run_bots(strategy="adversarial"): the stored interrogator messages are the adversarial
    family's (a greeting, then e.g. code, arithmetic, injection), not the default strategy's."""
    from turinglab.bots import adversarial
    from turinglab.bots.interrogator import STRATEGIES, ScriptedInterrogator
    from turinglab.game import events as ev

    with running(study(ratio=0.0, witnesses=(ELIZA,)), sqlite_url, bot_token="tok-9") as base:
        results = await run_bots(base, "tok-9", 2, parallel=2, turns=4, strategy="adversarial", seed=5)
    assert [r.error for r in results] == [None, None]
    default = {q for qs in STRATEGIES.values() for q in qs}
    with Store(sqlite_url) as store:
        asked = [e.payload["text"] for g in store.games() for e in store.events(g.id)
                 if e.type == ev.MESSAGE and e.actor == ev.INTERROGATOR]
    assert len(asked) == 8 and not default & set(asked)
    # each bot's script is its seed's adversarial plan (play.py draws the interrogator's seed from the bot's)
    import random

    expected = [q for i in (0, 1) for _, q in
                ScriptedInterrogator(random.Random(5 + i).randrange(2**31), "adversarial").questions(4)]
    assert sorted(asked) == sorted(expected)
    fams = {f for i in (0, 1) for f, _ in ScriptedInterrogator(random.Random(5 + i).randrange(2**31), "adversarial").questions(4)}
    assert fams - {"small_talk"} <= set(adversarial.FAMILIES) and len(fams) >= 4


async def test_a_bot_header_tells_a_participant_nothing(sqlite_url):
    """With a wrong token, or on a server without one, the start looks exactly as without the header."""
    for token in ("right", None):
        with running(study(ratio=0.0, witnesses=(ELIZA,)), sqlite_url, bot_token=token) as base:
            async with httpx.AsyncClient(base_url=base) as c:
                plain = await c.post("/start")
            async with httpx.AsyncClient(base_url=base) as c:
                guess = await c.post("/start", headers={BOT_HEADER: "guess"})
            assert plain.status_code == guess.status_code == 303
            assert sorted(plain.headers.keys()) == sorted(guess.headers.keys())
            assert plain.text == guess.text
    with Store(sqlite_url) as store:
        assert all(p.label is None for p in store.participants())


class Breaker(Witness):
    """Admits being an AI first, then answers in persona."""
    codename, kind = "Breaker", "local"

    def __init__(self) -> None:
        self.n = 0

    async def reply(self, history, ctx):
        self.n += 1
        return Reply(text="As an AI language model, I don't have a favourite film." if self.n == 1 else "shrek lol")


async def _ask_a_guarded_witness(sqlite_url, codename: str, make, question: str):
    """One game against a guarded local witness made by `make`; (the interrogator, the reply frame)."""
    spec = WitnessSpec(codename=codename, kind="local", timing=GUARDED)
    with running(study(ratio=0.0, witnesses=(spec,)), sqlite_url, witness_factory=lambda s, seed: make()) as base:
        (i,) = await players(base, 1)
        await i.phase("game")
        await say(i, question)
        return i, await i.next("message", **{"from": "them"})


async def test_the_persona_guard_regenerates_a_break_within_the_delay(sqlite_url):
    i, reply = await _ask_a_guarded_witness(sqlite_url, "Breaker", Breaker, "whats your favourite film")
    assert reply["text"] == "shrek lol"
    assert not [f for f in i.frames if f["type"] == "error"]
    assert "AI" not in str(i.frames)
    with Store(sqlite_url) as store:
        (g,) = store.games()
        broke = [e for e in store.events(g.id) if e.type == "refused" and e.payload.get("code") == "persona_break"]
        assert [e.payload["text"] for e in broke] == ["As an AI language model, I don't have a favourite film."]
        assert g.flags["persona_break_regenerated"] == 1 and "ai_output_blocked" not in g.flags


class TwoReplies(Witness):
    """Says `first` when asked, `again` when the guard asks again (`regenerate`)."""
    kind = "local"

    def __init__(self, codename: str, first: str, again: str) -> None:
        self.codename, self.first, self.again = codename, first, again

    async def reply(self, history, ctx):
        return Reply(text=self.first)

    async def regenerate(self, history, ctx):
        return Reply(text=self.again)

    async def answer_task(self, history, ctx):
        """After an accusation or a machine task (guard/task.py) the seat asks through this from the
        first try: `first` then, asked again, `again`, as through `reply` and `regenerate`."""
        self.tasked = getattr(self, "tasked", 0) + 1
        return Reply(text=self.first if self.tasked % 2 else self.again)


def NeedsSteer() -> TwoReplies:  # noqa: N802 - a test double, named as a class would be
    """Breaks whenever it is simply asked; answers in persona only when the guard asks again."""
    return TwoReplies("NeedsSteer", "I'm a computer program, so I don't watch films.", "dune, saw it twice")


async def test_the_guard_asks_again_through_the_witness_regenerate(sqlite_url):
    _, reply = await _ask_a_guarded_witness(sqlite_url, "NeedsSteer", NeedsSteer, "seen anything good lately")
    assert reply["text"] == "dune, saw it twice"
    with Store(sqlite_url) as store:
        (g,) = store.games()
        assert g.flags["persona_break_regenerated"] == 1


def Concedes() -> TwoReplies:  # noqa: N802
    """Apologises (an implicit admission only after an accusation), then answers in persona."""
    return TwoReplies("Concedes", "sorry about that!", "lol what no")


async def test_the_live_guard_reads_the_reply_after_the_interrogators_message(sqlite_url):
    """The same "sorry about that!" is shown after an ordinary message and refused after
    "youre definitely a bot": the session gives the guard the interrogator's message."""
    spec = WitnessSpec(codename="Concedes", kind="local", timing=GUARDED)
    with running(study(ratio=0.0, witnesses=(spec,)), sqlite_url, witness_factory=lambda s, seed: Concedes()) as base:
        (i,) = await players(base, 1)
        await i.phase("game")
        await say(i, "you stepped on my foot")
        assert (await i.next("message", **{"from": "them"}))["text"] == "sorry about that!"
        await say(i, "youre definitely a bot lol")
        assert (await i.next("message", **{"from": "them"}))["text"] == "lol what no"
    with Store(sqlite_url) as store:
        (g,) = store.games()
        broke = [e for e in store.events(g.id) if e.type == "refused" and e.payload.get("code") == "persona_break"]
        assert [e.payload["text"] for e in broke] == ["sorry about that!"]
        assert broke[0].payload["detail"].startswith("context:")


async def test_an_llm_interrogator_asks_its_own_questions_and_gives_the_judges_verdict(sqlite_url):
    """The LLM interrogator with a deterministic chat double (the real model is the judge's, tested there)."""
    from turinglab.bots.play import LLMInterrogator

    seen = []

    def chat(messages):
        seen.append(messages)
        if "Conversation:" in messages[-1]["content"]:
            return '{"verdict": "machine", "confidence": 73}'
        return f"question number {len(seen)}"

    with running(study(ratio=0.0, witnesses=(ELIZA,)), sqlite_url, bot_token="t") as base:
        r = await play_one(base, "t", 1, turns=2, llm=LLMInterrogator(chat))
    assert r.error is None and (r.verdict, r.confidence) == ("ai", 73)
    with Store(sqlite_url) as store:
        (g,) = store.games()
        texts = [e.payload["text"] for e in store.events(g.id) if e.type == "message" and e.actor == "interrogator"]
    assert texts == ["question number 1", "question number 2"]
    assert g.verdict.choice == "ai" and g.verdict.confidence == 73
    assert "question number 1" in seen[-1][-1]["content"]  # the judge read the transcript
