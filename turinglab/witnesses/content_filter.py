"""The content filter: a word list (shipped default + the study's words) and an optional
moderation hook. It runs on every message of every side before anything is relayed."""

from __future__ import annotations

import inspect
import re
import unicodedata
from collections.abc import Awaitable, Callable, Iterable
from pathlib import Path

DEFAULT_LIST = Path(__file__).with_name("blocked_words.txt")

# hook(text) -> None when fine, else a short reason; sync or async
ModerationHook = Callable[[str], "str | None | Awaitable[str | None]"]


def load_words(path: Path = DEFAULT_LIST) -> list[str]:
    lines = path.read_text(encoding="utf-8").splitlines()
    return [w.strip().lower() for w in lines if w.strip() and not w.lstrip().startswith("#")]


_SWAPS = str.maketrans("013457@$", "oieastas")


# Cyrillic and Greek letters that look like Latin ones (lower case; after NFKC and lower())
_LOOKALIKES = str.maketrans({
    "а": "a", "в": "b", "е": "e", "ё": "e", "к": "k", "м": "m", "н": "h", "о": "o", "р": "p", "с": "c", "т": "t",
    "у": "y", "х": "x", "ѕ": "s", "і": "i", "ї": "i", "ј": "j", "ԁ": "d", "ԛ": "q", "ԝ": "w", "ɡ": "g",
    "α": "a", "β": "b", "ε": "e", "η": "n", "ι": "i", "κ": "k", "ν": "v", "ο": "o", "ρ": "p", "τ": "t", "υ": "u",
    "χ": "x", "ω": "w",
})


def _fold(text: str) -> str:
    """What the word list is matched against: NFKC (full-width and styled letters become plain),
    invisible format characters removed (zero-width space and joiners, soft hyphen), lower case,
    accents removed, Cyrillic/Greek look-alikes and common digit-for-letter swaps undone."""
    if text.isascii():  # nothing to normalise (the common case)
        return text.lower().translate(_SWAPS)
    text = unicodedata.normalize("NFKC", text)
    text = "".join(c for c in text if unicodedata.category(c) != "Cf")
    text = unicodedata.normalize("NFKD", text.lower())
    text = "".join(c for c in text if not unicodedata.combining(c))
    return text.translate(_LOOKALIKES).translate(_SWAPS)


class ContentFilter:
    def __init__(self, words: Iterable[str] = (), hook: ModerationHook | None = None, use_default: bool = True):
        all_words = (load_words() if use_default else []) + [w.lower() for w in words if w.strip()]
        self.words = sorted(set(all_words))
        self.hook = hook
        alternatives = "|".join(re.escape(_fold(w)) for w in self.words)
        # whole words only (so "class" is not blocked by "ass"); phrases allowed
        self._re = re.compile(rf"(?<![a-z])(?:{alternatives})(?![a-z])") if self.words else None

    async def check(self, text: str) -> str | None:
        """None if the text may be relayed, else why it was blocked (for the log)."""
        if self._re is not None:
            m = self._re.search(_fold(text))
            if m:
                return f"word list: {m.group(0)!r}"
        if self.hook is not None:
            verdict = self.hook(text)
            if inspect.isawaitable(verdict):
                verdict = await verdict
            if verdict:
                return f"moderation: {verdict}"
        return None
