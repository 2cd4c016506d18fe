"""LLM witnesses over the OpenAI-compatible chat API (remote models and the embedded local one).

One code path for every model: ``AsyncOpenAI`` with the spec's base URL, key (from the env var
the spec names), model, temperature, max tokens, stop sequences, per-request timeout and
retries (the client backs off exponentially and honours ``Retry-After`` up to 60 s). The whole
wait, retries included, is bounded by ``timeout_s`` and by the time left in the game.

When the model fails or is too slow, the game goes on: the spec's fallback answers (ELIZA by
default, or a fixed text), and the failure is recorded in ``Reply.fallback`` / ``Reply.error``
and logged. Nothing of it is shown to the interrogator beyond an ordinary delay.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import random
import time
import weakref
from typing import Any

from turinglab.game.config import WitnessSpec
from turinglab.witnesses import persona
from turinglab.witnesses.base import GameContext, Reply, Turn, Witness
from turinglab.witnesses.postprocess import apply as postprocess

log = logging.getLogger("turinglab.witnesses")


class WitnessConfigError(ValueError):
    """A witness spec that cannot work as configured (e.g. no API key)."""


class EmptyReply(RuntimeError):
    """The model answered with nothing usable."""


# one client per event loop and (base URL, key, timeout, retries): building an AsyncOpenAI costs
# ~30 ms of synchronous work and each has its own connection pool; pooled connections belong to
# the loop that opened them, hence one cache per loop
_CLIENTS: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[tuple[Any, ...], Any]] = (
    weakref.WeakKeyDictionary()
)


def shared_client(base_url: str | None, api_key: str, timeout_s: float, retries: int) -> Any:
    """The AsyncOpenAI client shared by every witness of this event loop with these settings.
    Do not close it: it lives as long as the loop."""
    clients = _CLIENTS.setdefault(asyncio.get_running_loop(), {})
    key = (base_url, api_key, float(timeout_s), int(retries))
    client = clients.get(key)
    if client is None or client.is_closed():
        from openai import AsyncOpenAI

        client = clients[key] = AsyncOpenAI(base_url=base_url, api_key=api_key, timeout=timeout_s,
                                            max_retries=retries)
    return client


def to_messages(system: str, history: list[Turn], shots: list[tuple[str, str]] | None = None,
                after: str = "") -> list[dict[str, str]]:
    """Chat messages: the persona prompt, its example exchanges and what the prompt says after
    them (a second system message), then the interrogator as user and the witness as assistant."""
    out = [{"role": "system", "content": system}]
    for them, you in shots or ():
        out += [{"role": "user", "content": them}, {"role": "assistant", "content": you}]
    if after:
        out.append({"role": "system", "content": after})
    out += [{"role": "user" if t.role == "interrogator" else "assistant", "content": t.text} for t in history]
    return out


# appended as a last system message when the guard asks for a reply again (the prompt cache
# of the conversation so far is kept: only these tokens are new)
STEER = ("Stay in character: you are a human chatting with a stranger. Answer their last message "
         "in a few casual words, the way a person types. Never say or hint that you are an AI, a "
         "model, a program or an assistant; never offer help or ask if they have questions.")


class LLMWitness(Witness):
    """A model + prompt (+ timing settings) witness. `kind` is "llm" or "local"."""

    def __init__(
        self,
        spec: WitnessSpec,
        *,
        seed: int | None = None,
        client: Any | None = None,
        local_server: Any | None = None,
        events_path: str | None = None,
    ) -> None:
        if spec.kind not in ("llm", "local"):
            raise WitnessConfigError(f"witness {spec.codename!r}: LLMWitness needs kind llm or local, not {spec.kind!r}")
        if spec.kind == "llm" and not spec.base_url and not os.environ.get(spec.api_key_env or ""):
            raise WitnessConfigError(
                f"witness {spec.codename!r}: no API key: set {spec.api_key_env or 'api_key_env'} "
                "or give base_url of an OpenAI-compatible server (vLLM, llama.cpp, Ollama)"
            )
        # events: the constructor's file, else the persona's own `events`, else $TURINGLAB_EVENTS
        self._events_path = events_path or (None if spec.persona.get("events") else os.environ.get("TURINGLAB_EVENTS"))
        persona.check(spec.prompt, spec.persona, self._events_path)  # bad prompt/events fail now, not mid-game
        self.spec = spec
        self.codename = spec.codename
        self.kind = spec.kind
        self.seed = seed
        self.rng = random.Random(seed)
        self._client = client
        self._own_client = client is not None  # a client given to the constructor is closed by close()
        self._server = local_server
        self._system: str | None = None
        self._shots: list[tuple[str, str]] = []
        self._after = ""
        self._warm: asyncio.Task | None = None
        self._eliza: Witness | None = None
        self._turn = 0

    # ------------------------------------------------------------------ setup
    @property
    def model(self) -> str:
        if self.kind == "local":
            from turinglab.witnesses.local.server import MODEL_ALIAS

            return MODEL_ALIAS
        return self.spec.model or ""

    async def client(self) -> Any:
        if self._client is None:
            if self.kind == "local":
                if self._server is None:
                    from turinglab.witnesses.local.server import shared_server

                    self._server = shared_server()
                base_url, key = await self._server.astart(), "local"
            else:
                base_url = self.spec.base_url
                key = os.environ.get(self.spec.api_key_env or "") or "none"
            self._client = shared_client(base_url, key, self.spec.timeout_s, self.spec.retries)
        return self._client

    def system_prompt(self, ctx: GameContext) -> str:
        return persona.render(self.spec.prompt, self.spec.persona, ctx, self._events_path)

    def _fill(self, ctx: GameContext) -> None:
        self._system, self._shots, self._after = persona.split_examples(self.system_prompt(ctx))

    async def start(self, ctx: GameContext) -> None:
        """Fill the persona prompt for this game; the local model also pre-reads it (prompt cache)."""
        self._fill(ctx)
        if self.kind == "local":
            self._warm = asyncio.create_task(self._prefill())

    async def _prefill(self) -> None:
        try:
            client = await self.client()
            await client.chat.completions.create(
                model=self.model, messages=to_messages(self._system or "", [], self._shots, self._after), max_tokens=1, temperature=0
            )
        except Exception as exc:  # noqa: BLE001 - a failed warm-up only costs time; reply() reports errors
            log.info("witness %s: prompt pre-read failed: %s", self.codename, exc)

    # ------------------------------------------------------------------ replies
    def _budget_s(self, ctx: GameContext) -> float:
        """Longest wait for the model before the fallback answers: `timeout_s` in all, retries
        included (a game cannot wait for a timed-out request to be tried again), and never past
        the game's end."""
        left = ctx.time_limit_s - (ctx.now - ctx.started_at).total_seconds()
        return max(1.0, min(self.spec.timeout_s, left)) if left > 0 else self.spec.timeout_s

    async def _complete(self, history: list[Turn], steer: str | None = None) -> tuple[str, Any]:
        if self._warm is not None:
            with contextlib.suppress(Exception):
                await self._warm
            self._warm = None
        client = await self.client()
        kwargs: dict[str, Any] = {
            "model": self.model,
            "messages": to_messages(self._system or "", history, self._shots, self._after) + ([{"role": "system", "content": steer}] if steer else []),
            "temperature": self.spec.temperature,
            "max_tokens": self.spec.max_tokens,
        }
        if self.spec.stop:
            kwargs["stop"] = list(self.spec.stop)
        if self.seed is not None:
            kwargs["seed"] = self.seed + self._turn
        resp = await client.chat.completions.create(**kwargs)
        if not resp.choices:
            raise EmptyReply("the model returned no choices")
        return resp.choices[0].message.content or "", resp

    async def reply(self, history: list[Turn], ctx: GameContext) -> Reply:
        return await self._reply(history, ctx)

    async def regenerate(self, history: list[Turn], ctx: GameContext) -> Reply:
        """A reply asked for again by the persona guard: the same call with a steer back into persona."""
        return await self._reply(history, ctx, STEER)

    async def _reply(self, history: list[Turn], ctx: GameContext, steer: str | None = None) -> Reply:
        t0 = time.monotonic()
        if self._system is None:
            self._fill(ctx)
        self._turn += 1
        try:
            raw, resp = await asyncio.wait_for(self._complete(history, steer), timeout=self._budget_s(ctx))
            text = postprocess(raw, self.spec.postprocess, ctx.max_chars, self.rng)
            if not text.strip():
                raise EmptyReply(f"nothing left after post-processing (raw: {raw[:80]!r})")
        except Exception as exc:  # noqa: BLE001 - any failure: the fallback answers, the game goes on
            return await self._fallback(history, ctx, exc, t0)
        usage = getattr(resp, "usage", None)
        extra = (getattr(usage, "model_extra", None) or {}) if usage is not None else {}
        return Reply(
            text=text,
            latency_s=time.monotonic() - t0,
            tokens=getattr(usage, "completion_tokens", None),
            cost=extra.get("cost"),
            meta={
                "model": getattr(resp, "model", self.model),
                "prompt_tokens": getattr(usage, "prompt_tokens", None),
                "finish_reason": resp.choices[0].finish_reason,
                "raw": raw,
                "steered": steer is not None,
                # llama.cpp servers add their own timings (prompt/generation tokens per second)
                "timings": (getattr(resp, "model_extra", None) or {}).get("timings"),
            },
        )

    async def _fallback(self, history: list[Turn], ctx: GameContext, exc: BaseException, t0: float) -> Reply:
        error = f"{type(exc).__name__}: {exc}"[:500] if str(exc) else type(exc).__name__
        log.warning("witness %s: model failed (%s); fallback %r answers", self.codename, error, self.spec.fallback)
        fb = self.spec.fallback
        if fb is None:
            raise exc
        if fb.strip().lower() == "eliza":
            if self._eliza is None:
                from turinglab.witnesses.eliza.witness import ElizaWitness

                self._eliza = ElizaWitness(codename=self.codename, seed=self.seed)
            r = await self._eliza.reply(history, ctx)
            # ELIZA speaks teletype capitals; lowercase so the switch does not show
            text = postprocess(r.text.lower(), self.spec.postprocess, ctx.max_chars, self.rng)
        else:
            text = postprocess(fb, self.spec.postprocess, ctx.max_chars, self.rng)
        return Reply(
            text=text, latency_s=time.monotonic() - t0, fallback=True, error=error, meta={"fallback": fb}
        )

    async def close(self, wait: bool = False) -> None:
        """Let go of the client (the shared one stays open for other witnesses; one given to the
        constructor is closed); a pending prompt pre-read is cancelled (or awaited with `wait`)."""
        if self._warm is not None:
            if not wait:
                self._warm.cancel()
            with contextlib.suppress(BaseException):
                await self._warm
        if self._client is not None and self._own_client:
            with contextlib.suppress(Exception):
                await self._client.close()
        self._client, self._own_client = None, False
