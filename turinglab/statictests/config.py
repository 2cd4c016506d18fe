"""Static study files: one YAML file -> a validated `StaticStudy` (the live game's study-file idea).

    preset: zhang-2023          # optional: start from the shipped preset
    name: my-word-test
    task: word                  # word | caption | object | color | fv | conversation
    session: {items: 20}        # overrides the preset field by field

The canonical hash (`static_hash`) is stored with every judge trial, so a study whose config
has trials is frozen (`StaticStore.register_static_study` refuses a change; raise `version:`).
Read by game/study_file.py's loader (presets, duplicate keys, `StudyFileError` naming the dotted field,
its line and the fix), the same as a live study file.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Literal

from pydantic import Field, model_validator

from turinglab.game.config import _Strict, config_hash
from turinglab.game.study_file import parse_file, presets_in, read_file

PRESETS_DIR = Path(__file__).parent / "presets"
Task = Literal["word", "caption", "object", "color", "fv", "conversation"]
TASKS: tuple[str, ...] = ("word", "caption", "object", "color", "fv", "conversation")


class Session(_Strict):
    """What one judge is dealt (Zhang et al.: half human, half machine; machine items spread
    evenly over the agents; no stimulus twice; random order)."""

    items: Annotated[int, Field(gt=0)] = 40  # rated items in the test phase
    human_share: Annotated[float, Field(ge=0, le=1)] = 0.5
    feedback_items: Annotated[int, Field(ge=0)] = 0  # a first phase that shows the truth after each answer
    control_items: Annotated[int, Field(ge=0)] = 0  # vigilance items (responses stored with control=True)
    min_rt_ms: Annotated[int, Field(ge=0)] = 0  # the page refuses answers faster than this


class Exclusions(_Strict):
    """Flags computed in the analysis; flagged judges are kept and reported, never deleted."""

    min_control_accuracy: Annotated[float, Field(ge=0, le=1)] = 0.58  # Zhang: 7 of 12 control questions
    fast_rt_ms: Annotated[int, Field(ge=0)] = 300  # a trial answered faster is "fast"
    max_fast_share: Annotated[float, Field(ge=0, le=1)] = 0.25  # judge flagged above this share of fast trials


class StaticStudy(_Strict):
    name: Annotated[str, Field(min_length=1)]
    version: Annotated[int, Field(ge=1)] = 1
    preset: str | None = None
    task: Task = "word"
    session: Session = Session()
    exclusions: Exclusions = Exclusions()
    # conversation: chunk lengths in exchanges (Zhang: several lengths; from-games uses these)
    conversation_lengths: tuple[Annotated[int, Field(gt=0)], ...] = (3, 6, 9)
    # vision tasks: where the image files are (stimulus.image is relative to it)
    image_dir: str | None = None
    consent_text: str | None = None
    completion_url: str | None = None
    no_consent_url: str | None = None
    display_name: Annotated[str | None, Field(min_length=1, max_length=80)] = None

    @model_validator(mode="after")
    def _lengths(self) -> "StaticStudy":
        if list(self.conversation_lengths) != sorted(set(self.conversation_lengths)):
            raise ValueError("conversation_lengths must be increasing without repeats, e.g. [3, 6, 9]")
        return self


def static_hash(study: StaticStudy) -> str:
    """sha256 of the canonical JSON (sorted keys, defaults filled in): a live study's `config_hash`."""
    return config_hash(study)


def preset_names() -> list[str]:
    return presets_in(PRESETS_DIR)


def load_static_study(path: str | Path) -> StaticStudy:
    return parse_static_study(*read_file(path, f"start from `preset: zhang-2023` (presets: {PRESETS_DIR})"))


def parse_static_study(text: str, source: str = "<static study>") -> StaticStudy:
    return parse_file(text, source, StaticStudy, PRESETS_DIR,
                      not_mapping="a static study file is a mapping of fields (name: ..., task: ...)")


def preset_study(name: str, task: str, preset: str = "zhang-2023") -> StaticStudy:
    """The preset with a name and task (what `static import` registers when no file is given)."""
    return parse_static_study(f"preset: {preset}\nname: {json.dumps(name)}\ntask: {task}\n", source=f"preset {preset}")
