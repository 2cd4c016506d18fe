"""Named witnesses a user can pick, and building a `Witness` from a `WitnessSpec`.

    available()            -> {name: WitnessSpec}   (eliza, local, local-*; LLM personas when configured)
    resolve("eliza")       -> WitnessSpec            (by name or codename, case-insensitive)
    build_witness(spec)    -> Witness                (by the plugin of its kind: ELIZA, llm, local, ...)

The witness kinds and their named witnesses come from the plugin hook `turinglab_witness_kinds`
(the built-ins in witnesses/plugin.py).

The shipped LLM personas appear when an OpenAI-compatible endpoint is configured:
``OPENAI_API_KEY`` (OpenAI) or ``OPENAI_BASE_URL`` (any compatible server: vLLM, llama.cpp,
Ollama); the model is ``TURINGLAB_LLM_MODEL`` (default ``gpt-4o-mini``).
"""

from __future__ import annotations

import os

from turinglab.game.config import WitnessSpec
from turinglab.plugins.manager import witness_kinds
from turinglab.witnesses.base import Witness

DEFAULT_LLM_MODEL = "gpt-4o-mini"


class UnknownWitness(ValueError):
    """A witness name that is neither a shipped name nor a codename."""


def llm_configured() -> bool:
    return bool(os.environ.get("OPENAI_API_KEY") or os.environ.get("OPENAI_BASE_URL"))


def available() -> dict[str, WitnessSpec]:
    """The named witnesses a user can pick (e.g. ``turinglab chat --witness NAME``): those each
    registered witness kind offers (`turinglab witness list`)."""
    out: dict[str, WitnessSpec] = {}
    for kind in witness_kinds().values():
        out.update(kind.named())
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
    """A ready-to-use witness for `spec`, built by its kind's plugin; `seed` makes its randomness
    reproducible."""
    kinds = witness_kinds()
    if spec.kind not in kinds:
        raise UnknownWitness(f"witness {spec.codename!r}: unknown kind {spec.kind!r} (expected one of "
                             f"{', '.join(kinds)}; see `turinglab plugins`)")
    return kinds[spec.kind].build(spec, seed=seed)


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
