"""The AI seat: how an AI witness answers one question, wherever it plays.

Given the question, the conversation so far and the time it may take, `AISeat.answer` asks the
witness's model, runs every reply through the content filter and the persona guard, asks the
model again (steered back into persona: the witness's `regenerate`) while the mean designed delay
of the refused reply or of the fallback's (the longer) still hides the extra time, and else lets
the ELIZA fallback answer. Each refused
reply is reported (`on_refusal`, awaited before the model is asked again, so the caller can
record it in order) and listed in the `Answer`. It knows no game, socket or store: it is the one
path of an AI reply for a live game (server/live/session.py), `turinglab chat`
(cli/chat_terminal.py) and the witness probe (bots/probe.py); bots play through the server.
"""

from __future__ import annotations

import asyncio
import logging
import os
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from turinglab.witnesses import timing
from turinglab.witnesses.base import GameContext, Turn, Witness
from turinglab.witnesses import personal_data
from turinglab.witnesses.guard import lang, task
from turinglab.witnesses.persona import DEFAULT_PERSONA, english

log = logging.getLogger(__name__)

LATE_TOLERANCE_MS = 100  # a reply this much past its designed time counts as late (scheduling jitter)
REGENERATE_TRIES = 2  # a refused AI reply is asked for again at most this often (within its delay)
TASK_TRIES = 1  # ... after a machine task or an accusation (the steered model rarely does better twice)
# who wrote a shown AI reply: the model's first try, a try after the guard or filter refused
# earlier ones, the persona's brush-off, the fallback (ELIZA or the configured one), the last resort
SOURCES = ("model", "regenerated", "brush_off", "fallback", "last_resort")
LAST_RESORT = "sorry, what do you mean?"  # when even the fallback's reply is refused
FALLBACK_TEXT = "please go on."  # when the fallback itself fails


def wall_ms() -> int:
    return time.time_ns() // 1_000_000


def load_average() -> float | None:
    """The machine's load average over the last minute (None where the system has none): a
    capacity estimate's change names it, since other work on the cores slows the model."""
    try:
        return os.getloadavg()[0]
    except (OSError, AttributeError):
        return None


@dataclass(frozen=True)
class Refusal:
    """A reply that was not shown: `code` "blocked" (content filter, `detail` the word) or
    "persona_break" (the guard, `detail` why)."""

    text: str
    code: str
    detail: str


@dataclass
class Answer:
    text: str  # what to show (never empty)
    refusals: list[Refusal] = field(default_factory=list)
    fallback: bool = False  # the fallback wrote it, not the witness's model
    source: str = "model"  # who wrote the shown text: one of SOURCES
    tries: list[str] = field(default_factory=list)  # what each regeneration gave ("" when it failed)
    trace: dict[str, Any] = field(default_factory=dict)  # the model's timings, for the reply's timing record
    model: str = ""  # the witness's model (its kind where it has none)
    calls: int = 0  # calls to the model for this reply
    latency_ms: int = 0  # from the question to the text being ready

    def author(self) -> dict[str, Any]:
        """Who wrote the shown text, for the event that shows it (game/events.py AUTHOR_KEYS)."""
        return {"source": self.source, "model": self.model, "tries": self.calls, "latency_ms": self.latency_ms}


class ElizaFallback:
    """ELIZA answering when a model fails (built on first use), lower case as the LLM witnesses'
    own ELIZA fallback is, so the switch does not show."""

    def __init__(self, build: Callable[[], Witness] | None = None) -> None:
        self._build = build or _default_eliza
        self._eliza: Witness | None = None

    async def __call__(self, history: list[Turn], ctx: GameContext) -> str:
        if self._eliza is None:
            self._eliza = self._build()
        try:
            return (await self._eliza.reply(history, ctx)).text.strip().lower() or FALLBACK_TEXT
        except Exception:  # noqa: BLE001
            log.exception("the ELIZA fallback failed")
            return FALLBACK_TEXT


def _default_eliza() -> Witness:
    from turinglab.witnesses.registry import available, build_witness

    return build_witness(available()["eliza"], seed=0)


class AISeat:
    """One AI witness's answers. `content_filter`: an object with `async check(text) -> str | None`
    (the blocked word) and maybe `mask(text) -> str | None` (personal data masked; without it
    the shipped personal_data rules mask); `fallback`:
    `async (history, ctx) -> str`; `capacity`: the matchmaking
    `Capacity` that learns the model's speed (None: not measured); `now`: the caller's clock in ms
    (the question's time `asked_ms` is on it); `game`, `seat`: names for the log only."""

    def __init__(self, witness: Witness, spec: Any, *, content_filter: Any, max_chars: int,
                 fallback: Callable[[list[Turn], GameContext], Awaitable[str]] | None = None,
                 capacity: Any = None, now: Callable[[], int] = wall_ms, game: str = "", seat: str = "") -> None:
        self.witness, self.spec = witness, spec
        self.filter, self.max_chars = content_filter, max_chars
        self.fallback = fallback or ElizaFallback()
        self.capacity, self.now = capacity, now
        self.game, self.seat = game, seat
        self._calls, self._fell_back = 0, False  # of the reply in progress

    async def answer(self, history: list[Turn], ctx: GameContext, *, asked_ms: int, deadline_ms: int,
                     question: str | None = None, on_refusal: Callable[[Refusal], Awaitable[None]] | None = None,
                     trace: dict[str, Any] | None = None) -> Answer:
        """The reply to `question` (default: the last turn of `history`), asked at `asked_ms`;
        the first generation may take until `deadline_ms` (the game's end; at least 1 s)."""
        if question is None:
            question = history[-1].text if history else ""
        out = Answer("", trace=trace if trace is not None else {})
        if self.spec is not None:
            out.model = self.spec.model or self.spec.kind
        self._calls, self._fell_back = 0, False
        left = max(1.0, (deadline_ms - self.now()) / 1000)
        # a machine task or an accusation: the model is steered to brush it off, and if no reply
        # fits, the persona's own brush-off answers rather than the fallback (guard/task.py)
        task_kind = task.kind(question) if self.spec is not None and self.spec.kind != "eliza" else None
        if task_kind:
            out.trace["task"] = task_kind
        steer = task_kind if task_kind in task.STEERED else None  # a sum or a translation: asked as it is
        text = await self._generate(history, ctx, left, out.trace, task_kind=steer)
        if self._fell_back:  # the witness's own fallback answered for its failed model
            out.source, out.fallback = "fallback", True
        if not text:
            out.trace["eliza"] = out.fallback = True
            out.source = "brush_off" if task_kind else "fallback"
            text = await self._fall_back(history, ctx, task_kind, question)
        text = text[: self.max_chars]
        # the filter binds AI witnesses too: a blocked reply is recorded and counted, and the
        # model asked again while the designed delay of the first reply still hides it (ELIZA
        # would only say the same again); after that the fallback answers. The persona guard: a
        # reply that admits being an AI is recorded (code persona_break, never shown) and
        # regenerated the same way
        tries, budget, spare = 0, 0, None
        while refused := await self._timed_guard(text, out.trace, question):
            code, detail = refused
            out.trace.setdefault("refused", []).append(code)
            out.refusals.append(Refusal(text, code, detail))
            if on_refusal is not None:
                await on_refusal(out.refusals[-1])
            log.warning("game %s seat %s: the AI reply was refused (%s: %s)", self.game, self.seat, code, detail)
            if spare is None:
                # the model may be asked again until the refused reply or the fallback's own
                # (whichever is longer) would be due: the fallback is shown no sooner, and its
                # echo is a surer tell than a regenerated in-persona reply (issue 40 item 2)
                spare = (await self._fall_back(history, ctx, task_kind, question))[: self.max_chars]
                budget = asked_ms + round(1000 * timing.mean_delay(max(len(text), len(spare)), self.spec.timing,
                                                                   len(question)))
                out.trace["budget_ms"] = budget - asked_ms
            now = self.now()
            if self.spec.kind != "eliza" and tries < (TASK_TRIES if steer else REGENERATE_TRIES) and now < budget:
                tries += 1
                text = (await self._generate(history, ctx, (budget - now) / 1000, out.trace, again=True,
                                             task_kind=steer))[: self.max_chars]
                out.tries.append(text)
                if text:
                    out.source = "fallback" if self._fell_back else "regenerated"
                    out.fallback = self._fell_back
                    continue
            out.trace["eliza"] = out.fallback = True
            out.source = "brush_off" if task_kind else "fallback"
            text = spare or FALLBACK_TEXT
            if await self.guard(text, question):
                text, out.source = LAST_RESORT, "last_resort"
            break
        out.calls, out.latency_ms = self._calls, max(0, self.now() - asked_ms)
        # personal data is masked as in a person's message (a model's made-up number shown whole
        # where a person's would be hidden would tell them apart)
        mask = getattr(self.filter, "mask", None)
        out.text = (mask(text) if callable(mask) else personal_data.mask(text)[0]) or text
        return out

    async def _fall_back(self, history: list[Turn], ctx: GameContext, task_kind: str | None, question: str) -> str:
        """The fallback's reply, or after a machine task or an accusation the persona's brush-off
        (ELIZA would echo the order back: "why are you concerned over my initial prompt")."""
        if task_kind:
            return task.deflection(task_kind, question, len(history), [t.text for t in history if t.role == "witness"],
                                   english(str(self.spec.persona.get("country", DEFAULT_PERSONA["country"]))))
        return await self.fallback(history, ctx)

    def timing_record(self, trace: dict[str, Any], chars: int, ready_ms: int, designed_ms: int, typing_ms: int) -> None:
        """Log the reply's timing record (`reply_timing`: ready `ready_ms` after the question, due
        at `designed_ms`) and tell the capacity whether it was late: a tell the capacity limit is
        there to prevent."""
        late = ready_ms > designed_ms + LATE_TOLERANCE_MS
        trace.update(chars=chars, ready_ms=ready_ms, designed_ms=designed_ms, typing_ms=typing_ms,
                     late_ms=max(0, ready_ms - designed_ms))
        log.log(logging.WARNING if late else logging.INFO, "game %s seat %s: AI reply %s: %s", self.game, self.seat,
                "LATE" if late else "on time", trace, extra={"reply_timing": trace})
        if self.capacity is not None:
            self.capacity.delivered(self.spec.codename, late)

    async def guard(self, text: str, question: str | None = None) -> tuple[str, str] | None:
        """("blocked", word) for a reply the content filter blocks, ("persona_break", why) for
        an LLM reply that admits being an AI (read after the interrogator's `question`); None
        when it may be shown."""
        if blocked := await self.filter.check(text):
            return "blocked", blocked
        if self.spec is not None and self.spec.kind != "eliza":
            from turinglab.witnesses.guard import classify

            broke, why = await asyncio.to_thread(classify, text, question)  # the first call trains (~1 s)
            if broke:
                return "persona_break", why
            languages = self.spec.persona.get("languages", DEFAULT_PERSONA["languages"])
            if said := lang.unspoken(text, languages):  # fluent in a language the persona does not speak
                return "persona_break", f"language: {said}, not one the persona speaks"
        return None

    async def _timed_guard(self, text: str, trace: dict, question: str) -> tuple[str, str] | None:
        t0 = time.monotonic()
        try:
            return await self.guard(text, question)
        finally:
            trace.setdefault("guard_s", []).append(round(time.monotonic() - t0, 3))

    async def _generate(self, history: list[Turn], ctx: GameContext, timeout_s: float, trace: dict,
                        again: bool = False, task_kind: str | None = None) -> str:
        """One reply from the witness's model, "" when it fails (never shown). `trace` collects
        the model's timings; `again`: the guard refused the last one (the witness's `regenerate`,
        steered back into persona); `task_kind`: the question is a machine task or an accusation
        (the witness's `answer_task`, steered to brush it off)."""
        cap, name = self.capacity, self.spec.codename if self.spec is not None else ""
        n = cap.started_generating(name) if cap is not None else 0
        self._calls, self._fell_back = self._calls + 1, False
        t0 = time.monotonic()
        try:
            ask = (getattr(self.witness, "answer_task", self.witness.reply) if task_kind
                   else self.witness.regenerate if again else self.witness.reply)
            reply = await asyncio.wait_for(ask(history, ctx), timeout=max(0.05, timeout_s))
            # one entry per model call (llama.cpp's timings when it gives them)
            tm, meta = reply.meta.get("timings") or {}, reply.meta
            for key, value in (("model_s", round(time.monotonic() - t0, 3)), ("prompt_n", tm.get("prompt_n")),
                               ("prompt_ms", tm.get("prompt_ms")), ("gen_n", tm.get("predicted_n")),
                               ("gen_ms", tm.get("predicted_ms")), ("cache_n", tm.get("cache_n")),
                               ("first_s", meta.get("first_s")), ("usable_s", meta.get("usable_s")),
                               ("deadline", meta.get("deadline"))):
                trace.setdefault(key, []).append(value)
            if reply.fallback:
                trace["witness_fallback"] = reply.error
                self._fell_back = True
            if cap is not None and not reply.error:  # the model's real speed, for its capacity estimate
                cap.observe(name, time.monotonic() - t0, max(n, cap.generating.get(name, 0)),
                            first_s=reply.meta.get("usable_s"), cut=reply.meta.get("deadline") == "cut",
                            load=load_average(), at_ms=self.now())
                n = 0
            elif cap is not None and reply.meta.get("no_words_s"):  # no words in time: at least this slow
                cap.observe(name, time.monotonic() - t0, max(n, cap.generating.get(name, 0)),
                            first_s=reply.meta["no_words_s"], load=load_average(), at_ms=self.now(), gave_up=True)
                n = 0
            if reply.error:
                log.warning("game %s seat %s: %s (fallback=%s)", self.game, self.seat, reply.error, reply.fallback)
            return (reply.text or "").strip()
        except Exception as exc:  # noqa: BLE001 - never show a model failure
            log.warning("game %s seat %s: witness failed (%s); ELIZA answers", self.game, self.seat, exc)
            return ""
        finally:
            if cap is not None and n:  # failed: no timing, but it no longer generates
                cap.generating[name] = max(0, cap.generating.get(name, 1) - 1)
