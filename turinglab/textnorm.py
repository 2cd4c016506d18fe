"""What a reader sees of a message: the one normalisation the content filter and the "empty"
check share (issue 24). `see(text)` gives

- `shown`: the text as it looks: NFKC, invisible and format characters removed (zero-width
  characters, variation selectors, Hangul fillers, the Braille blank, marks with no letter to sit
  on), white space collapsed to single spaces;
- `key`: what word lists are matched against: `shown` lower-cased, folded to its Unicode TR39
  confusable skeleton (the `disarm` library's tables; flag letters read as letters), accents
  removed, common digit and symbol
  swaps undone, runs of one character cut to two;
- `problem`: why the text is refused whatever it says (a bidi override or embedding, which can
  make a reader see other words than were written), or None.

The relayed text itself is not changed: emoji sequences need their joiners and selectors."""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

# Overrides, embeddings and isolates: they reorder what is shown (U+202E shows "kcuf" as "fuck")
BIDI_CONTROLS = frozenset("\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")
# Letters and symbols that draw nothing (categories Lo/So/Mn, so not caught as format characters)
BLANK_GLYPHS = frozenset("\u3164\u115f\u1160\uffa0\u2800\u17b4\u17b5\u034f")
# Unambiguous digit and symbol swaps; 1 ! | (i or l) and * (any letter) are left to the patterns
LEET = str.maketrans({"0": "o", "3": "e", "4": "a", "5": "s", "7": "t", "@": "a", "$": "s", "€": "e"})
# Regional-indicator symbols (flag letters 🇦-🇿) read as the letters they show; NFKC and the
# confusables table leave them alone
REGIONAL = str.maketrans({chr(0x1F1E6 + i): chr(0x61 + i) for i in range(26)})
_RUNS = re.compile(r"(.)\1{2,}")


def _invisible(c: str) -> bool:
    if c in BLANK_GLYPHS:
        return True
    o = ord(c)
    if 0xFE00 <= o <= 0xFE0F or 0xE0100 <= o <= 0xE01EF:  # variation selectors
        return True
    return unicodedata.category(c) in ("Cf", "Cc") and c not in "\t\n\r"


@dataclass(frozen=True)
class Seen:
    shown: str
    key: str
    problem: str | None = None

    @property
    def empty(self) -> bool:
        return not self.shown


def _shown(text: str) -> str:
    if text.isascii():
        if not text.isprintable():
            text = "".join(c for c in text if c.isprintable() or c in "\t\n\r\x0b\x0c")
        return " ".join(text.split())
    text = unicodedata.normalize("NFKC", text)
    kept: list[str] = []
    on_letter = False  # whether a mark here has something to sit on
    for c in text:
        if _invisible(c):
            continue
        if unicodedata.category(c)[0] == "M":
            if not on_letter:
                continue
        else:
            on_letter = not c.isspace()
        kept.append(c)
    return " ".join("".join(kept).split())


def key_of(shown: str) -> str:
    """The matching key of already-shown text (see the module doc)."""
    low = shown.lower()
    if not low.isascii():
        from disarm import skeleton_key  # TR39 skeleton (confusables.txt), kept lower-case

        low = skeleton_key(low.translate(REGIONAL)).lower()
        low = unicodedata.normalize("NFKD", low)
        low = "".join(c for c in low if unicodedata.category(c)[0] != "M")
    return _RUNS.sub(r"\1\1", low.translate(LEET))


def see(text: str) -> Seen:
    problem = None
    if not text.isascii() and any(c in BIDI_CONTROLS for c in text):
        bad = next(c for c in text if c in BIDI_CONTROLS)
        problem = f"bidi control U+{ord(bad):04X} (it reorders what is shown)"
    shown = _shown(text)
    return Seen(shown, key_of(shown), problem)


def is_blank(text: str) -> bool:
    """Whether a reader would see nothing: only white space, invisible or format characters,
    blank glyphs and marks with no letter."""
    return not _shown(text)
