"""Post-processing of a witness's text before it is shown (per witness `Postprocess`).

Order: strip markdown -> lowercase -> typo injection -> cut to the message limit.
Typos are seeded: the same seed and text give the same typos.
"""

from __future__ import annotations

import dataclasses
import random
import re

from turinglab.game.config import Postprocess, WitnessSpec
from turinglab.witnesses.base import GameContext, Reply, Turn, Witness

# QWERTY neighbours, for adjacent-key substitutions.
_ROWS = ["qwertyuiop", "asdfghjkl", "zxcvbnm"]
_NEIGHBOURS: dict[str, str] = {}
for r, row in enumerate(_ROWS):
    for c, ch in enumerate(row):
        near = [row[i] for i in (c - 1, c + 1) if 0 <= i < len(row)]
        for rr in (r - 1, r + 1):
            if 0 <= rr < len(_ROWS):
                near += [_ROWS[rr][i] for i in (c - 1, c, c + 1) if 0 <= i < len(_ROWS[rr])]
        _NEIGHBOURS[ch] = "".join(near)

_MD_RULES: list[tuple[re.Pattern[str], str]] = [
    (re.compile(r"```[a-zA-Z0-9_-]*\n?"), ""),  # code fences
    (re.compile(r"`([^`]*)`"), r"\1"),  # inline code
    (re.compile(r"!?\[([^\]]*)\]\([^)]*\)"), r"\1"),  # links and images -> their text
    (re.compile(r"(\*\*|__)(.+?)\1", re.S), r"\2"),  # bold
    (re.compile(r"(?<![\w*])\*(?!\s)(.+?)(?<!\s)\*(?![\w*])", re.S), r"\1"),  # *italic*
    (re.compile(r"(?<!\w)_(?!\s)(.+?)(?<!\s)_(?!\w)", re.S), r"\1"),  # _italic_
    (re.compile(r"~~(.+?)~~", re.S), r"\1"),  # strikethrough
    (re.compile(r"^\s{0,3}#{1,6}\s+", re.M), ""),  # headings
    (re.compile(r"^\s{0,3}>\s?", re.M), ""),  # block quotes
    (re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+", re.M), ""),  # list bullets
]


def strip_markdown(text: str) -> str:
    for pattern, repl in _MD_RULES:
        text = pattern.sub(repl, text)
    return re.sub(r"\n{2,}", "\n", text).strip()


def cut_to_limit(text: str, limit: int) -> str:
    """At most `limit` characters, cut at the last word boundary that fits."""
    text = text.strip()
    if len(text) <= limit:
        return text
    head = text[: limit + 1]
    space = max(head.rfind(" "), head.rfind("\n"))
    cut = head[:space] if space > 0 else text[:limit]
    return cut.rstrip(" ,;:-\n")


def _typo(word: str, rng: random.Random) -> str:
    """One typo in `word`: adjacent-key substitution, swap of two neighbours, or a dropped letter."""
    letters = [i for i, ch in enumerate(word) if ch.isalpha()]
    if len(letters) < 2:
        return word
    kind = rng.choice(("substitute", "swap", "drop"))
    i = rng.choice(letters)
    if kind == "substitute" and word[i].lower() in _NEIGHBOURS:
        new = rng.choice(_NEIGHBOURS[word[i].lower()])
        new = new.upper() if word[i].isupper() else new
        return word[:i] + new + word[i + 1 :]
    if kind == "swap":
        pairs = [j for j in letters if j + 1 < len(word) and word[j + 1].isalpha() and word[j] != word[j + 1]]
        if pairs:
            j = rng.choice(pairs)
            return word[:j] + word[j + 1] + word[j] + word[j + 2 :]
    return word[:i] + word[i + 1 :]  # drop (also when the other kinds do not apply)


def inject_typos(text: str, rate: float, rng: random.Random) -> str:
    """Each word of 3+ letters gets one typo with probability `rate`."""
    if rate <= 0:
        return text
    parts = re.split(r"(\s+)", text)
    for k, part in enumerate(parts):
        if sum(ch.isalpha() for ch in part) >= 3 and rng.random() < rate:
            parts[k] = _typo(part, rng)
    return "".join(parts)


_SENTENCE_START = re.compile(r"(^|[.?!]\s+)([a-z])")
_PRONOUN_I = re.compile(r"\bi\b")


def sentence_case(text: str) -> str:
    """'IN WHAT WAY? I THINK SO' -> 'In what way? I think so'."""
    text = _PRONOUN_I.sub("I", text.lower())
    return _SENTENCE_START.sub(lambda m: m.group(1) + m.group(2).upper(), text)


def apply(text: str, pp: Postprocess, max_chars: int, rng: random.Random, kind: str | None = None) -> str:
    """`text` after the witness's post-processing rules (`kind` picks defaults, e.g. ELIZA's case)."""
    if pp.strip_markdown:
        text = strip_markdown(text)
    if pp.lowercase:
        text = text.lower()
    elif pp.sentence_case if pp.sentence_case is not None else kind == "eliza":
        text = sentence_case(text)
    text = inject_typos(text, pp.typo_rate, rng)
    if pp.cut_to_limit:
        text = cut_to_limit(text, max_chars)
    return text


class Postprocessed(Witness):
    """Wraps a witness and post-processes its replies; the raw text stays in `meta['raw']`."""

    def __init__(self, inner: Witness, spec: WitnessSpec, seed: int | None = None) -> None:
        self.inner = inner
        self.codename = inner.codename
        self.kind = inner.kind
        self.pp = spec.postprocess
        self.rng = random.Random(seed)

    async def start(self, ctx: GameContext) -> None:
        await self.inner.start(ctx)

    async def reply(self, history: list[Turn], ctx: GameContext) -> Reply:
        r = await self.inner.reply(history, ctx)
        text = apply(r.text, self.pp, ctx.max_chars, self.rng, self.kind)
        return dataclasses.replace(r, text=text, meta={**r.meta, "raw": r.text})

    async def close(self) -> None:
        await self.inner.close()
