"""The content filter: a word list (shipped default + the study's words) and an optional
moderation hook. It runs on every message of every side before anything is relayed."""

from __future__ import annotations

import inspect
import re
from collections.abc import Awaitable, Callable, Iterable
from pathlib import Path

from turinglab.textnorm import Seen, key_of, see
from turinglab.witnesses import personal_data
from turinglab.witnesses.filter_rules import readings

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


# After `textnorm.key_of`: what a digit, symbol or letter group may still stand for (the
# ambiguous ones, and swaps of more than one character a reader still reads as the letter; the
# confusables table reads "|" as "l", so both spellings are listed)
_LETTER = {"a": ["a", "4", "@", "∆", "/\\", "^"], "b": ["b", "8", "|3", "l3"], "c": ["c", "(", "<", "k"],
           "e": ["e", "3"], "f": ["f", "ph", "ф"], "g": ["g", "9", "6"], "h": ["h", "#"],
           "i": ["i", "1", "l", "!", "|"], "k": ["k", "|<", "l<"], "n": ["n", "|\\|", "l\\l", "/\\/"],
           "w": ["w", "vv", "\\/\\/"], "l": ["l", "1", "i", "!", "|"], "o": ["o", "0", "()", "ø"],
           "r": ["r", "®"], "s": ["s", "5", "$", "§"], "t": ["t", "7", "+"], "u": ["u", "v", "|_|", "l_l"]}
_SEP = r"[^a-z0-9]{0,3}"  # dots, stars, dashes, spaces between letters: f.u.c.k, f u c k
_GAP = r"[^a-z0-9,;:?]{0,3}"  # between the words of a phrase: not across a clause ("go, die hard")
_MASKS = "*#%_"  # what may stand for a letter inside a word: f*ck, f#ck, f_ck
REVERSED_MIN = 4  # letters a listed word needs before its reversal is looked for
NOT_REVERSED = {"spic": "read backwards it is CIPS, a professional body"}


def _pattern(word: str) -> str:
    """The regex of one listed word: each letter may be repeated once, swapped for a digit or
    symbol, or (inside the word) masked by one of `_MASKS`; up to three separators between letters."""
    chars = key_of(word).strip()
    out = ""
    for n, c in enumerate(chars):
        if c == " ":
            continue
        alts = list(_LETTER.get(c, [c])) + (list(_MASKS) if 0 < n < len(chars) - 1 else [])
        if n:
            out += _GAP if chars[n - 1] == " " else _SEP
        if c.isalnum():  # one character class, and groups only for the swaps of several characters
            one = "[" + "".join(re.escape(a) for a in alts if len(a) == 1) + "]"
            many = [re.escape(a) for a in alts if len(a) > 1]
            out += ("(?:" + "|".join(many + [one]) + ")" if many else one) + "{1,2}"
        else:
            out += re.escape(c)
    return out


def _whole(patterns: list[str], firsts: str = "") -> re.Pattern | None:
    """One regex of whole words only (so "class" is not blocked by "ass"); phrases allowed.
    `firsts`: every character a match can start with, looked at first (a long message is then
    not tried against every word at every position)."""
    if not patterns:
        return None
    ahead = "(?=[" + "".join(re.escape(c) for c in sorted(set(firsts))) + "])" if firsts else ""
    return re.compile(r"(?<![a-z])" + ahead + "(?:" + "|".join(f"(?:{p})" for p in patterns) + r")(?![a-z])")


def _firsts(words: Iterable[str]) -> str:
    """The characters a listed word's pattern can start with."""
    heads = [key_of(w).strip()[0] for w in words if key_of(w).strip()]
    return "".join(a[0] for c in heads for a in _LETTER.get(c, [c]))


# The shipped words are nouns and insults whose plural is as abusive ("niggers", "sluts"): an
# "s" or "z" may follow them ("es" may not: "spices" would read "spic" + "es"). A study's own
# words are matched as written.
PLURAL = r"(?:s|z)?"
# Found inside a longer word too ("fuckface", "dumbfuck"): no ordinary English word holds it
# (checked on the 106 160 words of wbritish + wamerican)
INSIDE = re.compile(r"f{1,2}[u*v]{1,2}c{1,2}k{1,2}")
# Ways of writing "yourself" a reader still reads as it; each listed phrase with it gets them all
YOURSELF = ("yourself", "urself", "ur self", "your self", "yoself", "yo self", "yaself", "ya self", "yourselves")


def _variants(word: str) -> list[str]:
    return [word.replace("yourself", v) for v in YOURSELF] if "yourself" in word else [word]


class ContentFilter:
    def __init__(self, words: Iterable[str] = (), hook: ModerationHook | None = None, use_default: bool = True,
                 language: str = "en"):
        paths, self.lists = lists_for(language) if use_default else ([], "word lists: the study's own words only")
        shipped = {v for p in paths for w in load_words(p) for v in _variants(w)}
        own = {v for w in words if w.strip() for v in _variants(w.lower())}
        self.words = sorted(shipped | own)
        self.hook = hook
        self._words = [(w, re.compile(_pattern(w) + (PLURAL if w in shipped and w not in own else "")))
                       for w in self.words if key_of(w).strip()]
        self._re = _whole([p.pattern for _, p in self._words], _firsts(w for w, _ in self._words))
        self._inside = INSIDE if shipped else None
        # reversed text is plain letters read backwards: no swaps or separators inside a word there
        # (with them, "clips" read backwards was "spic")
        long = [key_of(w).strip() for w in self.words
                if sum(c.isalpha() for c in key_of(w)) >= REVERSED_MIN and w not in NOT_REVERSED]
        self._re_reversed = _whole([r"\s+".join("".join(re.escape(c) + "{1,2}" for c in part) for part in w.split())
                                    for w in long], "".join(w[0] for w in long))

    def rule(self, seen: Seen) -> str | None:
        """Why the word list or the normalisation refuses text already seen, else None."""
        if seen.problem:
            return seen.problem
        if self._re is None or seen.empty:
            return None
        for name, key in readings(seen.shown):
            m = (self._re_reversed if name == "reversed" else self._re).search(key)
            if m is None and self._inside is not None and name != "reversed":
                m = self._inside.search(key)
            if m:
                word = next((w for w, p in self._words if p.fullmatch(m.group(0))), m.group(0))
                return f"word list: {word!r}" + ("" if name == "text" else f" ({name})")
        return None

    def mask(self, text: str) -> str | None:
        """`text` with its personal data masked (personal_data.mask), or None when it has none."""
        return personal_data.mask(text)[0]

    async def check(self, text: "str | Seen") -> str | None:
        """None if the text may be relayed, else why it was blocked (for the log). `text` may be
        the `Seen` of a frame, normalised once at the boundary."""
        seen = text if isinstance(text, Seen) else see(text)
        if why := self.rule(seen):
            return why
        return await moderated(self.hook, seen)


async def moderated(hook: "ModerationHook | None", seen: Seen) -> str | None:
    """The study's moderation hook on what a reader sees: None when fine (or no hook), else why."""
    if hook is None:
        return None
    said = hook(seen.shown)
    if inspect.isawaitable(said):
        said = await said
    return f"moderation: {said}" if said else None


def verdict(text: str, words: Iterable[str] = (), use_default: bool = True) -> dict[str, str | None]:
    """What `turinglab filter check` prints: "empty", "blocked" or "ok", the normalised text (what
    a reader sees, and the key the words are matched against), the rule that decided, and
    `masked`: the text with its personal data masked (what the live server stores and relays),
    or None when it has none (or the text is not sent at all)."""
    seen = see(text)
    flt = ContentFilter(words, use_default=use_default)
    rule = flt.rule(seen)
    if rule:
        result = "blocked"
    elif seen.empty:
        result, rule = "empty", "nothing visible once invisible characters and blank glyphs are removed"
    else:
        result = "ok"
    masked, kinds = personal_data.mask(text) if result == "ok" else (None, [])
    if masked is not None:
        rule = "personal data masked: " + ", ".join(kinds)
    return {"verdict": result, "shown": seen.shown, "key": seen.key, "rule": rule, "masked": masked}
