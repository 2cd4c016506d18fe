"""Static study files: one YAML file -> a validated `StaticStudy` (the live game's study-file idea).

    preset: zhang-2023          # optional: start from the shipped preset
    name: my-word-test
    task: word                  # word | caption | object | color | fv | conversation | a plugin's task
    session: {items: 20}        # overrides the preset field by field

The canonical hash (`static_hash`) is stored with every judge trial, so a study whose config
has trials is frozen (`StaticStore.register_static_study` refuses a change; raise `version:`).
Read by game/study_file.py's loader (presets, duplicate keys, `StudyFileError` naming the dotted field,
its line and the fix), the same as a live study file. It lives in game/, below the store, because
the store keeps and hashes this config (`store/static.py`); presets are in `static_presets/`.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Annotated

import yaml
from pydantic import Field, field_validator, model_validator

from turinglab.game.config import Withdrawal, _Strict
from turinglab.plugins.manager import static_tasks
from turinglab.game.study_file import StudyFileError, _merge, parse_file, presets_in, read_file

PRESETS_DIR = Path(__file__).parent / "static_presets"


def task_names() -> tuple[str, ...]:
    """The registered static tasks (built-ins: word, caption, object, color, fv, conversation)."""
    return tuple(static_tasks())


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
    # Zhang's captioning rule: judges who are not native speakers of this language are flagged
    native_language: str | None = None


class StaticStudy(_Strict):
    name: Annotated[str, Field(min_length=1)]
    version: Annotated[int, Field(ge=1)] = 1
    preset: str | None = None
    task: str = "word"  # a registered static task (`turinglab static tasks`)
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
    # the speaker-gender question ("male or female?") after each answer: None = conversations only
    # (per speaker), True = every task, False = never
    ask_gender: bool | None = None
    # Zhang et al.'s rule for colour and object: a trial counts only when its control answer is
    # right (`static summary` and the report; the report shows the figures with and without)
    drop_failed_controls: bool = False
    language: str = "en"  # the judge pages' language (BCP 47 with a message catalogue; issue 39)
    # the done page's withdrawal form and countdown (issue 38: on_done_page, redirect_after_s; None: the defaults)
    withdrawal: Withdrawal | None = None

    @field_validator("language")
    @classmethod
    def _known_language(cls, v: str) -> str:
        from turinglab.i18n import check_language

        return check_language(v)

    @model_validator(mode="after")
    def _lengths(self) -> "StaticStudy":
        if self.task not in (names := task_names()):
            raise ValueError(f"unknown task {self.task!r}; use one of {', '.join(names)} "
                             "(plugins add more: `turinglab static tasks`)")
        if list(self.conversation_lengths) != sorted(set(self.conversation_lengths)):
            raise ValueError("conversation_lengths must be increasing without repeats, e.g. [3, 6, 9]")
        return self


# fields added after studies were stored: left out of the hash while unset, so the hash of a
# study that does not use them stays what it was (and its trials stay valid)
_LATER_FIELDS = {"ask_gender": None, "language": "en", "drop_failed_controls": False, "withdrawal": None}
_LATER_EXCLUSIONS = {"native_language": None}


def static_hash(study: StaticStudy) -> str:
    """sha256 of the canonical JSON (sorted keys, defaults filled in), as a live study's
    `config_hash`, except that the later fields count only when set."""
    data = study.model_dump(mode="json")
    for k, v in _LATER_FIELDS.items():
        if data.get(k) == v:
            data.pop(k, None)
    for k, v in _LATER_EXCLUSIONS.items():
        if data["exclusions"].get(k) == v:
            data["exclusions"].pop(k, None)
    return hashlib.sha256(json.dumps(data, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


def preset_names() -> list[str]:
    return presets_in(PRESETS_DIR)


def load_static_study(path: str | Path, task: str | None = None) -> StaticStudy:
    """A static study file; one that starts from `preset: zhang-2023` keeps the paper's rules for
    its task (minimum times, exclusions: the task plugin's `rules`) wherever the file does not set them.
    `task` (`static import --task`): the task of a file that names none; a file naming another is refused."""
    text, source = read_file(path, f"start from `preset: zhang-2023` (presets: {PRESETS_DIR})")
    named = _named_task(text)
    if task is not None and named is not None and named != task:
        raise StudyFileError(source, [f"task: the file's task is {named!r} but --task is {task!r}; make them the same"])
    if task is not None and named is None:
        text = text.rstrip("\n") + f"\ntask: {json.dumps(task)}\n"
    study = parse_static_study(text, source)
    rules = static_tasks()[study.task].rules if study.preset == "zhang-2023" and study.task in static_tasks() else {}
    if not rules:
        return study
    own = yaml.safe_load(text) or {}
    unset = {k: {f: v for f, v in r.items() if f not in (own.get(k) or {})} for k, r in rules.items()}
    return StaticStudy.model_validate(_merge(study.model_dump(mode="json"), unset))


def _named_task(text: str) -> str | None:
    try:
        own = yaml.safe_load(text)
    except yaml.YAMLError:
        return None  # parse_static_study says what is wrong
    return str(own["task"]) if isinstance(own, dict) and own.get("task") is not None else None


def load_if_static(path: Path) -> StaticStudy | None:
    """The static study of a YAML file that has `task:` or a static preset; None for any other
    file (a live study file, or one the live study loader will say what is wrong with)."""
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, yaml.YAMLError):
        return None
    if isinstance(data, dict) and ("task" in data or data.get("preset") in preset_names()):
        return load_static_study(path)
    return None


def parse_static_study(text: str, source: str = "<static study>") -> StaticStudy:
    return parse_file(text, source, StaticStudy, PRESETS_DIR,
                      not_mapping="a static study file is a mapping of fields (name: ..., task: ...)")


def preset_study(name: str, task: str, preset: str = "zhang-2023") -> StaticStudy:
    """The preset with a name and task (what `static import` registers when no file is given);
    for zhang-2023 with the paper's rules for that task (the task plugin's `rules`)."""
    study = parse_static_study(f"preset: {preset}\nname: {json.dumps(name)}\ntask: {task}\n", source=f"preset {preset}")
    rules = static_tasks()[task].rules if preset == "zhang-2023" and task in static_tasks() else {}
    if rules:
        study = StaticStudy.model_validate(_merge(study.model_dump(mode="json"), rules))
    return study
