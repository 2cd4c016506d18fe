"""Witness probe: bot games against one witness, before paying participants.

    probe(spec, games=20) -> ProbeResult (to_json(): witness, replies, persona_breaks, blocked,
                                          judged_human_rate, ...)

Each game: the scripted interrogator (bots/interrogator.py) asks `turns` questions, the witness
answers with no delay, and each reply comes through the AI seat of a live game
(witnesses/ai_seat.py: content filter, then the persona-break classifier of witnesses/guard; a
refused reply is asked for again, steered back into persona, up to REGENERATE_TRIES times while the
first reply's mean designed delay has not passed, then the ELIZA fallback answers: "guard_fallbacks"). We count the model's replies
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
from turinglab.witnesses.ai_seat import LATE_TOLERANCE_MS, AISeat, wall_ms
from turinglab.witnesses.base import GameContext, Turn, Witness
from turinglab.witnesses.guard import classify, is_refusal



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
    personas: list[dict[str, Any]] = field(default_factory=list)  # drawn per game (draw_persona)

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


async def _game(witness: Witness, spec: WitnessSpec, i: int, turns: int, max_chars: int, flt: Any,
                res: ProbeResult, rules: Rules, strategy: str = "default",
                script: list[tuple[str, str]] | None = None) -> None:
    now = datetime.now(timezone.utc)
    ctx = GameContext(game_id=f"probe-{i}", started_at=now, now=now, time_limit_s=300, max_chars=max_chars)
    rng = random.Random(i)
    seat = AISeat(witness, spec, content_filter=flt, max_chars=max_chars, game=ctx.game_id, seat="A")
    await witness.start(ctx)
    history: list[Turn] = []
    shown: list[tuple[str, str]] = []
    try:
        asked = script if script is not None else ScriptedInterrogator(seed=i, strategy=strategy).questions(turns)
        for k, (cat, q) in enumerate(asked):
            history.append(Turn("interrogator", q, 0))
            shown.append(("Interrogator", q))
            ctx = GameContext(game_id=ctx.game_id, started_at=now, now=now + timedelta(seconds=40 * (k + 1)),
                              time_limit_s=300, max_chars=max_chars)
            text = await _reply(seat, history, ctx, q, res, rng, rules, cat)
            history.append(Turn("witness", text, 0))
            shown.append(("Witness", text))
    finally:
        close = getattr(witness, "close")
        await close()
    res.transcripts.append(shown)


async def _reply(seat: AISeat, history: list[Turn], ctx: GameContext, q: str, res: ProbeResult,
                 rng: random.Random, rules: Rules, cat: str) -> str:
    """One reply through the AI seat, the one path of a live game (witnesses/ai_seat.py), and
    what it did, counted: the reply as first generated, each regeneration, the shown one."""
    spec = seat.spec
    t0 = time.monotonic()
    asked = wall_ms()
    ans = await seat.answer(history, ctx, question=q, asked_ms=asked, deadline_ms=asked + 300_000)
    elapsed = time.monotonic() - t0
    first = ans.refusals[0].text if ans.refusals else ans.text
    broke, why = classify(first, q)
    model_s = [x for x in ans.trace.get("model_s", []) if x is not None]
    if model_s:
        res.latencies_s.append(model_s[0])
    res.replies += 1
    res.fallbacks += int("witness_fallback" in ans.trace)
    res.refusals += int(is_refusal(first))
    res.persona_breaks += int(broke)
    if broke:
        res.examples.append({"question": q, "reply": first, "why": why})
    res.blocked += sum(r.code == "blocked" for r in ans.refusals)
    res.regenerated += len(ans.tries)
    refused = {r.text: r for r in ans.refusals[1:]}
    tries = []
    for t in ans.tries:
        r = refused.get(t)
        tries.append({"text": t, "why": r.detail if r else ("empty" if not t else "ok"),
                      "blocked": r.detail if r and r.code == "blocked" else None})
    res.guard_fallbacks += int(bool(ans.refusals) and ans.source in ("fallback", "brush_off", "last_resort"))
    text = ans.text
    designed = max(timing.reply_delay(len(text), spec.timing, rng, prev_chars=len(q)),
                   timing.typing_delay(rules, rng) + rules.typing_min_s)
    late = elapsed > designed + LATE_TOLERANCE_MS / 1000
    res.late += int(late)
    if ans.refusals or ans.trace.get("eliza"):  # not the model's first reply as given
        res.guarded_elapsed_s.append(round(elapsed, 2))
        res.late_guarded += int(late)
    shown_break, shown_why = classify(text, q)
    res.shown_breaks += int(shown_break)
    res.lengths.append(len(text))
    res.records.append({"game": int(ctx.game_id.split("-")[-1]), "turn": len(history) // 2 + 1, "category": cat,
                        "question": q, "first": first, "first_why": why, "tries": tries,
                        "fallback": "witness_fallback" in ans.trace, "source": ans.source, "shown": text,
                        "shown_why": shown_why, "elapsed_s": round(elapsed, 2), "designed_s": round(designed, 2),
                        "late": late})
    return text


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
          strategy: str = "default", questions: list[tuple[str, str]] | None = None,
          draw_persona: bool = False, after_game: Callable[[ProbeResult], None] | None = None) -> ProbeResult:  # noqa: ANN001
    """Play `games` bot games against `spec` and measure its replies (see the module doc).
    `judge=None` skips the judged-human rate. `strategy`: the scripted interrogator's ("default"
    or "adversarial": bots/adversarial.py); each record's "category" is the message's family.
    `questions`: (family, message) pairs asked in order instead, `turns` per game (game k asks
    pairs k*turns ... k*turns+turns-1, wrapping round). `draw_persona`: each game's witness gets
    a persona drawn from its seed, as a server game of a study with `persona_draw` does.
    `after_game` sees the result so far after each game (e.g. to save a long run as it goes)."""
    ScriptedInterrogator(0, strategy)  # an unknown strategy fails here, before the model starts
    from turinglab.witnesses.filters import ComposedFilter
    from turinglab.witnesses.registry import build_witness

    from turinglab.witnesses.guard import model

    model()  # trained before the first game (a live server trains it at start), not inside a reply's time
    make = make_witness or (lambda s, k: build_witness(s, seed=k))
    rules = rules or Rules()
    flt = ComposedFilter(content_filter)
    res = ProbeResult(witness=spec.codename, games=games)

    async def run() -> None:
        if spec.kind == "local" and make_witness is None:  # as a live server does at start (hub.warm_up)
            from turinglab.witnesses.registry import warm_up

            await warm_up([spec])
        for i in range(games):
            script = None
            if questions:
                script = [questions[(i * turns + k) % len(questions)] for k in range(turns)]
            game_spec = spec
            if draw_persona:
                from turinglab.witnesses import persona_draw

                drawn = persona_draw.draw(seed + i, age=spec.persona.get("age"))
                game_spec = spec.model_copy(update={"persona": {**spec.persona, **drawn}})
                res.personas.append(drawn)
            await _game(make(game_spec, seed + i), game_spec, seed + i, turns, max_chars, flt, res, rules, strategy,
                        script)
            if progress:
                progress(i + 1)
            if after_game:
                after_game(res)

    asyncio.run(run())
    if judge is not None:
        judge_transcripts(res, judge)
    if store is not None:
        res.human_lengths, res.human_delays_s = human_witness_replies(store)
    return res
