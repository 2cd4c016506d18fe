"""The built-in witness kinds (ELIZA, an LLM over the OpenAI-compatible API, the embedded local
model) and the built-in content filter (the word list), registered through the plugin hooks."""

from __future__ import annotations

import os

from turinglab.game.config import LOCAL_DEFAULTS, Postprocess, WitnessSpec
from turinglab.plugins import hookimpl
from turinglab.plugins.kinds import ContentFilterKind, WitnessKind
from turinglab.witnesses.registry import DEFAULT_LLM_MODEL, llm_configured

# name -> (codename, prompt template). The same three prompts exist on the local model.
_PERSONAS: dict[str, tuple[str, str]] = {
    "young": ("Sierra", "young"),
    "baseline": ("Bravo", "baseline"),
    "ai-aware": ("Dragon", "ai-aware"),
}
_YOUNG_PP = Postprocess(lowercase=True)  # the terse young persona writes in lowercase whatever the model does


def _eliza(spec: WitnessSpec, seed: int | None = None):
    from turinglab.witnesses.eliza.witness import ElizaWitness
    from turinglab.witnesses.postprocess import Postprocessed

    return Postprocessed(ElizaWitness(codename=spec.codename, script_path=spec.script, seed=seed), spec, seed)


def _model(spec: WitnessSpec, seed: int | None = None):
    from turinglab.witnesses.llm import LLMWitness

    return LLMWitness(spec, seed=seed)


def _eliza_named() -> dict[str, WitnessSpec]:
    return {"eliza": WitnessSpec(codename="ELIZA", kind="eliza", fallback=None)}


def _local_named() -> dict[str, WitnessSpec]:
    return {
        "local": WitnessSpec(codename="Local", kind="local", prompt="young", postprocess=_YOUNG_PP, **LOCAL_DEFAULTS),
        "local-baseline": WitnessSpec(codename="LocalBaseline", kind="local", prompt="baseline", **LOCAL_DEFAULTS),
        "local-aware": WitnessSpec(codename="LocalAware", kind="local", prompt="ai-aware", **LOCAL_DEFAULTS),
    }


def _llm_named() -> dict[str, WitnessSpec]:
    """The shipped LLM personas, when an OpenAI-compatible endpoint is configured."""
    if not llm_configured():
        return {}
    model = os.environ.get("TURINGLAB_LLM_MODEL", DEFAULT_LLM_MODEL)
    base_url = os.environ.get("OPENAI_BASE_URL") or None
    return {name: WitnessSpec(codename=codename, kind="llm", model=model, base_url=base_url, prompt=prompt,
                              temperature=1.0, postprocess=_YOUNG_PP if prompt == "young" else Postprocess())
            for name, (codename, prompt) in _PERSONAS.items()}


@hookimpl
def turinglab_witness_kinds() -> list[WitnessKind]:
    return [
        WitnessKind("eliza", _eliza, named=_eliza_named, description="Weizenbaum's ELIZA (DOCTOR script)"),
        WitnessKind("local", _model, named=_local_named, uses_model=True,
                    description="the embedded local model (xllamacpp)"),
        WitnessKind("llm", _model, named=_llm_named, uses_model=True,
                    description="a model over the OpenAI-compatible API"),
    ]


def _word_list(words, use_default: bool = True, language: str = "en"):
    from turinglab.witnesses.content_filter import ContentFilter

    return ContentFilter(words, use_default=use_default, language=language)


@hookimpl
def turinglab_content_filters() -> list[ContentFilterKind]:
    return [ContentFilterKind("word-list", _word_list)]
