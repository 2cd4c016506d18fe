"""Bots through the real protocol: `turinglab bots` plays the whole participant flow over HTTP and
websockets (consent, waiting room, game, verdict, survey) against a running server.

A bot is known to the server only by the study's bot token (`X-Turinglab-Bot` on POST /start,
see server/app.py): its participant is labelled `bot` and every game it plays is stored with
flags["bot"] = True, which analyses leave out unless asked. Without the token a bot is an ordinary
participant (and is told nothing different).

Two bots may be matched with each other; the one seated as witness answers in a few plain words.
"""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from turinglab.bots.interrogator import ScriptedInterrogator

BOT_HEADER = "X-Turinglab-Bot"
_WITNESS_LINES = ("hey", "not much hbu", "lol idk", "yeah", "nah not really", "from manchester", "i'm 23",
                  "pizza obviously", "no im human lol", "that's a weird question", "tired tbh", "maybe 40?")


@dataclass
class BotGame:
    pid: str
    role: str | None = None
    game_id: str | None = None
    verdict: str | None = None
    confidence: int | None = None
    messages: int = 0
    survey: bool = False
    error: str | None = None
    seconds: float = 0.0


@dataclass
class LLMInterrogator:
    """An interrogator played by an OpenAI-compatible model (the local one by default): it writes
    the next question from the prompt template and, at the end, a verdict and confidence (the
    LLM judge's parser reads it)."""

    chat: Callable[[list[dict[str, str]]], str]
    prompt: str = field(default_factory=lambda: (Path(__file__).parent / "prompts" / "interrogator.j2").read_text())

    def ask(self, transcript: list[tuple[str, str]]) -> str:
        msgs = [{"role": "system", "content": self.prompt}]
        msgs += [{"role": "assistant" if who == "you" else "user", "content": t} for who, t in transcript]
        if not transcript:
            msgs.append({"role": "user", "content": "(the chat starts; write your first message)"})
        text = " ".join(self.chat(msgs).split())[:200]
        return text or "hey"

    def decide(self, transcript: list[tuple[str, str]]) -> tuple[str, int]:
        from turinglab.judges.llm import parse, render_system, user_message

        text = "\n".join(f"{'Interrogator' if w == 'you' else 'Witness'}: {t}" for w, t in transcript)
        p = parse(self.chat([{"role": "system", "content": render_system("transcript")},
                             {"role": "user", "content": user_message("transcript", "", text)}]))
        choice = "human" if p.verdict == "human" else "ai"
        return choice, int(round(p.confidence if p.confidence is not None else 50))


async def _survey(base: str, pid: str, rng: random.Random) -> bool:
    import httpx

    from turinglab.server.testing import csrf_token

    async with httpx.AsyncClient(base_url=base, timeout=30) as c:
        token = csrf_token((await c.get(f"/p/{pid}")).text)
        answers = {"skipped": True} if rng.random() < 0.3 else {"age": rng.randint(18, 70)}
        r = await c.post(f"/p/{pid}/survey", json=answers, headers={"X-CSRF-Token": token})
        return r.status_code < 300


async def play_one(base: str, token: str | None, seed: int, *, turns: int = 5, llm: LLMInterrogator | None = None,
                   timeout_s: float = 600.0, strategy: str = "default") -> BotGame:
    """One bot participant from the start page to the survey. `strategy`: the scripted
    interrogator's ("default" or "adversarial", bots/adversarial.py)."""
    from turinglab.server.testing import WsPlayer

    rng = random.Random(seed)
    t0 = time.monotonic()
    p = await WsPlayer.create(base, headers={BOT_HEADER: token} if token else None)
    out = BotGame(pid=p.pid)
    await p.connect()
    try:
        await p.next("state", timeout=30)
        await p.send({"type": "join"})
        state = await p.phase("game", timeout=timeout_s)
        g = state["game"]
        out.role, out.game_id = g["role"], g["game_id"]
        if out.role == "interrogator":
            await _interrogate(p, out, rng, turns, llm, g["convs"], strategy)
        else:
            await _witness(p, out, rng, g["seat"])
        await p.phase("reveal", timeout=timeout_s)
        out.survey = await _survey(base, p.pid, rng)
    except Exception as exc:  # noqa: BLE001 - reported per bot, the others go on
        out.error = f"{type(exc).__name__}: {exc}"[:300]
    finally:
        await p.close()
        out.seconds = time.monotonic() - t0
    return out


async def _interrogate(p, out: BotGame, rng: random.Random, turns: int, llm: LLMInterrogator | None,
                       convs: list[str], strategy: str = "default") -> None:  # noqa: ANN001
    script = ScriptedInterrogator(seed=rng.randrange(2**31), strategy=strategy).questions(turns)
    transcripts: dict[str, list[tuple[str, str]]] = {c: [] for c in convs}
    for k in range(turns):
        for conv in convs:
            if llm is not None:
                q = await asyncio.to_thread(llm.ask, transcripts[conv])
            else:
                q = script[k][1]
            cid = f"q{k}{conv}{rng.randrange(10**6)}"
            await p.send({"type": "message", "conv": conv, "text": q, "client_id": cid})
            await p.next("ack", timeout=30, client_id=cid)
            transcripts[conv].append(("you", q))
            out.messages += 1
            reply = await p.next("message", timeout=120, conv=conv, **{"from": "them"})
            transcripts[conv].append(("them", reply["text"]))
    if llm is not None:
        choice, conf = await asyncio.to_thread(llm.decide, transcripts[convs[0]])
        if len(convs) == 2:
            choice = convs[0] if choice == "human" else convs[1]
    else:
        choice = rng.choice(convs) if len(convs) == 2 else rng.choice(("human", "ai"))
        conf = rng.randint(50, 100)
    await p.send({"type": "verdict", "choice": choice, "confidence": conf})
    out.verdict, out.confidence = choice, conf


async def _witness(p, out: BotGame, rng: random.Random, seat: str) -> None:  # noqa: ANN001
    k = 0
    while True:
        f = await p.next(None, timeout=600)
        if f.get("type") == "state" and f.get("phase") in ("verdict", "reveal"):
            p._cursor -= 1  # let the caller read this state again
            return
        if f.get("type") == "message" and f.get("from") == "them":
            await asyncio.sleep(rng.uniform(1, 3))
            k += 1
            await p.send({"type": "message", "conv": seat, "text": rng.choice(_WITNESS_LINES), "client_id": f"w{k}"})
            out.messages += 1


async def run_bots(base: str, token: str | None, games: int, *, parallel: int = 4, turns: int = 5,
                   llm: LLMInterrogator | None = None, seed: int = 0,
                   progress: Callable[[BotGame], None] | None = None, strategy: str = "default") -> list[BotGame]:
    """`games` bot participants, `parallel` at a time; each result says its role, game and errors.
    `strategy`: the scripted interrogators' ("default" or "adversarial")."""
    ScriptedInterrogator(0, strategy)  # an unknown strategy fails before any bot starts
    sem = asyncio.Semaphore(parallel)

    async def one(i: int) -> BotGame:
        async with sem:
            r = await play_one(base, token, seed + i, turns=turns, llm=llm, strategy=strategy)
        if progress:
            progress(r)
        return r

    return list(await asyncio.gather(*(one(i) for i in range(games))))
