"""Named witnesses a user can pick, and building a `Witness` from a `WitnessSpec`.

    available()            -> {name: WitnessSpec}   (eliza, local, local-*; LLM personas when configured)
    resolve("eliza")       -> WitnessSpec            (by name or codename, case-insensitive)
    build_witness(spec)    -> Witness                (ELIZA, LLM over the OpenAI API, or the local model)

The shipped LLM personas appear when an OpenAI-compatible endpoint is configured:
``OPENAI_API_KEY`` (OpenAI) or ``OPENAI_BASE_URL`` (any compatible server: vLLM, llama.cpp,
Ollama); the model is ``TURINGLAB_LLM_MODEL`` (default ``gpt-4o-mini``).
"""

from __future__ import annotations

import os

from turinglab.game.config import LOCAL_DEFAULTS, Postprocess, WitnessSpec
from turinglab.witnesses.base import Witness

DEFAULT_LLM_MODEL = "gpt-4o-mini"

# name -> (codename, prompt template). The same three prompts exist on the local model.
_PERSONAS: dict[str, tuple[str, str]] = {
    "young": ("Sierra", "young"),
    "baseline": ("Bravo", "baseline"),
    "ai-aware": ("Dragon", "ai-aware"),
}


# the small local model: short answers, a little less random than the API default
_LOCAL: dict = LOCAL_DEFAULTS


# the terse young persona writes in lowercase whatever the model does
_YOUNG_PP = Postprocess(lowercase=True)


class UnknownWitness(ValueError):
    """A witness name that is neither a shipped name nor a codename."""


def llm_configured() -> bool:
    return bool(os.environ.get("OPENAI_API_KEY") or os.environ.get("OPENAI_BASE_URL"))


def available() -> dict[str, WitnessSpec]:
    """The named witnesses a user can pick (e.g. ``turinglab chat --witness NAME``)."""
    out: dict[str, WitnessSpec] = {
        "eliza": WitnessSpec(codename="ELIZA", kind="eliza", fallback=None),
        "local": WitnessSpec(codename="Local", kind="local", prompt="young", postprocess=_YOUNG_PP, **_LOCAL),
        "local-baseline": WitnessSpec(codename="LocalBaseline", kind="local", prompt="baseline", **_LOCAL),
        "local-aware": WitnessSpec(codename="LocalAware", kind="local", prompt="ai-aware", **_LOCAL),
    }
    if llm_configured():
        model = os.environ.get("TURINGLAB_LLM_MODEL", DEFAULT_LLM_MODEL)
        base_url = os.environ.get("OPENAI_BASE_URL") or None
        for name, (codename, prompt) in _PERSONAS.items():
            out[name] = WitnessSpec(
                codename=codename, kind="llm", model=model, base_url=base_url, prompt=prompt, temperature=1.0,
                postprocess=_YOUNG_PP if prompt == "young" else Postprocess(),
            )
    return out


def resolve(name_or_codename: str) -> WitnessSpec:
    """The spec named `name_or_codename` (a name from `available()` or a codename)."""
    wanted = name_or_codename.strip().lower()
    specs = available()
    if wanted in specs:
        return specs[wanted]
    for spec in specs.values():
        if spec.codename.lower() == wanted:
            return spec
    hint = "" if llm_configured() else " (LLM personas appear when OPENAI_API_KEY or OPENAI_BASE_URL is set)"
    raise UnknownWitness(
        f"unknown witness {name_or_codename!r}; choose one of: "
        + ", ".join(f"{n} ({s.codename})" for n, s in specs.items())
        + hint
    )


def build_witness(spec: WitnessSpec, *, seed: int | None = None) -> Witness:
    """A ready-to-use witness for `spec`; `seed` makes its randomness reproducible."""
    if spec.kind == "eliza":
        from turinglab.witnesses.eliza.witness import ElizaWitness
        from turinglab.witnesses.postprocess import Postprocessed

        return Postprocessed(ElizaWitness(codename=spec.codename, script_path=spec.script, seed=seed), spec, seed)
    if spec.kind in ("llm", "local"):
        from turinglab.witnesses.llm import LLMWitness

        return LLMWitness(spec, seed=seed)
    raise UnknownWitness(f"witness {spec.codename!r}: unknown kind {spec.kind!r} (expected eliza, llm or local)")


async def warm_up(specs: list[WitnessSpec] | tuple[WitnessSpec, ...], *, local_server=None) -> None:
    """Start the local model and pre-read the local witnesses' prompts into every slot of the
    model server (round robin when there are several), so that no game reads a prompt from cold:
    that takes ~10 s on one thread and stalls the other games' replies meanwhile. Call it once
    when a server starts; other kinds are skipped. Failures are logged, never raised (the
    fallback covers them in games)."""
    from datetime import datetime, timezone

    from turinglab.witnesses.base import GameContext
    from turinglab.witnesses.llm import LLMWitness
    from turinglab.witnesses.local.server import shared_server

    local = [spec for spec in specs if spec.kind == "local"]
    if not local:
        return
    server = local_server or shared_server()
    now = datetime.now(timezone.utc)
    ctx = GameContext(game_id="warm-up", started_at=now, now=now, time_limit_s=300, max_chars=300)
    for k in range(max(len(local), getattr(server, "slots", 1))):
        spec = local[k % len(local)]
        slot = k % server.slots if hasattr(server, "slots") else None
        w = LLMWitness(spec, local_server=server, slot=slot)
        await w.start(ctx)
        await w.close(wait=True)
        if slot is not None:
            server.mark_slot(slot, spec.codename)
