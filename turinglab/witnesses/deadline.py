"""Deadline-aware replies: where a reply still being written may be cut and still read naturally.

A streamed reply grows word by word. `usable` gives the longest prefix that can be shown on
its own: whole words only (the word being written is left out unless the reply is complete),
ending at a sentence end when that keeps most of it, without a dangling "and"/"the"/"my" or a
trailing comma. "" while no word is complete.
"""

from __future__ import annotations

import re

# words a message does not end on (conjunctions, articles, prepositions, possessives)
_DANGLING = frozenset(
    "a an the and or but so because cos cuz if when while then than that which who to of in on at for "
    "from with about into like as my your his her their our its is are was were am be i im i'm it's "
    "just very really not".split()
)
_SENTENCE_END = re.compile(r"[.!?]+(?=\s|$)|\n")
_TRAILING = " \t\n,;:-–—(\"'"


def _strip_tail(text: str) -> str:
    words = text.rstrip(_TRAILING).split(" ")
    while words and words[-1].strip(_TRAILING + ".!?").lower() in _DANGLING:
        words.pop()
    return " ".join(words).rstrip(_TRAILING)


def usable(text: str, final: bool = False) -> str:
    """The longest prefix of `text` that reads as a message on its own ("" when none yet).

    `final`: the model has finished, so the last word is complete and the text is kept whole.
    """
    text = text.lstrip()
    if final:
        return text.strip()
    if not text or not text[-1].isspace():  # the last word may still be growing
        space = max(text.rfind(" "), text.rfind("\n"))
        if space <= 0:
            return ""
        text = text[:space]
    words = _strip_tail(text)
    ends = [m.end() for m in _SENTENCE_END.finditer(text)]
    if ends and ends[-1] >= 0.5 * len(words):  # a whole sentence that keeps most of it
        return text[: ends[-1]].strip()
    return words.strip()
