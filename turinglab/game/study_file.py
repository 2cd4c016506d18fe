"""Study files: one YAML file → a validated `Study`, with presets and errors that say where.

    preset: jones-bergen-2023     # optional: start from a shipped preset
    name: my-study
    rules: {time_limit_s: 180}    # overrides the preset field by field (lists are replaced whole)

Errors name the field as a dotted path (`witnesses[1].temperature`), its line in the file,
what was wrong and what to do.
"""

from __future__ import annotations

import difflib
from pathlib import Path
from typing import Any, TypeVar

import yaml
from pydantic import BaseModel, ValidationError

from turinglab.game.config import Allocation, Postprocess, Rules, Study, Timing, WitnessSpec

PRESETS_DIR = Path(__file__).parent / "presets"
EXAMPLE_STUDY = Path(__file__).parent / "examples" / "classroom-study.yaml"
_MODELS: tuple[type[BaseModel], ...] = (Study, Rules, Timing, Postprocess, WitnessSpec, Allocation)


class StudyFileError(ValueError):
    """A study file that cannot be used; `problems` lists every problem found."""

    def __init__(self, source: str, problems: list[str]) -> None:
        self.source = source
        self.problems = problems
        lines = "\n".join(f"  - {p}" for p in problems)
        super().__init__(f"{source}: invalid study file ({len(problems)} problem(s)):\n{lines}")


def presets_in(folder: Path) -> list[str]:
    """The preset names of a folder of `NAME.yaml` files."""
    return sorted(p.stem for p in folder.glob("*.yaml"))


def preset_names() -> list[str]:
    return presets_in(PRESETS_DIR)


def load_preset(name: str) -> Study:
    return parse_study(f"preset: {name}\n", source=f"preset {name}")


def load_study(path: str | Path) -> Study:
    """Read and validate a study file (see the module doc)."""
    return parse_study(*read_file(path, f"an example to copy: {EXAMPLE_STUDY}"))


def parse_study(text: str, source: str = "<study>") -> Study:
    return parse_file(text, source, Study, PRESETS_DIR,
                      empty="the file is empty; a study needs at least `name:` (or `preset:`)",
                      not_mapping="line 1: a study file is a mapping of fields (name: ..., rules: ...), not a {kind}")


# --- the loader of every study file, live (above) and static (game/static_config.py) ---

M = TypeVar("M", bound=BaseModel)


def read_file(path: str | Path, missing: str) -> tuple[str, str]:
    """(text, source) of a study file; `missing` is the fix given when there is no such file."""
    p = Path(path)
    if not p.is_file():
        raise StudyFileError(str(p), [f"no such file; {missing}"])
    try:
        return p.read_text(encoding="utf-8"), str(p)
    except (OSError, UnicodeDecodeError) as exc:
        raise StudyFileError(str(p), [f"cannot read the file ({exc}); save it as UTF-8 text"]) from None


def parse_file(text: str, source: str, model: type[M], presets_dir: Path, *, not_mapping: str,
               empty: str | None = None) -> M:
    """YAML text -> a validated `model`. `preset: NAME` starts from `presets_dir/NAME.yaml`, the
    file's fields override it field by field; a key twice, a YAML error or an invalid field is a
    `StudyFileError` naming the dotted field, its line and the fix. `not_mapping` is the problem
    when the text is not a mapping (`{kind}`: what it is), `empty` when it is empty (default: the same)."""
    node, data = _parse_yaml(text, source)
    if data is None and empty is not None:
        raise StudyFileError(source, [empty])
    if not isinstance(data, dict):
        raise StudyFileError(source, [not_mapping.format(kind=type(data).__name__)])
    preset = data.get("preset")
    merged = data
    if preset is not None:
        names = presets_in(presets_dir)
        if not isinstance(preset, str) or preset not in names:
            raise StudyFileError(source, [f"preset{_line(node, ('preset',))}: unknown preset {preset!r}; "
                                          f"available: {', '.join(names)}"])
        merged = _merge(yaml.safe_load((presets_dir / f"{preset}.yaml").read_text(encoding="utf-8")), data)
    try:
        return model.model_validate(merged)
    except ValidationError as exc:
        raise StudyFileError(source, [_explain(e, node, preset) for e in exc.errors()]) from None


def _parse_yaml(text: str, source: str) -> tuple[yaml.Node | None, Any]:
    try:
        node = yaml.compose(text, Loader=yaml.SafeLoader)
        _check_duplicate_keys(node, source)
        return node, yaml.safe_load(text)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        where = f"line {mark.line + 1}, column {mark.column + 1}: " if mark else ""
        what = " ".join(x for x in (exc.context, exc.problem) if x)
        raise StudyFileError(source, [f"{where}YAML syntax error: {what}; check indentation, colons and quotes"]) from None
    except yaml.YAMLError as exc:
        raise StudyFileError(source, [f"YAML error: {exc}"]) from None


def _check_duplicate_keys(node: yaml.Node | None, source: str) -> None:
    """YAML quietly keeps the last of two equal keys; in a frozen study that hides a mistake."""
    if isinstance(node, yaml.MappingNode):
        seen: dict[Any, int] = {}
        for k, v in node.value:
            key = getattr(k, "value", None)
            if key in seen:
                raise StudyFileError(source, [f"line {k.start_mark.line + 1}: field {key!r} appears twice "
                                              f"(first on line {seen[key]}); keep one"])
            seen[key] = k.start_mark.line + 1
            _check_duplicate_keys(v, source)
    elif isinstance(node, yaml.SequenceNode):
        for v in node.value:
            _check_duplicate_keys(v, source)


def _merge(base: Any, over: Any) -> Any:
    """Mappings merge key by key; anything else (lists included) is replaced."""
    if isinstance(base, dict) and isinstance(over, dict):
        out = dict(base)
        for k, v in over.items():
            out[k] = _merge(base[k], v) if k in base else v
        return out
    return over


def dotted(loc: tuple[Any, ...]) -> str:
    """('witnesses', 1, 'temperature') -> 'witnesses[1].temperature'."""
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def _node_at(node: yaml.Node | None, loc: tuple[Any, ...]) -> yaml.Node | None:
    for part in loc:
        if isinstance(node, yaml.MappingNode) and isinstance(part, str):
            node = next((v for k, v in node.value if getattr(k, "value", None) == part), None)
        elif isinstance(node, yaml.SequenceNode) and isinstance(part, int) and part < len(node.value):
            node = node.value[part]
        else:
            return None
    return node


def _line(node: yaml.Node | None, loc: tuple[Any, ...]) -> str:
    """' (line N)' for the deepest part of `loc` that is in the file."""
    for n in range(len(loc), -1, -1):
        found = _node_at(node, loc[:n])
        if found is not None and n > 0:
            return f" (line {found.start_mark.line + 1})"
    return ""


def _explain(err: dict[str, Any], node: yaml.Node | None, preset: str | None) -> str:
    loc = tuple(err.get("loc", ()))
    path = dotted(loc) or "(study)"
    kind = err.get("type", "")
    msg = str(err.get("msg", "invalid")).removeprefix("Value error, ")
    where = _line(node, loc)
    if not where and preset and loc:
        where = f" (from preset {preset})"
    if kind == "extra_forbidden":
        name = str(loc[-1]) if loc else "?"
        close = difflib.get_close_matches(name, sorted({f for m in _MODELS for f in m.model_fields}), n=1)
        fix = f"did you mean {close[0]!r}?" if close else "remove it (see the example study file for the fields)"
        return f"{path}{where}: unknown field; {fix}"
    if kind == "missing":
        return f"{path}{where}: required field is missing; add `{loc[-1]}: ...`"
    got = err.get("input")
    shown = "" if isinstance(got, (dict, list)) or got is None else f" (got {repr(got)[:60]})"
    return f"{path}{where}: {msg}{shown}"
