"""`turinglab i18n extract|update|compile`: Babel's extraction, catalogue update and compilation
with the project's configuration (`babel.cfg` at the repository root)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from turinglab.i18n import DOMAIN, LOCALE_DIR, po_path

ROOT = LOCALE_DIR.parents[1]  # the checkout: babel.cfg's paths start here
CFG = ROOT / "babel.cfg"
POT = LOCALE_DIR / f"{DOMAIN}.pot"
KEYWORDS = {"_": None, "gettext": None, "ngettext": (1, 2), "pgettext": ((1, "c"), 2),
            "N_": None, "NP_": ((1, "c"), 2)}
JS_KEYWORDS = {"t": None}  # game.js, judge.js (in Python `t` is often a variable)
PLACEHOLDER = re.compile(r"%\(\w+\)s|\{\w+\}")


class I18nError(ValueError):
    """A catalogue cannot be made or is not complete; the text says which and what to do."""


def extract():  # noqa: ANN201 - a babel Catalog
    """Every message of the Python code, the templates and the scripts, as a template catalogue."""
    from babel.messages.catalog import Catalog
    from babel.messages.extract import extract_from_dir
    from babel.messages.frontend import parse_mapping_cfg

    if not CFG.is_file():
        raise I18nError(f"{CFG} not found: run extract from a checkout of turinglab (an installed copy has no sources to scan)")
    with CFG.open() as f:
        method_map, options_map = parse_mapping_cfg(f, str(CFG))
    from turinglab import __version__

    cat = Catalog(project="turinglab", version=__version__, copyright_holder="the turinglab contributors",
                  msgid_bugs_address="the turinglab issue tracker", charset="utf-8", fuzzy=False,
                  header_comment="# The participant pages' messages of turinglab (turinglab i18n extract).")
    for js in (False, True):
        methods = [(pattern, m) for pattern, m in method_map if (m == "javascript") == js]
        for filename, lineno, message, comments, context in extract_from_dir(
                str(ROOT), methods, options_map, keywords=JS_KEYWORDS if js else KEYWORDS,
                comment_tags=("TRANSLATORS:",), strip_comment_tags=True):
            cat.add(message, None, [(filename, lineno)], auto_comments=comments, context=context)
    return cat


def write(cat, path: Path) -> None:  # noqa: ANN001
    from babel.messages.pofile import write_po

    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("wb") as f:
        write_po(f, cat, width=100, omit_header=False, ignore_obsolete=True, include_previous=False,
                 include_lineno=False)  # file names only: a line moved elsewhere changes no catalogue


def read(path: Path, locale: str | None = None):  # noqa: ANN201
    from babel.messages.pofile import read_po

    with path.open("rb") as f:
        return read_po(f, locale=locale)


def catalogues() -> list[Path]:
    return sorted(LOCALE_DIR.glob(f"*/LC_MESSAGES/{DOMAIN}.po"))


def update(add: str | None = None) -> list[Path]:
    """Bring every catalogue in step with messages.pot (new messages empty, gone ones dropped);
    `add`: start the catalogue of a new language. Returns the files written."""
    from babel import Locale, UnknownLocaleError
    from babel.messages.catalog import Catalog

    if not POT.is_file():
        raise I18nError(f"{POT} not found: run `turinglab i18n extract` first")
    template = read(POT)
    written = []
    if add:
        try:
            loc = str(Locale.parse(add, sep="-"))
        except (UnknownLocaleError, ValueError):
            raise I18nError(f"--add {add!r} is not a language tag Babel knows (e.g. de, es, pt-BR)") from None
        new = LOCALE_DIR / loc / "LC_MESSAGES" / f"{DOMAIN}.po"
        if new.exists():
            raise I18nError(f"{new} exists already; run `turinglab i18n update` without --add")
        cat = Catalog(locale=loc, project="turinglab", charset="utf-8", fuzzy=False)
        cat.update(template, no_fuzzy_matching=True)
        write(cat, new)
        written.append(new)
    for po in catalogues():
        if po in written:
            continue
        cat = read(po, locale=po.parent.parent.name)
        cat.update(template, no_fuzzy_matching=True)
        write(cat, po)
        written.append(po)
    return written


@dataclass
class Stats:
    path: Path
    total: int
    missing: list[str]
    fuzzy: list[str]
    bad_placeholders: list[str]

    @property
    def complete(self) -> bool:
        return not (self.missing or self.fuzzy or self.bad_placeholders)


def check(po: Path) -> Stats:
    """What a catalogue lacks: untranslated and fuzzy messages, and translations whose
    placeholders (%(name)s, {name}) differ from the English."""
    cat = read(po, locale=po.parent.parent.name)
    msgs = [m for m in cat if m.id]
    missing, fuzzy, bad = [], [], []
    for m in msgs:
        ids = m.id if isinstance(m.id, tuple) else (m.id,)
        strs = m.string if isinstance(m.string, tuple) else (m.string,)
        if not all(strs):
            missing.append(ids[0])
        elif m.fuzzy:
            fuzzy.append(ids[0])
        elif any(sorted(PLACEHOLDER.findall(s)) != sorted(PLACEHOLDER.findall(ids[-1])) for s in strs):
            bad.append(ids[0])
    return Stats(po, len(msgs), missing, fuzzy, bad)


def compile_all() -> list[Stats]:
    """Write each catalogue's .mo beside its .po; returns what each lacks."""
    from babel.messages.mofile import write_mo

    out = []
    for po in catalogues():
        cat = read(po, locale=po.parent.parent.name)
        with po.with_suffix(".mo").open("wb") as f:
            write_mo(f, cat)
        out.append(check(po))
    return out


__all__ = ["I18nError", "POT", "catalogues", "check", "compile_all", "extract", "po_path", "update", "write"]
