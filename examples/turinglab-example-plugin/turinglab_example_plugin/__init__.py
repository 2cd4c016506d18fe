"""An example turinglab plugin: the `scripted` witness kind and the `haiku` static task."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from turinglab.game.config import WitnessSpec
from turinglab.plugins import hookimpl
from turinglab.plugins.kinds import StaticTask, WitnessKind
from turinglab.witnesses.base import GameContext, Reply, Turn, Witness


class ScriptedOptions(BaseModel):
    """The `options:` of a `kind: scripted` witness."""

    model_config = ConfigDict(extra="forbid")
    replies: list[str] = Field(min_length=1)  # said in order; after the last, the last again


class ScriptedWitness(Witness):
    kind = "scripted"

    def __init__(self, spec: WitnessSpec) -> None:
        self.codename = spec.codename
        self.replies = ScriptedOptions.model_validate(spec.options or {}).replies

    async def reply(self, history: list[Turn], ctx: GameContext) -> Reply:
        said = sum(1 for t in history if t.role == "witness")
        return Reply(self.replies[min(said, len(self.replies) - 1)])


def _build(spec: WitnessSpec, seed: int | None = None) -> Witness:
    return ScriptedWitness(spec)


def _named() -> dict[str, WitnessSpec]:
    return {"scripted": WitnessSpec(codename="Scripted", kind="scripted", fallback=None,
                                    options={"replies": ["hey", "im fine, just bored", "ha ok"]})}


@hookimpl
def turinglab_witness_kinds() -> list[WitnessKind]:
    return [WitnessKind("scripted", _build, options=ScriptedOptions, named=_named,
                        description="a confederate answering from a fixed list (example plugin)")]


HAIKU_FRAGMENT = """
<p class="small">Theme word: <b id="cue">{{ item.cue }}</b></p>
<blockquote class="haiku" id="response">{% for line in item.lines %}{{ line }}<br>{% endfor %}</blockquote>
"""


def _check(response: str) -> str | None:
    lines = [x for x in response.split(" / ") if x.strip()]
    return None if 1 <= len(lines) <= 3 else f"has {len(lines)} lines; a haiku has up to three, separated by ' / '"


def _show(payload: dict, text: str | None) -> dict:
    return {"lines": [x.strip() for x in (text or "").split(" / ") if x.strip()]}


@hookimpl
def turinglab_static_tasks() -> list[StaticTask]:
    return [StaticTask("haiku", "a short poem written to a theme word", "Was this haiku written by a human or a machine?",
                       HAIKU_FRAGMENT, needs_text=True, check=_check, show=_show)]
