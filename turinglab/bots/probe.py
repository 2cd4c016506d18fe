"""Witness probe: bot games against one witness, before paying participants.

    probe(spec, games=20) -> ProbeResult (to_json(): witness, replies, persona_breaks, blocked,
                                          judged_human_rate, ...)

Each game: the scripted interrogator (bots/interrogator.py) asks `turns` questions, the witness
answers with no delay, and each reply goes through the same guard as in a live game (content
filter, then the persona-break classifier of witnesses/guard; a refused reply is asked for again,
steered back into persona, up to AI_REGENERATE_TRIES times while the first reply's mean designed
delay has not passed, then the fallback answers: "guard_fallbacks"). We count the model's replies
as first generated ("persona_breaks": before the guard) and as they would be shown
("shown_breaks"), and how many were ready later than their designed delay ("late", "late_guarded":
model and guard time measured, as a live game would show them). `records` keeps every reply.
Refusals ("sorry, I can't help with that") are counted apart. At the end an LLM judge
(judges/llm.py, the local model by default) reads each shown transcript and says human or
machine: "judged_human_rate". With a store, the human witnesses' reply lengths and delays are
given beside the witness's.
"""

from __future__ import annotations

import asyncio
import random
import statistics
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from datetime import datetime, timedelta, timezone
from typing import Any

from turinglab.bots.interrogator import ScriptedInterrogator
from turinglab.game.config import Rules, WitnessSpec
from turinglab.witnesses import timing
from turinglab.witnesses.base import GameContext, Turn, Witness
from turinglab.witnesses.guard import classify, is_refusal

REGENERATE_TRIES = 2  # as server/live/ai_seat.py REGENERATE_TRIES
LATE_TOLERANCE_S = 0.1  # as server/live/ai_seat.py LATE_TOLERANCE_MS


@dataclass
class ProbeResult:
    witness: str
    games: int
    replies: int = 0
    persona_breaks: int = 0  # replies as generated that broke persona (before the guard)
    regenerated: int = 0  # replies the guard asked for again
    shown_breaks: int = 0  # replies still breaking persona after the guard
    blocked: int = 0  # replies the content filter blocked
    refusals: int = 0
    fallbacks: int = 0  # replies the fallback (e.g. ELIZA) gave because the model failed
    guard_fallbacks: int = 0  # replies still refused after the guard's tries: the fallback answered
    late: int = 0  # replies ready later than their designed delay (model time + guard, as in a live game)
    late_guarded: int = 0  # of them, replies the guard refused at least once
    guarded_elapsed_s: list[float] = field(default_factory=list)  # time to a shown reply, for guarded ones
    judged_human: int = 0
    judged: int = 0
    lengths: list[int] = field(default_factory=list)
    latencies_s: list[float] = field(default_factory=list)
    human_lengths: list[int] = field(default_factory=list)
    human_delays_s: list[float] = field(default_factory=list)
    examples: list[dict[str, str]] = field(default_factory=list)  # the breaks, with the question and why
    transcripts: list[list[tuple[str, str]]] = field(default_factory=list)
    records: list[dict[str, Any]] = field(default_factory=list)  # one per reply: question, first, tries, shown
    verdicts: list[str] = field(default_factory=list)  # the judge's verdict per transcript

    @property
    def persona_break_rate(self) -> float:
        return self.persona_breaks / self.replies if self.replies else 0.0

    @property
    def shown_break_rate(self) -> float:
        return self.shown_breaks / self.replies if self.replies else 0.0

    @property
    def judged_human_rate(self) -> float | None:
        return self.judged_human / self.judged if self.judged else None

    def to_json(self) -> dict[str, Any]:
        d = asdict(self)
        d.pop("transcripts")
        d.pop("records")
        for k in ("lengths", "latencies_s", "human_lengths", "human_delays_s", "guarded_elapsed_s"):
            d[k] = _summary(d.pop(k))
        d.update(persona_break_rate=round(self.persona_break_rate, 4), shown_break_rate=round(self.shown_break_rate, 4),
                 judged_human_rate=None if self.judged_human_rate is None else round(self.judged_human_rate, 4))
        return d


def _summary(xs: list[float]) -> dict[str, float] | None:
    if not xs:
        return None
    q = statistics.quantiles(xs, n=20) if len(xs) > 1 else [xs[0]] * 19
    return {"n": len(xs), "median": round(statistics.median(xs), 2), "p5": round(q[0], 2), "p95": round(q[18], 2)}


async def _game(witness: Witness, spec: WitnessSpec, i: int, turns: int, max_chars: int, check_filter,
                res: ProbeResult, rules: Rules, strategy: str = "default") -> None:  # noqa: ANN001
    now = datetime.now(timezone.utc)
    ctx = GameContext(game_id=f"probe-{i}", started_at=now, now=now, time_limit_s=300, max_chars=max_chars)
    rng = random.Random(i)
    await witness.start(ctx)
    history: list[Turn] = []
    shown: list[tuple[str, str]] = []
    try:
        for k, (cat, q) in enumerate(ScriptedInterrogator(seed=i, strategy=strategy).questions(turns)):
            history.append(Turn("interrogator", q, 0))
            shown.append(("Interrogator", q))
            ctx = GameContext(game_id=ctx.game_id, started_at=now, now=now + timedelta(seconds=40 * (k + 1)),
                              time_limit_s=300, max_chars=max_chars)
            text = await _reply(witness, spec, history, ctx, q, max_chars, check_filter, res, rng, rules, cat)
            history.append(Turn("witness", text, 0))
            shown.append(("Witness", text))
    finally:
        close = getattr(witness, "close")
        await close()
    res.transcripts.append(shown)


async def _reply(witness: Witness, spec: WitnessSpec, history: list[Turn], ctx: GameContext, q: str, max_chars: int,
                 check_filter, res: ProbeResult, rng: random.Random, rules: Rules, cat: str) -> str:  # noqa: ANN001
    """One reply as a live game makes it (server/live/ai_seat.py `AISeat.answer`): the guard refuses a
    blocked or persona-breaking reply, which is asked for again (steered) while the mean designed
    delay of the first reply has not passed, at most REGENERATE_TRIES times; then the fallback."""
    t0 = time.monotonic()
    r = await witness.reply(history, ctx)
    res.latencies_s.append(r.latency_s)
    text = r.text.strip()[:max_chars] or await _fallback_text(spec, history, ctx)
    word = await check_filter(text)
    broke, why = classify(text, q)
    res.replies += 1
    res.fallbacks += int(r.fallback)
    res.refusals += int(is_refusal(text))
    res.persona_breaks += int(broke)
    if broke:
        res.examples.append({"question": q, "reply": text, "why": why})
    rec: dict[str, Any] = {"game": int(ctx.game_id.split("-")[-1]), "turn": len(history) // 2 + 1, "category": cat,
                           "question": q, "first": text, "first_why": why, "tries": [], "fallback": bool(r.fallback)}
    budget = timing.mean_delay(len(text), spec.timing, len(q))
    source = "model"
    while word or broke:
        res.blocked += int(bool(word))
        if len(rec["tries"]) < REGENERATE_TRIES and time.monotonic() - t0 < budget:
            res.regenerated += 1
            left = budget - (time.monotonic() - t0)
            try:
                text = (await asyncio.wait_for(witness.regenerate(history, ctx), max(0.05, left))).text.strip()[:max_chars]
            except asyncio.TimeoutError:
                text = ""
            word, (broke, why) = (await check_filter(text), classify(text, q)) if text else (None, (False, "empty"))
            rec["tries"].append({"text": text, "why": why, "blocked": word or None})
            source = "regenerated"
            if text:
                continue
        res.guard_fallbacks += 1
        text, source = await _fallback_text(spec, history, ctx, q), "fallback"
        break
    elapsed = time.monotonic() - t0
    designed = max(timing.reply_delay(len(text), spec.timing, rng, prev_chars=len(q)),
                   timing.typing_delay(rules, rng) + rules.typing_min_s)
    late = elapsed > designed + LATE_TOLERANCE_S
    res.late += int(late)
    if source != "model":
        res.guarded_elapsed_s.append(round(elapsed, 2))
        res.late_guarded += int(late)
    shown_break, shown_why = classify(text, q)
    res.shown_breaks += int(shown_break)
    res.lengths.append(len(text))
    rec.update(source=source, shown=text, shown_why=shown_why, elapsed_s=round(elapsed, 2),
               designed_s=round(designed, 2), late=late)
    res.records.append(rec)
    return text


async def _fallback_text(spec: WitnessSpec, history: list[Turn], ctx: GameContext, q: str | None = None) -> str:
    """What the live game shows when the guard's tries are used up (server/live/ai_seat.py): the spec's
    fallback (ELIZA, lowercased as LLMWitness does, or its fixed text), else a neutral line."""
    fb = (spec.fallback or "").strip()
    if fb.lower() == "eliza":
        from turinglab.witnesses.eliza.witness import ElizaWitness

        text = (await ElizaWitness(codename=spec.codename, seed=0).reply(history, ctx)).text.lower()
    else:
        text = fb
    return text if text and not classify(text, q)[0] else "sorry, what do you mean?"


def judge_transcripts(res: ProbeResult, chat: Callable[[list[dict[str, str]]], str]) -> None:
    """Ask the LLM judge about each transcript; counts judged human."""
    from turinglab.judges.llm import parse, render_system, user_message

    system = render_system("transcript")
    for t in res.transcripts:
        text = "\n".join(f"{who}: {msg}" for who, msg in t)
        verdict = parse(chat([{"role": "system", "content": system},
                              {"role": "user", "content": user_message("transcript", "", text)}])).verdict
        res.verdicts.append(verdict)
        res.judged += int(verdict != "unparsed")
        res.judged_human += int(verdict == "human")


def human_witness_replies(store) -> tuple[list[int], list[float]]:  # noqa: ANN001
    """Lengths and delays (s after the question) of human witnesses' replies in stored games."""
    from turinglab.game import events as ev

    lengths, delays = [], []
    for g in store.games():
        humans = {seat for seat, ident in g.seats.items() if getattr(ident, "kind", None) == "human"}
        if not humans or g.flags.get("bot"):
            continue
        last_q: dict[str | None, int] = {}
        for e in store.events(g.id):
            if e.type != ev.MESSAGE:
                continue
            if e.actor == ev.INTERROGATOR:
                last_q[e.conversation] = e.t_ms
            elif e.actor in humans:
                lengths.append(len(e.payload.get("text", "")))
                if e.conversation in last_q:
                    delays.append((e.t_ms - last_q.pop(e.conversation)) / 1000)
    return lengths, delays


def probe(spec: WitnessSpec, *, games: int = 20, turns: int = 5, max_chars: int = 300, seed: int = 0,
          make_witness: Callable[[WitnessSpec, int], Witness] | None = None,
          judge: Callable[[list[dict[str, str]]], str] | None = None, content_filter: tuple[str, ...] = (),
          store=None, progress: Callable[[int], None] | None = None, rules: Rules | None = None,
          strategy: str = "default") -> ProbeResult:  # noqa: ANN001
    """Play `games` bot games against `spec` and measure its replies (see the module doc).
    `judge=None` skips the judged-human rate. `strategy`: the scripted interrogator's ("default"
    or "adversarial": bots/adversarial.py); each record's "category" is the message's family."""
    ScriptedInterrogator(0, strategy)  # an unknown strategy fails here, before the model starts
    from turinglab.server.content_filter import ContentFilter
    from turinglab.witnesses.registry import build_witness

    from turinglab.witnesses.guard import model

    model()  # trained before the first game (a live server trains it at start), not inside a reply's time
    make = make_witness or (lambda s, k: build_witness(s, seed=k))
    rules = rules or Rules()
    flt = ContentFilter(content_filter)
    res = ProbeResult(witness=spec.codename, games=games)

    async def run() -> None:
        if spec.kind == "local" and make_witness is None:  # as a live server does at start (hub.warm_up)
            from turinglab.witnesses.registry import warm_up

            await warm_up([spec])
        for i in range(games):
            await _game(make(spec, seed + i), spec, seed + i, turns, max_chars, flt.check, res, rules, strategy)
            if progress:
                progress(i + 1)

    asyncio.run(run())
    if judge is not None:
        judge_transcripts(res, judge)
    if store is not None:
        res.human_lengths, res.human_delays_s = human_witness_replies(store)
    return res
