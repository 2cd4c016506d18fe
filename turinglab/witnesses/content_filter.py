"""The content filter: a word list (shipped default + the study's words) and an optional
moderation hook. It runs on every message of every side before anything is relayed."""

from __future__ import annotations

import inspect
import re
from collections.abc import Awaitable, Callable, Iterable
from pathlib import Path

from turinglab.textnorm import Seen, key_of, see

DEFAULT_LIST = Path(__file__).with_name("blocked_words.txt")

# hook(text) -> None when fine, else a short reason; sync or async
ModerationHook = Callable[[str], "str | None | Awaitable[str | None]"]


def load_words(path: Path = DEFAULT_LIST) -> list[str]:
    lines = path.read_text(encoding="utf-8").splitlines()
    return [w.strip().lower() for w in lines if w.strip() and not w.lstrip().startswith("#")]


def lists_for(language: str = "en") -> tuple[list[Path], str]:
    """The shipped word lists of a study's language (English always, plus `blocked_words.<lang>.txt`)
    and one line that says which are active; a language without a list falls back to English alone."""
    lang = language.split("-")[0].lower()
    own = DEFAULT_LIST.with_name(f"blocked_words.{lang}.txt")
    if lang == "en":
        return [DEFAULT_LIST], "word lists: English"
    if own.is_file():
        return [DEFAULT_LIST, own], f"word lists: English and {lang}"
    return [DEFAULT_LIST], (f"word lists: English only (no shipped list for {lang!r}: add its words with the "
                            "study's content_filter, or a moderation hook)")


# After `textnorm.key_of`: letters a digit or symbol may still stand for (ambiguous ones)
_LETTER = {"i": "i1l!|", "l": "l1i!|", "a": "a4@", "e": "e3", "o": "o0", "s": "s5$", "t": "t7+", "g": "g9",
           "b": "b8", "u": "uv"}
_SEP = r"[^a-z0-9]{0,3}"  # dots, stars, dashes, spaces between letters: f.u.c.k, f u c k
_GAP = r"[^a-z0-9,;:?]{0,3}"  # between the words of a phrase: not across a clause ("go, die hard")


def _pattern(word: str) -> str:
    """The regex of one listed word: each letter may be repeated once, swapped for a digit or
    symbol, or (inside the word) masked by `*`; up to three separators between letters."""
    chars = key_of(word).strip()
    out = ""
    for n, c in enumerate(chars):
        if c == " ":
            continue
        allowed = _LETTER.get(c, c) + ("*" if 0 < n < len(chars) - 1 else "")
        if n:
            out += _GAP if chars[n - 1] == " " else _SEP
        out += "[" + re.escape(allowed) + "]{1,2}" if c.isalnum() else re.escape(c)
    return out


class ContentFilter:
    def __init__(self, words: Iterable[str] = (), hook: ModerationHook | None = None, use_default: bool = True,
                 language: str = "en"):
        paths, self.lists = lists_for(language) if use_default else ([], "word lists: the study's own words only")
        all_words = [w for p in paths for w in load_words(p)] + [w.lower() for w in words if w.strip()]
        self.words = sorted(set(all_words))
        self.hook = hook
        self._words = [(w, re.compile(_pattern(w))) for w in self.words if key_of(w).strip()]
        alternatives = "|".join(f"(?:{p.pattern})" for _, p in self._words)
        # whole words only (so "class" is not blocked by "ass"); phrases allowed
        self._re = re.compile(rf"(?<![a-z])(?:{alternatives})(?![a-z])") if self._words else None

    def rule(self, seen: Seen) -> str | None:
        """Why the word list or the normalisation refuses text already seen, else None."""
        if seen.problem:
            return seen.problem
        if self._re is not None:
            m = self._re.search(seen.key)
            if m:
                word = next((w for w, p in self._words if p.fullmatch(m.group(0))), m.group(0))
                return f"word list: {word!r}"
        return None

    async def check(self, text: "str | Seen") -> str | None:
        """None if the text may be relayed, else why it was blocked (for the log). `text` may be
        the `Seen` of a frame, normalised once at the boundary."""
        seen = text if isinstance(text, Seen) else see(text)
        if why := self.rule(seen):
            return why
        if self.hook is not None:  # the moderation model judges what a reader sees, too
            verdict = self.hook(seen.shown)
            if inspect.isawaitable(verdict):
                verdict = await verdict
            if verdict:
                return f"moderation: {verdict}"
        return None


def verdict(text: str, words: Iterable[str] = (), use_default: bool = True) -> dict[str, str | None]:
    """What `turinglab filter check` prints: "empty", "blocked" or "ok", the normalised text (what
    a reader sees, and the key the words are matched against) and the rule that decided."""
    seen = see(text)
    flt = ContentFilter(words, use_default=use_default)
    rule = flt.rule(seen)
    if rule:
        result = "blocked"
    elif seen.empty:
        result, rule = "empty", "nothing visible once invisible characters and blank glyphs are removed"
    else:
        result = "ok"
    return {"verdict": result, "shown": seen.shown, "key": seen.key, "rule": rule}
