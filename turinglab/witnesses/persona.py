"""Persona prompts: Jinja templates filled at the start of each game.

A template (``prompts/NAME.j2`` or a path to a .j2 file) sees:
  persona      name, age, city, country, timezone, languages (list), plus any extra keys
  english      "us" when the persona's country is the US, else "uk": which English the example
               chat and the slang follow (no British "flat" or "mate" under a US city)
  start_time   when the game started, in the persona's time zone ("Sunday 22 November 2026, 3:14 pm")
  now_time     the current time there; time_left ("4 minutes 30 seconds"), time_left_s
  events       recent events: [{date, text}], newest first (see `recent_events`)
  max_chars    the message limit
The events file is a YAML list of ``{date: YYYY-MM-DD, text: ...}`` that the study owner edits
(the persona's ``events`` key, else ``$TURINGLAB_EVENTS``; ``prompts/events.yaml`` shows the
format); only events from the last ``events_days`` days (default 14) up to the game's date in
the persona's time zone are shown, newest first, at most 5.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

import jinja2
import yaml
from jinja2.sandbox import SandboxedEnvironment

from turinglab.witnesses.base import GameContext

PROMPTS_DIR = Path(__file__).parent / "prompts"
DEFAULT_PROMPT = "young"

DEFAULT_PERSONA: dict[str, Any] = {
    "name": "Jamie",
    "age": 19,
    "city": "Manchester",
    "country": "the UK",
    "timezone": "Europe/London",
    "languages": ["English"],
}


US_NAMES = {"us", "usa", "u.s.", "u.s.a.", "united states", "united states of america", "america"}


def english(country: str) -> str:
    """ "us" for the United States (however written, with or without "the"), else "uk"."""
    c = str(country).strip().lower()
    return "us" if (c[4:] if c.startswith("the ") else c) in US_NAMES else "uk"


class PersonaError(ValueError):
    """A prompt template, persona or events file that cannot be used."""


@dataclass(frozen=True)
class Event:
    date: date
    text: str


def shipped_prompts() -> list[str]:
    return list(_shipped_prompts())


@functools.lru_cache(maxsize=1)
def _shipped_prompts() -> tuple[str, ...]:
    return tuple(sorted(p.stem for p in PROMPTS_DIR.glob("*.j2")))


_ENV_KW: dict[str, Any] = {"undefined": jinja2.StrictUndefined, "keep_trailing_newline": False,
                           "trim_blocks": True, "lstrip_blocks": True, "autoescape": False}


def _template(prompt: str | None) -> jinja2.Template:
    """The compiled template (cached: prompts are filled at the start of every game)."""
    name = prompt or DEFAULT_PROMPT
    if name in _shipped_prompts():
        return _shipped_template(name)
    path = Path(name)
    if path.suffix == ".j2" and path.is_file():
        st = path.stat()  # an edited file is compiled again
        return _file_template(str(path.resolve()), st.st_mtime_ns, st.st_size)
    raise PersonaError(
        f"unknown prompt {name!r}: use one of {', '.join(_shipped_prompts())} or the path of an existing .j2 file"
    )


@functools.lru_cache(maxsize=None)
def _shipped_template(name: str) -> jinja2.Template:
    env = SandboxedEnvironment(loader=jinja2.FileSystemLoader(PROMPTS_DIR), **_ENV_KW)
    return env.get_template(f"{name}.j2")


@functools.lru_cache(maxsize=64)
def _file_template(path: str, _mtime_ns: int, _size: int) -> jinja2.Template:
    p = Path(path)
    env = SandboxedEnvironment(loader=jinja2.FileSystemLoader(p.parent), **_ENV_KW)  # study files: sandboxed
    return env.get_template(p.name)


def load_events(path: str | Path) -> list[Event]:
    """Events from a YAML list of {date, text}; clear errors name the bad entry."""
    p = Path(path)
    try:
        data = yaml.safe_load(p.read_text(encoding="utf-8"))
    except OSError as exc:
        raise PersonaError(f"events file {p}: cannot read ({exc.strerror})") from None
    except yaml.YAMLError as exc:
        raise PersonaError(f"events file {p}: not valid YAML ({exc})") from None
    if data is None:
        return []
    if not isinstance(data, list):
        raise PersonaError(f"events file {p}: expected a list of {{date, text}} entries, got {type(data).__name__}")
    out = []
    for i, item in enumerate(data, 1):
        if not isinstance(item, dict) or "date" not in item or "text" not in item:
            raise PersonaError(f"events file {p}: entry {i} needs 'date' (YYYY-MM-DD) and 'text'")
        d = item["date"]
        if isinstance(d, str):
            try:
                d = date.fromisoformat(d)
            except ValueError:
                raise PersonaError(f"events file {p}: entry {i} has date {d!r}; write it as YYYY-MM-DD") from None
        if isinstance(d, datetime):
            d = d.date()
        if not isinstance(d, date):
            raise PersonaError(f"events file {p}: entry {i} has date {d!r}; write it as YYYY-MM-DD")
        out.append(Event(d, str(item["text"]).strip()))
    return out


def recent_events(events: list[Event], today: date, days: int = 14, limit: int = 5) -> list[Event]:
    """Events dated within `days` days up to `today` (none from the future), newest first."""
    lo = today - timedelta(days=days)
    keep = [e for e in events if lo <= e.date <= today]
    return sorted(keep, key=lambda e: e.date, reverse=True)[:limit]


def _fmt_time(t: datetime) -> str:
    hour = t.hour % 12 or 12
    return f"{t:%A} {t.day} {t:%B %Y}, {hour}:{t:%M} {'am' if t.hour < 12 else 'pm'}"


def _fmt_left(seconds: float) -> str:
    s = max(0, int(round(seconds)))
    m, s = divmod(s, 60)
    parts = ([f"{m} minute{'s' if m != 1 else ''}"] if m else []) + ([f"{s} second{'s' if s != 1 else ''}"] if s or not m else [])
    return " ".join(parts)


def persona_context(persona: dict[str, Any], ctx: GameContext, events: list[Event] | None = None) -> dict[str, Any]:
    """The variables a template sees, for this persona and game."""
    merged = {**DEFAULT_PERSONA, **{k: v for k, v in persona.items() if k not in ("events", "events_days")}}
    try:
        tz = ZoneInfo(str(merged["timezone"]))
    except (ZoneInfoNotFoundError, ValueError):
        raise PersonaError(
            f"persona timezone {merged['timezone']!r} is not an IANA time zone (e.g. Europe/London, America/Chicago)"
        ) from None
    for label, t in (("started_at", ctx.started_at), ("now", ctx.now)):
        if t.tzinfo is None:
            raise PersonaError(f"game context {label} must be timezone-aware (UTC)")
    if isinstance(merged.get("languages"), str):
        merged["languages"] = [merged["languages"]]
    start, now = ctx.started_at.astimezone(tz), ctx.now.astimezone(tz)
    left = ctx.time_limit_s - (ctx.now - ctx.started_at).total_seconds()
    days = int(persona.get("events_days", 14))
    shown = recent_events(events or [], start.date(), days=days)
    return {
        "persona": merged,
        "english": english(merged.get("country", "")),
        "start_time": _fmt_time(start),
        "now_time": _fmt_time(now),
        "time_left": _fmt_left(left),
        "time_left_s": max(0.0, left),
        "events": [{"date": f"{e.date:%A} {e.date.day} {e.date:%B}", "text": e.text} for e in shown],
        "max_chars": ctx.max_chars,
        "chat_language": language_name(ctx.language),  # "German": the study's language, in English
    }


def language_name(tag: str) -> str:
    """`de` -> "German" (the name the prompt uses); the tag itself when Babel does not know it."""
    try:
        from babel import Locale

        return Locale.parse(tag.replace("-", "_")).get_display_name("en") or tag
    except Exception:  # noqa: BLE001 - any unknown tag: say it as written
        return tag


def language_rule(ctx: GameContext) -> str:
    """The line that tells a witness to chat in the study's language (nothing for English)."""
    if ctx.language.split("-")[0] == "en":
        return ""
    name = language_name(ctx.language)
    return (f"Language: the people in this chat are {name} speakers. Write every message in {name}, "
            f"the everyday {name} a native speaker types in a chat, whatever the language of these instructions.")


def render(prompt: str | None, persona: dict[str, Any], ctx: GameContext, events_path: str | Path | None = None) -> str:
    """The filled prompt. `events_path` defaults to ``persona['events']`` (a YAML file) if set."""
    path = events_path or persona.get("events")
    events = load_events(path) if path else []
    try:
        text = _template(prompt).render(**persona_context(persona, ctx, events))
    except jinja2.UndefinedError as exc:
        raise PersonaError(f"prompt {prompt or DEFAULT_PROMPT!r}: {exc.message}; add it to the persona") from None
    except jinja2.TemplateError as exc:
        raise PersonaError(f"prompt {prompt or DEFAULT_PROMPT!r}: {exc}") from None
    rule = language_rule(ctx)
    if rule:  # templates may also use {{ chat_language }} themselves
        text = text.rstrip() + "\n\n" + rule
    return "\n".join(line.rstrip() for line in text.strip().splitlines())


_SHOTS = re.compile(r"^<example-chat>\s*$(.*?)^</example-chat>\s*$", re.M | re.S)


def split_examples(text: str) -> tuple[str, list[tuple[str, str]], str]:
    """A rendered prompt cut at its ``<example-chat>`` block: (text before, exchanges, text after).

    Between a line ``<example-chat>`` and a line ``</example-chat>``, lines ``them: ...`` and
    ``you: ...`` alternate; the witness sends them as earlier chat turns (a small model imitates
    turns far more than instructions), and the text after the block as a system message after
    them. Keep the game's times after the block: what comes before it is the same in every game,
    so the local model's prompt cache keeps it, examples included."""
    m = _SHOTS.search(text)
    if not m:
        return text, [], ""
    pairs: list[tuple[str, str]] = []
    them: str | None = None
    for line in m.group(1).splitlines():
        who, _, said = line.partition(":")
        who, said = who.strip().lower(), said.strip()
        if not line.strip():
            continue
        if who == "them" and them is None:
            them = said
        elif who == "you" and them is not None:
            pairs.append((them, said))
            them = None
        else:
            raise PersonaError(f"<example-chat>: expected alternating 'them:' and 'you:' lines, got {line.strip()!r}")
    return text[: m.start()].strip(), pairs, text[m.end():].strip()


def check(prompt: str | None, persona: dict[str, Any], events_path: str | Path | None = None) -> None:
    """Raise `PersonaError` now if the prompt, time zone or events file of a witness cannot be used."""
    from datetime import timezone

    now = datetime.now(timezone.utc)
    ctx = GameContext(game_id="check", started_at=now, now=now, time_limit_s=300, max_chars=300)
    split_examples(render(prompt, persona, ctx, events_path))
