"""The failure rules for generated conversations (Zhang et al. re-sampled AI-AI conversations that
repeated a sentence or a block of exchanges, or ended early). `check(turns, rules)` returns the
first rule a conversation breaks, as one line, or None. The rules, in the order they are checked
after each new turn:

1. **empty**: a turn with no text.
2. **refusing**: a turn that refuses or steps out of the chat ("I'm sorry, but", "as an AI",
   "language model", "I cannot help"; `REFUSAL`).
3. **assistant register**: a turn in a chatbot's service voice or admitting to be an AI, as the
   live witnesses' persona guard reads it (in the context of the turn before) or as a small
   register model scores it (`statictests.register`: "feel free to ask", "glad I could help",
   "let me know if ...", "Great question! Here are a few ..."); `Rules.assistant` turns it off.
4. **farewell before N exchanges**: a goodbye ("bye", "goodbye", "see you", "gotta go", "talk
   later", "have to go"; `FAREWELL`) in exchange k < `min_exchanges`.
5. **repeated sentence**: a sentence or clause (split at . ! ? , ; and line ends) of at least
   `min_chars` characters (normalised: lower case,
   letters, digits and single spaces) that equals an earlier sentence of the conversation (either
   speaker, this turn included), or is near it: `difflib` ratio >= `near` (0.9 by default).
6. **repeated block**: the last b exchanges (2b turns, b = 1 ... `max_block`) equal, turn by
   turn after normalising, the b exchanges before them (this catches short loops such as
   "lol" / "ok" / "lol" / "ok" that rule 5 lets through).

An exchange is a message of speaker A and B's reply; turns alternate A, B, A, ...
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from difflib import SequenceMatcher

from turinglab.statictests.register import assistant

REFUSAL = re.compile(r"\b(i'?m sorry,? but|as an ai|an ai (language )?model|language model|i cannot help|"
                     r"i can'?t help with|i'?m not able to (help|assist)|i am an ai)\b", re.I)
FAREWELL = re.compile(r"\b(good ?bye|bye|see (you|ya)|gotta go|got to go|have to go|talk (to you )?later|"
                      r"ttyl|take care)\b", re.I)


RULES_VERSION = 3  # raise when a rule's code changes: cached conversations are judged again


@dataclass(frozen=True)
class Rules:
    min_exchanges: int = 6  # a farewell before this exchange is an early exit
    near: float = 0.9  # difflib ratio at or above which two sentences are "the same"
    min_chars: int = 15  # shorter sentences ("lol", "yeah same") are not checked by rule 5
    max_block: int = 3  # blocks of 1 ... max_block exchanges are checked by rule 6
    assistant: bool = True  # rule 3 (assistant register) on


def norm(text: str) -> str:
    return " ".join(re.sub(r"[^a-z0-9]+", " ", text.lower()).split())


def sentences(text: str) -> list[str]:
    return [s for s in (norm(p) for p in re.split(r"[.!?,;\n]+", text)) if s]


def check(turns: list[str], rules: Rules) -> str | None:
    """The first rule the conversation breaks at its last turn (call after each turn), or None."""
    if not turns:
        return None
    k = len(turns) - 1
    text = turns[k]
    who = f"turn {k + 1} ({'AB'[k % 2]})"
    exchange = k // 2 + 1
    if not text.strip():
        return f"empty: {who} has no text"
    if REFUSAL.search(text):
        return f"refusing: {who} refuses or steps out: {text[:60]!r}"
    if rules.assistant and (why := assistant(text, turns[k - 1] if k else None)):
        return f"assistant register: {who} ({why}): {text[:60]!r}"
    if exchange < rules.min_exchanges and FAREWELL.search(text):
        return f"farewell before {rules.min_exchanges} exchanges: {who} in exchange {exchange}: {text[:60]!r}"
    earlier = [s for t in turns[:k] for s in sentences(t)]
    for s in sentences(text):  # against earlier turns and the turn's own earlier sentences
        if len(s) < rules.min_chars:
            earlier.append(s)
            continue
        for e in earlier:
            if s == e:
                return f"repeated sentence (exact): {who}: {s[:60]!r}"
            r = SequenceMatcher(None, s, e).ratio()
            if r >= rules.near:
                return f"repeated sentence (near, ratio {r:.2f}): {who}: {s[:60]!r} ~ {e[:60]!r}"
        earlier.append(s)
    normed = [norm(t) for t in turns]
    if len(turns) % 2 == 0:  # a whole exchange just ended
        for b in range(1, rules.max_block + 1):
            n = 2 * b
            if len(normed) >= 2 * n and normed[-n:] == normed[-2 * n:-n]:
                return f"repeated block: the last {b} exchange(s) repeat the {b} before them ({who})"
    return None
