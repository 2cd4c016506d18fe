"""Every text field of a static import, checked once before anything reaches the database.

SQLite and PostgreSQL differ on bad text: PostgreSQL refuses a NUL character (in TEXT and in
JSON) and a value longer than its VARCHAR column, SQLite stores both; a lone surrogate (a
half of a UTF-16 pair, e.g. from a JSON escape "\\ud800") cannot be encoded at all. The same
check on both gives the same one-line error naming the trial (or stimulus, item, judge), the
field and the fix, so no import fails deep in a driver with a misleading message.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

# the VARCHAR columns a static import writes (store/models.py)
MAX_STUDY_NAME = 200
MAX_KEY = 200  # stimuli.key, responses.key, responses.agent, participants.label
MAX_IMAGE = 500
MAX_PHASE = 20
MAX_PROLIFIC = 64
MAX_DEPTH = 20


def text_problem(value: str, max_len: int | None = None) -> str | None:
    """What is wrong with `value` as stored text (None when nothing)."""
    if "\x00" in value:
        return f"has a NUL character (\\x00) at position {value.index(chr(0))}; remove it from the file"
    for i, c in enumerate(value):
        if "\ud800" <= c <= "\udfff":
            return (f"has a lone surrogate (\\u{ord(c):04x}) at position {i}, which is not text; "
                    "re-export the file as valid UTF-8")
    if max_len is not None and len(value) > max_len:
        return f"is {len(value)} characters long, over the limit of {max_len}; shorten it"
    return None


def _walk(value: Any, path: str, out: list[tuple[str, str]], depth: int = 0) -> None:
    """Every string in a JSON value (keys too), with its path."""
    if depth > MAX_DEPTH:
        out.append((path, f"is nested more than {MAX_DEPTH} levels deep; flatten it"))
        return
    if isinstance(value, str):
        p = text_problem(value)
        if p:
            out.append((path, p))
    elif isinstance(value, dict):
        for k, v in value.items():
            if isinstance(k, str):
                p = text_problem(k)
                if p:
                    out.append((f"{path} key {k[:40]!r}", p))
            _walk(v, f"{path}.{k}", out, depth + 1)
    elif isinstance(value, (list, tuple)):
        for i, v in enumerate(value):
            _walk(v, f"{path}[{i}]", out, depth + 1)


def _field(where: str, name: str, value: Any, max_len: int | None, out: list[str]) -> None:
    if value is None:
        return
    if isinstance(value, str):
        p = text_problem(value, max_len)
        if p:
            out.append(f"{where}: field {name!r} {p}")
        return
    found: list[tuple[str, str]] = []
    _walk(value, name, found)
    out.extend(f"{where}: field {path!r} {p}" for path, p in found)


def check_import(study_name: str, stimuli: Sequence[Any], responses: Sequence[Any], judges: Iterable[Any] = (),
                 trials: Iterable[Any] = ()) -> list[str]:
    """One line per bad text field of a static import (empty when all is well). The objects are
    `store.static`'s StimulusIn, ResponseIn, JudgeIn and ImportTrial."""
    out: list[str] = []
    _field("study", "name", study_name, MAX_STUDY_NAME, out)
    # (what, attribute naming it, [(field as the error names it, attribute, longest)])
    for kind, objs, label, fields in (
        ("stimulus", stimuli, "key", [("key", "key", MAX_KEY), ("text", "text", None), ("image", "image", MAX_IMAGE),
                                      ("fields", "fields", None)]),
        ("item", responses, "key", [("key", "key", MAX_KEY), ("stimulus", "stimulus_key", MAX_KEY),
                                    ("text", "text", None), ("agent", "agent", MAX_KEY), ("payload", "payload", None)]),
        ("judge", judges, "label", [("workerID", "label", MAX_KEY), ("prolific_pid", "prolific_pid", MAX_PROLIFIC),
                                    ("workerData", "demographics", None)]),
    ):
        for o in objs:
            where = f"{kind} {_short(getattr(o, label))}"
            for name, attr, longest in fields:
                _field(where, name, getattr(o, attr), longest, out)
    for t in trials:
        src = t.answers.get("source_trial") if isinstance(t.answers, dict) else None
        where = f"trial {_short(src)}" if isinstance(src, str) else f"trial {t.seq} of judge {_short(t.judge)}"
        _field(where, "phase", t.phase, MAX_PHASE, out)
        _field(where, "trialData", t.answers, None, out)
    return out


def _short(s: Any) -> str:
    """A name fit for an error line: repr, cut, with bad characters escaped."""
    text = s if isinstance(s, str) else str(s)
    text = text.encode("utf-8", "backslashreplace").decode("utf-8").replace("\x00", "\\x00")
    return repr(text[:60] + ("..." if len(text) > 60 else ""))
