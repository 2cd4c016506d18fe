"""The content filters of every registered plugin, composed: a message is blocked when any of them
blocks it (the strictest verdict wins), and the study's moderation hook has the last word."""

from __future__ import annotations

import inspect
from collections.abc import Iterable

from turinglab.plugins.manager import content_filters
from turinglab.witnesses import personal_data
from turinglab.textnorm import Seen, see


class ComposedFilter:
    def __init__(self, words: Iterable[str] = (), hook=None, use_default: bool = True):
        words = list(words)
        self.filters = [(name, k.make(words, use_default)) for name, k in content_filters().items()]
        self.hook = hook  # hook(text) -> None when fine, else a short reason; sync or async

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
        if self.hook is not None:  # the moderation model judges what a reader sees, too
            verdict = self.hook(seen.shown)
            if inspect.isawaitable(verdict):
                verdict = await verdict
            if verdict:
                return f"moderation: {verdict}"
        return None
