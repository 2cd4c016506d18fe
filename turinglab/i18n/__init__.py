"""Participant pages in the study's language (issue 39): gettext catalogues read with Babel.

A study's `language` (a BCP 47 tag such as `de` or `es-MX`) picks the catalogue
`turinglab/locale/<lang>/LC_MESSAGES/messages.po` (the language's own folder, e.g. `es_MX`, first,
then its base language), plus any folder named by `$TURINGLAB_LOCALE_DIR` (a lab's own language,
searched first). English is the source language: its "catalogue" is the messages themselves.
A `.po` file is compiled in memory when first used (a `.mo` beside it is used when newer), so a
fresh install needs no build step.
"""

from __future__ import annotations

import functools
import io
import os
from datetime import timedelta
from pathlib import Path
from typing import Any

LOCALE_DIR = Path(__file__).resolve().parents[1] / "locale"
DOMAIN = "messages"
SOURCE = "en"
JS_SOURCES = (".js", "protocol.py", "view.py")  # messages that game.js / judge.js look up in the page's JSON catalogue


def N_(message: str) -> str:  # noqa: N802 - the usual gettext name
    """Marks a message for extraction; translated where it is shown."""
    return message


def NP_(context: str, message: str) -> str:  # noqa: N802
    """Marks a message with a context (the same English word meaning two things)."""
    return message


def locale_dirs() -> list[Path]:
    extra = [Path(p) for p in os.environ.get("TURINGLAB_LOCALE_DIR", "").split(os.pathsep) if p.strip()]
    return [*extra, LOCALE_DIR]


def _folders(lang: str) -> list[str]:
    """`es-MX` -> ["es_MX", "es"]: the regional catalogue first, then the language's."""
    tag = lang.replace("-", "_")
    base = tag.split("_")[0]
    return [tag] if tag == base else [tag, base]


def po_path(lang: str) -> Path | None:
    """The .po file that serves `lang`, or None (English, or no catalogue)."""
    for d in locale_dirs():
        for f in _folders(lang):
            p = d / f / "LC_MESSAGES" / f"{DOMAIN}.po"
            if p.is_file():
                return p
    return None


def available() -> list[str]:
    """The languages a study may use: English and every catalogue found."""
    found = {SOURCE}
    for d in locale_dirs():
        if d.is_dir():
            found |= {p.parent.parent.name.replace("_", "-") for p in d.glob(f"*/LC_MESSAGES/{DOMAIN}.po")}
    return sorted(found)


def check_language(tag: str) -> str:
    """The tag, normalised (`de-ch` -> `de-CH`), if Babel knows it and a catalogue serves it; else a
    ValueError that says which languages there are."""
    from babel import Locale, UnknownLocaleError

    try:
        loc = Locale.parse(tag.strip(), sep="-")
    except (UnknownLocaleError, ValueError, TypeError):
        raise ValueError(f"language {tag!r} is not a BCP 47 tag Babel knows; use e.g. 'de', 'es' or "
                         f"'pt-BR' (catalogues: {', '.join(available())})") from None
    norm = "-".join(p for p in (loc.language, loc.script, loc.territory) if p)
    if loc.language != SOURCE and po_path(norm) is None:
        raise ValueError(f"language {tag!r} has no message catalogue; available: {', '.join(available())}. "
                         "Add one with `turinglab i18n update --add <lang>`, translate it, and set "
                         "$TURINGLAB_LOCALE_DIR if it lives outside the package")
    return norm


@functools.lru_cache(maxsize=32)
def _load(path: str, mtime: float) -> tuple[Any, dict[str, str]]:
    """Translations of a .po file (from its .mo when that is newer) and its messages for the scripts."""
    from babel.messages.mofile import write_mo
    from babel.messages.pofile import read_po
    from babel.support import Translations

    po = Path(path)
    with po.open("rb") as f:
        cat = read_po(f)
    mo = po.with_suffix(".mo")
    if mo.is_file() and mo.stat().st_mtime >= mtime:
        with mo.open("rb") as f:
            tr = Translations(f, domain=DOMAIN)
    else:
        buf = io.BytesIO()
        write_mo(buf, cat)
        buf.seek(0)
        tr = Translations(buf, domain=DOMAIN)
    js = {m.id: m.string for m in cat if m.id and isinstance(m.id, str) and m.string and not m.fuzzy
          and any(loc.endswith(JS_SOURCES) for loc, _ in m.locations)}
    return tr, js


def translations(lang: str | None) -> Any:
    """A gettext translations object for `lang` (NullTranslations for English or no catalogue)."""
    from babel.support import NullTranslations

    p = po_path(lang or SOURCE) if (lang or SOURCE).split("-")[0] != SOURCE else None
    return NullTranslations() if p is None else _load(str(p), p.stat().st_mtime)[0]


def js_catalogue(lang: str | None) -> dict[str, str]:
    """The messages of game.js / judge.js in `lang` (English: empty, the scripts' own text stands)."""
    p = po_path(lang or SOURCE) if (lang or SOURCE).split("-")[0] != SOURCE else None
    return {} if p is None else dict(_load(str(p), p.stat().st_mtime)[1])


def gettext_for(lang: str | None):  # noqa: ANN201 - a function
    """`_(message, **values)`: the message in `lang`, then `%(name)s` filled from `values`."""
    tr = translations(lang)

    def _(message: str, **values: Any) -> str:
        out = tr.gettext(message)
        return out % values if values else out

    return _


def babel_locale(lang: str | None) -> str:
    return (lang or SOURCE).replace("-", "_")


def duration(seconds: float, lang: str | None) -> str:
    "\"5 minutes\", \"5 Minuten\", \"90 seconds\" in the study's language (Babel's CLDR units)."""
    from babel.units import format_unit

    minutes = seconds % 60 == 0
    value = int(seconds // 60) if minutes else (int(seconds) if float(seconds).is_integer() else seconds)
    return format_unit(value, "duration-minute" if minutes else "duration-second", length="long",
                       locale=babel_locale(lang))


def number(value: float, lang: str | None) -> str:
    from babel.numbers import format_decimal

    return format_decimal(value, locale=babel_locale(lang))


def language_name(lang: str | None, in_lang: str = SOURCE) -> str:
    """`de` -> "German" (in English, for reports and /admin)."""
    from babel import Locale

    return Locale.parse(babel_locale(lang)).get_display_name(in_lang) or str(lang)


def admin_notes(lang: str | None, witnesses: Any = (), filter_lists: str | None = None) -> list[str]:
    """What /admin says about a study's language: the pages' language, the content filter's lists,
    and that ELIZA answers in English whatever the study's language (its DOCTOR script is English)."""
    lang = lang or SOURCE
    notes = [f"Participant pages: {language_name(lang)} ({lang})."]
    if filter_lists:
        notes.append(f"Content filter {filter_lists}.")
    if lang.split("-")[0] != SOURCE:
        elizas = [w.codename for w in witnesses if getattr(w, "kind", None) == "eliza" and not getattr(w, "script", None)]
        if elizas:
            notes.append(f"ELIZA ({', '.join(elizas)}) answers in English: the shipped DOCTOR script is English "
                         "only (docs/i18n.md says how to give it a script in the study's language).")
        llms = [w.codename for w in witnesses if getattr(w, "kind", None) in ("llm", "local")]
        if llms:
            notes.append(f"LLM witnesses ({', '.join(llms)}) are told to chat in {language_name(lang)}.")
    return notes
