"""ELIZA (Weizenbaum, CACM 9(1), 1966): the program that runs a script such as DOCTOR.

One `Eliza` object is one conversation: it holds the cycling position of every
decomposition rule, the memory queue and the counting mechanism. The `Script` it
runs is immutable and may be shared.

How a text is answered (paper section numbers in brackets, "listing" = the 1965
MAD-SLIP source found in 2021, used only where the paper is silent or vague):

1. The text is upper-cased and split into words; `.` and `,` are delimiters
   (so are `?`, `!`, `;`, `:`, which the 1966 terminal text had no use for), and
   the word BUT (listing, line 000660; needed for the paper's own conversation).
2. Words are scanned left to right. A word in the dictionary is replaced by its
   substitute (I -> YOU, ME -> YOU, ...). A word with rules is a keyword: it goes
   on top of the keystack if its rank is higher than every keyword so far, else
   at the bottom. At a delimiter: if a keyword was found the rest of the text is
   dropped, otherwise the text up to the delimiter is dropped.
3. No keyword: when the counter is in the right state (the listing: every fourth
   text) and a memory is queued, the oldest memory is the reply; else NONE.
4. Otherwise keywords are taken from the top of the keystack. For the MEMORY
   keyword (MY) one of the four memory transformations is applied to a copy of
   the text and queued; the listing picks it with SLIP's HASH of the last word
   (the paper says "randomly selected"; both are offered). Then the keyword's
   decomposition rules are tried in order; the first that matches gives its next
   reassembly (cycling). A reassembly may instead link to another keyword
   (=KW), ask for the next keyword on the stack (NEWKEY), or rebuild the text and
   then link (PRE). A keyword whose rules all fail (and has no link) gives the
   listing's NOMATCH(LIMIT) message (lines 002200-002260: PLEASE CONTINUE, HMMM,
   GO ON, PLEASE, I SEE; the branch at line 001490), not NONE; `nomatch="none"`
   keeps the older reading (NONE). A NEWKEY with no keyword left gives NONE.
"""

from __future__ import annotations

import random
import re
import unicodedata
from dataclasses import dataclass
from pathlib import Path

from turinglab.witnesses.eliza.script import DOCTOR_PATH, Element, Keyword, Reassembly, Script
from turinglab.witnesses.eliza.slip import memory_index

PUNCTUATION_DELIMITERS = (".", ",")
WORD_DELIMITERS = ("BUT",)
# the listing's messages when a keyword's decomposition rules all fail, chosen by LIMIT 1..4
# (the listing prints "GO ON , PLEASE" with the 7094's spacing)
NOMATCH = ("PLEASE CONTINUE", "HMMM", "GO ON, PLEASE", "I SEE")
MAX_LINKS = 32  # guard against scripts whose links loop (A -> B -> A)
_SENTENCE_END = re.compile(r"[?!;:]")
_APOSTROPHES = str.maketrans({"\u2019": "'", "\u2018": "'", "`": "'", "\u00b4": "'"})

_DOCTOR: Script | None = None


def doctor_script() -> Script:
    """The DOCTOR script of the paper's appendix (parsed once, shared)."""
    global _DOCTOR
    if _DOCTOR is None:
        _DOCTOR = Script.from_file(DOCTOR_PATH)
    return _DOCTOR


@dataclass(frozen=True)
class Response:
    """A reply and how it was made (for tests and logs)."""

    text: str
    source: str  # "keyword", "memory", "nomatch" or "none"
    keyword: str | None = None  # the keyword whose rule produced the text
    rule: int | None = None  # index of its decomposition rule
    keystack: tuple[str, ...] = ()  # keywords found, in stack order
    words: tuple[str, ...] = ()  # the text after cutting and substitution


def tokenize(text: str) -> list[str]:
    """Upper-case words and delimiters: 'Well, my boy.' -> ['WELL', ',', 'MY', 'BOY', '.']."""
    text = unicodedata.normalize("NFKC", text).translate(_APOSTROPHES).upper()
    text = _SENTENCE_END.sub(".", text)
    out: list[str] = []
    for raw in text.split():
        word = ""
        for ch in raw:
            if ch in PUNCTUATION_DELIMITERS:
                if word:
                    out.append(word)
                out.append(ch)
                word = ""
            elif ch.isalnum() or ch in "'-":
                word += ch
            elif word:  # any other symbol (quotes, brackets, markup) ends a word
                out.append(word)
                word = ""
        if word:
            out.append(word)
    return [w for w in out if w.strip("'-") or w in PUNCTUATION_DELIMITERS]


class Eliza:
    """ELIZA running one script for one conversation.

    memory_choice: "hash" (the program's own rule, reproducible) or "random"
    (the paper's wording; seeded by `seed`).
    nomatch: "listing" (a keyword whose rules all fail answers NOMATCH(LIMIT), as the 1965
    program does) or "none" (it answers from the NONE list, this package's earlier behaviour).
    """

    def __init__(
        self,
        script: Script | None = None,
        *,
        memory_choice: str = "hash",
        seed: int | str | None = None,
        word_delimiters: tuple[str, ...] = WORD_DELIMITERS,
        nomatch: str = "listing",
    ) -> None:
        if memory_choice not in ("hash", "random"):
            raise ValueError(f"memory_choice must be 'hash' or 'random', not {memory_choice!r}")
        if nomatch not in ("listing", "none"):
            raise ValueError(f"nomatch must be 'listing' or 'none', not {nomatch!r}")
        self.nomatch = nomatch
        self.script = script if script is not None else doctor_script()
        self.memory_choice = memory_choice
        self.rng = random.Random(seed)
        self.word_delimiters = frozenset(w.upper() for w in word_delimiters)
        self.limit = 1  # the listing's LIMIT: 1, 2, 3, 4, 1, ... advanced once per text
        self.memories: list[str] = []  # first in, first out
        self._next: dict[tuple[str, int], int] = {}  # (keyword, rule) -> next reassembly

    @classmethod
    def from_file(cls, path: str | Path, **kwargs) -> Eliza:
        return cls(Script.from_file(path), **kwargs)

    @property
    def greeting(self) -> str:
        return self.script.greeting

    def respond(self, text: str) -> str:
        return self.trace(text).text

    # ------------------------------------------------------------ the main procedure

    def trace(self, text: str) -> Response:
        """Answer `text` and say how the answer was made."""
        if not isinstance(text, str):
            raise TypeError(f"ELIZA answers text (str), got {type(text).__name__}")
        self.limit = self.limit % 4 + 1
        words, keystack = self._scan(tokenize(text))
        stack = tuple(keystack)
        if not keystack:
            if self.limit == 4 and self.memories:
                return Response(self.memories.pop(0), "memory", words=tuple(words))
            return self._none(words, stack)
        hops = 0
        while keystack:
            kw = self.script.keywords[keystack.pop(0)]
            if kw.word == self.script.memory_key:
                self._remember(words)
            while True:  # follow links from this keyword
                outcome, value, rule = self._apply(kw, words)
                if outcome == "text":
                    return Response(str(value), "keyword", kw.word, rule, stack, tuple(words))
                if outcome != "link" or hops >= MAX_LINKS:
                    break  # "newkey": next keyword; "fail": NONE; too many links: NONE
                hops += 1
                kw = self.script.keywords[str(value)]
            if outcome != "newkey":
                break
        if outcome == "fail" and self.nomatch == "listing":  # listing line 001490: NOMATCH(LIMIT)
            return Response(NOMATCH[self.limit - 1], "nomatch", kw.word, None, stack, tuple(words))
        return self._none(words, stack)

    def _scan(self, tokens: list[str]) -> tuple[list[str], list[str]]:
        """Substitute words, collect the keystack, and keep one phrase."""
        words: list[str] = []
        keystack: list[str] = []
        top = None
        for tok in tokens:
            if tok in PUNCTUATION_DELIMITERS or tok in self.word_delimiters:
                if keystack:
                    break
                words = []
                continue
            kw = self.script.keywords.get(tok)
            if kw is not None:
                if kw.is_key:
                    if top is None or kw.rank > top:
                        keystack.insert(0, kw.word)
                        top = kw.rank
                    else:
                        keystack.append(kw.word)
                if kw.substitute:
                    tok = kw.substitute
            words.append(tok)
        return words, keystack

    def _apply(self, kw: Keyword, words: list[str]) -> tuple[str, object, int | None]:
        """Try `kw`'s rules on `words`: ("text", reply) | ("link", KW) | ("newkey",) | ("fail",)."""
        for i, rule in enumerate(kw.rules):
            parts = match(rule.pattern, words, self.script.tags)
            if parts is None:
                continue
            key = (kw.word, i)
            k = self._next.get(key, 0)
            self._next[key] = (k + 1) % len(rule.reassemblies)
            r: Reassembly = rule.reassemblies[k]
            if r.kind == "text":
                return "text", assemble(r.parts, parts), i
            if r.kind == "link":
                return "link", r.target, i
            if r.kind == "newkey":
                return "newkey", None, i
            # PRE: rebuild the text, then continue with the linked keyword's rules
            words[:] = assemble(r.parts, parts).split()
            return "link", r.target, i
        if kw.link:
            return "link", kw.link, None
        return "fail", None, None

    def _none(self, words: list[str], stack: tuple[str, ...]) -> Response:
        outcome, value, rule = self._apply(self.script.none, words)
        if outcome != "text":  # a NONE list that only links: answer plainly rather than loop
            value = "PLEASE GO ON"
        return Response(str(value), "none", "NONE", rule, stack, tuple(words))

    def _remember(self, words: list[str]) -> None:
        rules = self.script.memory
        if not rules or not words:
            return
        i = self.rng.randrange(len(rules)) if self.memory_choice == "random" else memory_index(words)
        parts = match(rules[i].pattern, words, self.script.tags)
        if parts is not None:
            self.memories.append(assemble(rules[i].reassembly, parts))


# ---------------------------------------------------------------- matching and reassembly


def _fits(el: Element, word: str, tags: dict[str, frozenset[str]]) -> bool:
    if el.kind in ("word", "alt"):
        return word in el.words
    if el.kind == "tag":
        return not el.words.isdisjoint(tags.get(word, ()))
    return True


def match(pattern: tuple[Element, ...], words: list[str], tags: dict[str, frozenset[str]]) -> list[list[str]] | None:
    """Decompose `words` by `pattern`: one list of words per element, or None.

    `0` takes as few words as it can (leftmost match), `n` exactly n words, a word,
    (* ...) or (/ ...) exactly one word. Dead ends are remembered so long texts stay fast.
    """
    n_el, n_w = len(pattern), len(words)
    dead: set[tuple[int, int]] = set()
    bounds: list[tuple[int, int]] = []

    def go(p: int, w: int) -> bool:
        if p == n_el:
            return w == n_w
        if (p, w) in dead:
            return False
        el = pattern[p]
        if el.kind == "any":
            nxt = pattern[p + 1] if p + 1 < n_el else None
            for end in range(w, n_w + 1):
                if nxt is not None and nxt.kind in ("word", "alt", "tag"):
                    if end == n_w or not _fits(nxt, words[end], tags):
                        continue
                elif nxt is None and end != n_w:
                    continue
                bounds.append((w, end))
                if go(p + 1, end):
                    return True
                bounds.pop()
        else:
            size = el.count if el.kind == "count" else 1
            if w + size <= n_w and (el.kind == "count" or _fits(el, words[w], tags)):
                bounds.append((w, w + size))
                if go(p + 1, w + size):
                    return True
                bounds.pop()
        dead.add((p, w))
        return False

    if not go(0, 0):
        return None
    return [words[a:b] for a, b in bounds]


def assemble(parts: tuple[str | int, ...], pieces: list[list[str]]) -> str:
    """Reassemble: words as they are, a number n stands for the words of the n-th pattern element."""
    out: list[str] = []
    for item in parts:
        if isinstance(item, int):
            out.extend(pieces[item - 1])
        else:
            out.append(item)
    return " ".join(out)
