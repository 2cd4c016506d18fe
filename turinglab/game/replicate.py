"""What it takes to run a Jones & Bergen study as published, and how a study file departs from it.

`guide(preset)` lists what a study file must add to the preset (API models, prompts, recruitment);
`deviations(preset, study)` names every setting in which a study differs from the preset (the
preset's values are the papers', see the table in docs/protocol.md), and every witness that does
not follow the paper's design. `turinglab replicate` prints both.
"""

from __future__ import annotations

from typing import Any

from turinglab.game.config import Study, Timing

PRESETS = ("jones-bergen-2023", "jones-bergen-2025")

# settings a study may set without departing from the papers (they do not fix them)
FREE = ("name", "version", "preset", "witnesses", "display_name", "consent_text", "completion_url",
        "no_consent_url", "stop_after", "prolific", "content_filter", "rules.verdict_grace_s", "rules.human_witness_delay",
        "allocation.capacity", "allocation.capacity_headroom", "allocation.overflow_witness",
        "allocation.lone_wait_s", "allocation.lone_then", "allocation.witness_groups")
PAPER_TIMING = Timing(base_s=1.0, s_per_char=0.3, gamma_shape=2.5, gamma_scale=0.25)

GUIDES: dict[str, list[str]] = {
    "jones-bergen-2023": [
        "AI witnesses on an OpenAI-compatible API (kind: llm, model, base_url or OPENAI_BASE_URL, api_key_env): "
        "GPT-4 and GPT-3.5, each witness a model + a temperature (0.2, 0.5 or 1.0) + a prompt; the paper ran 45, "
        "varying typos, persona and whether the model is told it is an AI (its Figure 3 prompt, 'Juliet', as a .j2 file)",
        "the baseline prompt of Jannai et al. (2023) with GPT-4, and two prompts with GPT-3.5",
        "keep ELIZA (in the preset): the manipulation check",
        "an events file of what happened after the models' training cut-off (persona `events`, or $TURINGLAB_EVENTS)",
        "recruitment: the paper recruited on social media, unpaid, after an IRB-approved consent page: "
        "consent_text with your information sheet (completion_url only if you pay through a panel)",
        "codenames for the witnesses (e.g. Dragon, Juliet): analyses name witnesses by them",
    ],
    "jones-bergen-2025": [
        "AI witnesses on an OpenAI-compatible API, replacing the preset's offline stand-ins (Local-PERSONA, "
        "Local-NO-PERSONA): GPT-4.5 and LLaMa-3.1-405B, each in both prompt conditions, PERSONA (prompt: young, or "
        "the paper's persona prompt as a .j2 file) and NO-PERSONA (prompt: no-persona); GPT-4o in NO-PERSONA; ELIZA",
        "allocation.witness_groups as pre-registered: [[ELIZA, GPT-4o-NO-PERSONA], [GPT-4.5-NO-PERSONA, "
        "LLAMA-NO-PERSONA], [LLAMA-PERSONA], [GPT-4.5-PERSONA]] (with your codenames)",
        "recruitment: two pools, undergraduates (course credit) and Prolific participants (paid): completion_url "
        "(Prolific's completion link), no_consent_url and consent_text",
        "one server process (`turinglab serve` without --workers): the sessions of 8 rounds and the witness groups "
        "are kept by one process",
    ],
}


def guide(preset: str) -> list[str]:
    if preset not in GUIDES:
        raise ValueError(f"unknown preset {preset!r}; use one of {', '.join(PRESETS)}")
    return list(GUIDES[preset])


def _flat(d: Any, prefix: str = "") -> dict[str, Any]:
    if isinstance(d, dict):
        out: dict[str, Any] = {}
        for k, v in d.items():
            key = f"{prefix}.{k}" if prefix else k
            out.update(_flat(v, key) if isinstance(v, dict) and key not in FREE else {key: v})
        return out
    return {prefix: d}


def _free(key: str) -> bool:
    return any(key == f or key.startswith(f + ".") for f in FREE)


def deviations(preset: str, study: Study) -> list[str]:
    """Every way `study` departs from the preset's (the paper's) design, one sentence each."""
    from turinglab.game.study_file import load_preset

    ref = load_preset(preset)
    mine, theirs = _flat(study.model_dump(mode="json")), _flat(ref.model_dump(mode="json"))
    out = [f"{k}: {mine.get(k)!r} where the paper has {v!r}" for k, v in theirs.items()
           if not _free(k) and mine.get(k) != v]
    names = {w.codename: w for w in study.witnesses}
    for w in ref.witnesses:
        if w.kind == "eliza" and not any(x.kind == "eliza" for x in study.witnesses):
            out.append(f"witnesses: no ELIZA (the preset's {w.codename}), the paper's manipulation check")
    for w in study.witnesses:
        if w.timing.model_dump() != PAPER_TIMING.model_dump():
            out.append(f"witnesses {w.codename}: timing {w.timing.model_dump(exclude_defaults=True)} where the paper "
                       "has 1 + 0.3 n + Gamma(2.5, 0.25) s")
        if w.kind != "eliza" and not study.draws_persona(w):
            out.append(f"witnesses {w.codename}: persona_draw is off; the paper drew a name and a city per game")
    if preset == "jones-bergen-2025":
        out += _deviations_2025(study, names)
    elif not any(w.kind == "llm" for w in study.witnesses):
        out.append("witnesses: no API model (kind: llm); the paper's witnesses were GPT-4 and GPT-3.5 prompts")
    return out


def _deviations_2025(study: Study, names: dict) -> list[str]:
    out = []
    stand_ins = [c for c, w in names.items() if w.kind == "local"]
    if stand_ins:
        out.append(f"witnesses {', '.join(stand_ins)}: the local model stands in for the paper's API models "
                   "(GPT-4.5, LLaMa-3.1-405B, GPT-4o)")
    conditions: dict[str, set[str]] = {}
    for w in names.values():
        if w.kind in ("llm", "local"):
            conditions.setdefault(w.model or "the local model", set()).add("NO-PERSONA" if w.prompt == "no-persona"
                                                                           else "PERSONA")
    for model, conds in sorted(conditions.items()):
        if model != "gpt-4o" and conds != {"PERSONA", "NO-PERSONA"}:
            out.append(f"witnesses: {model} has only the {', '.join(sorted(conds))} condition; the paper ran each "
                       "model with both PERSONA and NO-PERSONA prompts (GPT-4o: NO-PERSONA only)")
    return out
