"""What `turinglab witness list / show` print: the named witnesses and a sample game's prompt."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from typing import Any

from turinglab.game.config import WitnessSpec
from turinglab.witnesses import persona
from turinglab.witnesses.base import GameContext


def sample_context(now: datetime | None = None, elapsed_s: float = 30.0, time_limit_s: float = 300.0,
                   max_chars: int = 300) -> GameContext:
    """A game that started `elapsed_s` seconds before `now` (default: the current time)."""
    now = now or datetime.now(timezone.utc)
    return GameContext(game_id="sample", started_at=now - timedelta(seconds=elapsed_s), now=now,
                       time_limit_s=time_limit_s, max_chars=max_chars)


def model_label(spec: WitnessSpec) -> str:
    if spec.kind == "eliza":
        return f"ELIZA ({spec.script or 'DOCTOR'})"
    if spec.kind == "local":
        from turinglab.witnesses.local.weights import DEFAULT_MODEL

        return DEFAULT_MODEL.name.removesuffix(".gguf")
    if spec.kind != "llm":  # a plugin's kind
        return f"{spec.kind} (plugin)"
    return f"{spec.model} @ {spec.base_url or 'OpenAI'}"


def kind_rows() -> list[dict[str, Any]]:
    """The registered witness kinds: name, the plugin giving it, its options' fields, description."""
    from turinglab.plugins.manager import plugin_of, witness_kinds

    return [{"kind": name, "plugin": plugin_of("turinglab_witness_kinds", name),
             "options": list(k.options.model_fields) if k.options is not None else [],
             "description": k.description} for name, k in witness_kinds().items()]


def rows(specs: dict[str, WitnessSpec]) -> list[dict[str, str]]:
    return [{"name": n, "codename": s.codename, "kind": s.kind, "model": model_label(s),
             "prompt": s.prompt or (persona.DEFAULT_PROMPT if s.kind in ("llm", "local") else "-")} for n, s in specs.items()]


def show(spec: WitnessSpec, ctx: GameContext | None = None, events_path: str | None = None) -> dict[str, Any]:
    """The spec plus, for model witnesses, its prompt filled for a sample game."""
    ctx = ctx or sample_context()
    out: dict[str, Any] = {"spec": spec.model_dump(mode="json"), "model": model_label(spec)}
    if spec.kind in ("llm", "local"):
        out["sample_game"] = {"started_at": ctx.started_at.isoformat(), "now": ctx.now.isoformat(),
                              "time_limit_s": ctx.time_limit_s}
        out["prompt"] = persona.render(spec.prompt, spec.persona, ctx, events_path)
    return out
