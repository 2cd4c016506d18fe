"""The content filters of every registered plugin, composed: a message is blocked when any of them
blocks it (the strictest verdict wins), and the study's moderation hook has the last word."""

from __future__ import annotations

import inspect
from collections.abc import Iterable

from turinglab.plugins.manager import content_filters
from turinglab.witnesses import personal_data
from turinglab.witnesses.content_filter import moderated
from turinglab.textnorm import Seen, see


def _make(make, words: list[str], use_default: bool, language: str):
    """A filter from its kind's `make`; the study's language goes to a `make` that takes `language`."""
    try:
        takes = "language" in inspect.signature(make).parameters
    except (TypeError, ValueError):
        takes = False
    return make(words, use_default, language=language) if takes else make(words, use_default)


class ComposedFilter:
    def __init__(self, words: Iterable[str] = (), hook=None, use_default: bool = True, language: str = "en"):
        words = list(words)
        self.filters = [(name, _make(k.make, words, use_default, language)) for name, k in content_filters().items()]
        self.hook = hook  # hook(text) -> None when fine, else a short reason; sync or async
        # which word lists are active, for /admin (each filter that says)
        self.lists = "; ".join(f"{name}: {lists}" for name, flt in self.filters if (lists := getattr(flt, "lists", None)))

    def mask(self, text: str) -> str | None:
        """`text` with personal data masked by every filter that masks, in turn; None when nothing was
        masked. With no masking filter registered the shipped rules (personal_data.py) still mask."""
        maskers = [m for _, flt in self.filters if callable(m := getattr(flt, "mask", None))]
        if not maskers:
            return personal_data.mask(text)[0]
        out = text
        for m in maskers:
            out = m(out) or out
        return out if out != text else None

    async def check(self, text: "str | Seen") -> str | None:
        """None if the text may be relayed, else why it was blocked (for the log)."""
        seen = text if isinstance(text, Seen) else see(text)
        if seen.problem:
            return seen.problem
        for _, flt in self.filters:
            why = flt.check(seen)
            if inspect.isawaitable(why):
                why = await why
            if why:
                return why
        return await moderated(self.hook, seen)  # the moderation model judges what a reader sees, too
