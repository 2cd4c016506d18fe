"""Reading an ELIZA script written in the 1966 paper's S-expression-like notation.

A script is: a greeting list, the word START, then one list per keyword, and
optionally `()` to end it. `;` starts a comment that runs to the end of the line.

Keyword lists (the forms of the CACM appendix):

    (DONT = DON'T)                           substitution only
    (MOTHER DLIST(/NOUN FAMILY))             tags (word classes) only
    (MOM = MOTHER DLIST(/ FAMILY))           substitution and tags
    (HOW (=WHAT))                            link to another keyword
    (DREAMED = DREAMT 4 (=DREAMT))           substitution, rank and link
    (MY = YOUR 2 ((0 YOUR 0) (YOUR 3) ...))  decomposition rules, each with reassemblies
    (MEMORY MY (0 YOUR 0 = BUT YOUR 3) ...)  the memory transformations (exactly four)
    (NONE ((0) (PLEASE GO ON) ...))          replies when no keyword applies

Decomposition elements: `0` (any number of words), `n` (exactly n words), a word,
`(* A B)` (any one of the words), `(/TAG ...)` (a word carrying one of the tags).
Reassembly: words and part numbers, or `(=KW)`, `(NEWKEY)`, `(PRE (reassembly) (=KW))`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

# ---------------------------------------------------------------- errors


class ScriptError(ValueError):
    """A malformed script: says where (line, column) and what was expected."""

    def __init__(self, message: str, line: int, col: int, source: str = "<script>") -> None:
        self.message, self.line, self.col, self.source = message, line, col, source
        super().__init__(f"{source}:{line}:{col}: {message}")


# ---------------------------------------------------------------- reader: text -> nested lists


@dataclass(frozen=True)
class Atom:
    text: str
    line: int
    col: int


@dataclass
class SList:
    items: list[Atom | SList]
    line: int
    col: int


def read_lists(text: str, source: str = "<script>") -> list[Atom | SList]:
    """Split `text` into top-level atoms and (nested) lists, keeping positions."""
    stack: list[SList] = [SList([], 1, 1)]
    line, col, i, n = 1, 1, 0, len(text)
    while i < n:
        ch = text[i]
        if ch == "\n":
            line, col, i = line + 1, 1, i + 1
            continue
        if ch.isspace():
            col, i = col + 1, i + 1
            continue
        if ch == ";":  # comment to end of line
            while i < n and text[i] != "\n":
                i += 1
            continue
        if ch == "(":
            stack.append(SList([], line, col))
            col, i = col + 1, i + 1
            continue
        if ch == ")":
            if len(stack) == 1:
                raise ScriptError("unexpected ')': no list is open here; remove it", line, col, source)
            done = stack.pop()
            stack[-1].items.append(done)
            col, i = col + 1, i + 1
            continue
        start_col, j = col, i
        while j < n and not text[j].isspace() and text[j] not in "();":
            j += 1
        stack[-1].items.append(Atom(text[i:j], line, start_col))
        col, i = col + (j - i), j
    if len(stack) > 1:
        open_list = stack[-1]
        raise ScriptError(
            f"end of script inside the list opened at line {open_list.line}, column {open_list.col}: "
            f"expected {len(stack) - 1} more ')'",
            line,
            col,
            source,
        )
    return stack[0].items


# ---------------------------------------------------------------- the script model


@dataclass(frozen=True)
class Element:
    """One element of a decomposition pattern."""

    kind: str  # "any" (0), "count" (n words), "word", "alt" (* ...), "tag" (/ ...)
    count: int = 0
    words: frozenset[str] = frozenset()

    def __str__(self) -> str:
        if self.kind == "any":
            return "0"
        if self.kind == "count":
            return str(self.count)
        if self.kind == "word":
            return next(iter(self.words))
        mark = "*" if self.kind == "alt" else "/"
        return f"({mark}{' '.join(sorted(self.words))})"


@dataclass(frozen=True)
class Reassembly:
    """What to do when a decomposition matched."""

    kind: str  # "text", "link" (=KW), "newkey", "pre" (PRE (text) (=KW))
    parts: tuple[str | int, ...] = ()  # words and part numbers (text, pre)
    target: str = ""  # keyword (link, pre)


@dataclass(frozen=True)
class Decomposition:
    pattern: tuple[Element, ...]
    reassemblies: tuple[Reassembly, ...]


@dataclass(frozen=True)
class Keyword:
    word: str
    substitute: str | None = None
    rank: int = 0
    tags: frozenset[str] = frozenset()
    rules: tuple[Decomposition, ...] = ()
    link: str | None = None  # a bare (=KW) after (or instead of) the rules

    @property
    def is_key(self) -> bool:
        """True when the word has transformation rules (so it goes on the keystack)."""
        return bool(self.rules) or self.link is not None


@dataclass(frozen=True)
class MemoryRule:
    pattern: tuple[Element, ...]
    reassembly: tuple[str | int, ...]


@dataclass(frozen=True)
class Script:
    greeting: str
    keywords: dict[str, Keyword]
    none: Keyword
    memory_key: str | None = None
    memory: tuple[MemoryRule, ...] = ()
    source: str = "<script>"
    tags: dict[str, frozenset[str]] = field(default_factory=dict)  # word -> its tags

    @classmethod
    def from_file(cls, path: str | Path) -> Script:
        path = Path(path)
        try:
            text = path.read_text(encoding="utf-8")
        except FileNotFoundError:
            raise FileNotFoundError(f"ELIZA script not found: {path} (give the path of a script file)") from None
        return parse_script(text, source=str(path))


DOCTOR_PATH = Path(__file__).with_name("doctor.txt")


# ---------------------------------------------------------------- parser: nested lists -> Script


class _Parser:
    def __init__(self, source: str) -> None:
        self.source = source

    def fail(self, where: Atom | SList, message: str) -> ScriptError:
        return ScriptError(message, where.line, where.col, self.source)

    # -- top level
    def script(self, items: list[Atom | SList], end: tuple[int, int]) -> Script:
        if not items or not isinstance(items[0], SList):
            where = items[0] if items else Atom("", *end)
            raise self.fail(where, "expected the greeting list first, e.g. (HOW DO YOU DO. PLEASE TELL ME YOUR PROBLEM)")
        greeting = " ".join(self.words(items[0], "greeting"))
        if len(items) < 2 or not (isinstance(items[1], Atom) and items[1].text.upper() == "START"):
            where = items[1] if len(items) > 1 else items[0]
            raise self.fail(where, "expected the word START after the greeting list")
        keywords: dict[str, Keyword] = {}
        seen_at: dict[str, SList] = {}
        none: Keyword | None = None
        memory_key: str | None = None
        memory: tuple[MemoryRule, ...] = ()
        rest = items[2:]
        for k, item in enumerate(rest):
            if isinstance(item, Atom):
                raise self.fail(item, f"expected a keyword list in parentheses, found the word {item.text!r}")
            if not item.items:  # () ends the script
                if k != len(rest) - 1:
                    raise self.fail(rest[k + 1], "nothing may follow the end marker (); remove it or move it up")
                break
            head = item.items[0]
            if not isinstance(head, Atom):
                raise self.fail(head, "expected a keyword as the first element of the list, found a list")
            word = head.text.upper()
            if word == "MEMORY" and len(item.items) > 1 and isinstance(item.items[1], Atom):
                if memory_key is not None:
                    raise self.fail(item, "a second MEMORY list: a script has exactly one")
                memory_key, memory = self.memory(item)
                self.memory_at = item
                continue
            if word in seen_at:
                first = seen_at[word]
                raise self.fail(item, f"keyword {word} is defined twice (first at line {first.line}); merge the two lists")
            seen_at[word] = item
            kw = self.keyword(item)
            if word == "NONE":
                if not kw.rules:
                    raise self.fail(item, "NONE needs at least one decomposition rule, e.g. (NONE ((0) (PLEASE GO ON)))")
                none = kw
            else:
                keywords[word] = kw
        if none is None:
            raise ScriptError("the script has no NONE list (replies for texts without keywords)", *end, self.source)
        script = Script(
            greeting=greeting,
            keywords=keywords,
            none=none,
            memory_key=memory_key,
            memory=memory,
            source=self.source,
            tags={w: k.tags for w, k in keywords.items() if k.tags},
        )
        self.check_links(script, seen_at)
        return script

    # -- one keyword list
    def keyword(self, lst: SList) -> Keyword:
        items = lst.items
        word = items[0].text.upper()  # type: ignore[union-attr]
        i, substitute, rank, tags = 1, None, 0, frozenset()
        if i < len(items) and isinstance(items[i], Atom) and items[i].text == "=":
            if i + 1 >= len(items) or not isinstance(items[i + 1], Atom):
                raise self.fail(items[i], f"expected the substitute word after '=' in {word}'s list")
            substitute, i = items[i + 1].text.upper(), i + 2  # type: ignore[union-attr]
        if i < len(items) and isinstance(items[i], Atom) and items[i].text.isdigit():
            rank, i = int(items[i].text), i + 1  # type: ignore[union-attr]
        if i < len(items) and isinstance(items[i], Atom) and items[i].text.upper() == "DLIST":
            if i + 1 >= len(items) or not isinstance(items[i + 1], SList):
                raise self.fail(items[i], "expected a tag list after DLIST, e.g. DLIST(/FAMILY)")
            tags, i = self.tag_list(items[i + 1]), i + 2  # type: ignore[arg-type]
        rules: list[Decomposition] = []
        link: str | None = None
        for item in items[i:]:
            if isinstance(item, Atom):
                raise self.fail(
                    item,
                    f"unexpected word {item.text!r} in {word}'s list: expected '= WORD', a rank, DLIST(...), "
                    "decomposition rules ((pattern) (reassembly) ...) or a link (=KEYWORD), in that order",
                )
            if link is not None:
                raise self.fail(item, f"nothing may follow the link (={link}) in {word}'s list")
            target = self.link_target(item)
            if target is not None:
                link = target
            else:
                rules.append(self.decomposition(item, word))
        return Keyword(word, substitute, rank, tags, tuple(rules), link)

    def tag_list(self, lst: SList) -> frozenset[str]:
        words = self.words(lst, "DLIST")
        if not words or not words[0].startswith("/"):
            raise self.fail(lst, "a DLIST tag list starts with '/', e.g. (/NOUN FAMILY)")
        words[0] = words[0][1:]
        tags = frozenset(w.upper() for w in words if w)
        if not tags:
            raise self.fail(lst, "the DLIST tag list is empty: name at least one tag after '/'")
        return tags

    def decomposition(self, lst: SList, word: str) -> Decomposition:
        if not lst.items or not isinstance(lst.items[0], SList):
            raise self.fail(lst, f"expected a decomposition rule ((pattern) (reassembly) ...) in {word}'s list")
        pattern = self.pattern(lst.items[0])
        if len(lst.items) < 2:
            raise self.fail(lst, f"the decomposition {self.show(lst.items[0])} in {word}'s list has no reassembly rule")
        reassemblies = tuple(self.reassembly(r, len(pattern)) for r in lst.items[1:])
        return Decomposition(pattern, reassemblies)

    def pattern(self, lst: SList | list[Atom | SList], where: Atom | SList | None = None) -> tuple[Element, ...]:
        items = lst.items if isinstance(lst, SList) else lst
        anchor = lst if isinstance(lst, SList) else where
        if not items:
            raise self.fail(anchor, "empty decomposition pattern: use (0) to match any text")  # type: ignore[arg-type]
        out: list[Element] = []
        for item in items:
            if isinstance(item, Atom):
                if item.text.isdigit():
                    n = int(item.text)
                    out.append(Element("any") if n == 0 else Element("count", count=n))
                else:
                    out.append(Element("word", words=frozenset([item.text.upper()])))
                continue
            words = self.words(item, "pattern")
            if not words or words[0][:1] not in ("*", "/"):
                raise self.fail(item, "a list inside a pattern must start with * (alternatives) or / (tags)")
            kind = "alt" if words[0][0] == "*" else "tag"
            words[0] = words[0][1:]
            choice = frozenset(w.upper() for w in words if w)
            if not choice:
                raise self.fail(item, f"empty {'alternatives' if kind == 'alt' else 'tag'} list in a pattern")
            out.append(Element(kind, words=choice))
        return tuple(out)

    def reassembly(self, lst: Atom | SList, n_parts: int) -> Reassembly:
        if isinstance(lst, Atom):
            raise self.fail(lst, f"expected a reassembly rule in parentheses, found the word {lst.text!r}")
        target = self.link_target(lst)
        if target is not None:
            return Reassembly("link", target=target)
        first = lst.items[0] if lst.items else None
        if isinstance(first, Atom) and first.text.upper() == "NEWKEY" and len(lst.items) == 1:
            return Reassembly("newkey")
        if isinstance(first, Atom) and first.text.upper() == "PRE":
            if len(lst.items) != 3 or not isinstance(lst.items[1], SList) or not isinstance(lst.items[2], SList):
                raise self.fail(lst, "expected (PRE (reassembly) (=KEYWORD))")
            target = self.link_target(lst.items[2])
            if target is None:
                raise self.fail(lst.items[2], "the second part of PRE must be a link (=KEYWORD)")
            return Reassembly("pre", self.parts(lst.items[1], n_parts), target)
        return Reassembly("text", self.parts(lst, n_parts))

    def parts(self, lst: SList, n_parts: int) -> tuple[str | int, ...]:
        out: list[str | int] = []
        for item in lst.items:
            if isinstance(item, SList):
                raise self.fail(item, "a reassembly rule holds words and part numbers only, not lists")
            if item.text.isdigit():
                n = int(item.text)
                if not 1 <= n <= n_parts:
                    raise self.fail(
                        item, f"part number {n} is out of range: the decomposition has {n_parts} part(s)"
                    )
                out.append(n)
            else:
                out.append(item.text.upper())
        return tuple(out)

    def memory(self, lst: SList) -> tuple[str, tuple[MemoryRule, ...]]:
        key = lst.items[1].text.upper()  # type: ignore[union-attr]
        rules: list[MemoryRule] = []
        for item in lst.items[2:]:
            if isinstance(item, Atom):
                raise self.fail(item, "expected a memory transformation (pattern = reassembly) in parentheses")
            eq = [k for k, x in enumerate(item.items) if isinstance(x, Atom) and x.text == "="]
            if len(eq) != 1 or eq[0] == 0:
                raise self.fail(item, "a memory transformation reads (pattern = reassembly), with one '='")
            pattern = self.pattern(item.items[: eq[0]], item)
            rules.append(MemoryRule(pattern, self.parts(SList(item.items[eq[0] + 1 :], item.line, item.col), len(pattern))))
        if len(rules) != 4:
            raise self.fail(lst, f"MEMORY needs exactly four transformations (as in the 1966 program), found {len(rules)}")
        return key, tuple(rules)

    # -- helpers
    def link_target(self, lst: SList) -> str | None:
        """`(=KW)` or `(= KW)` -> "KW"; anything else -> None."""
        words = [x.text for x in lst.items if isinstance(x, Atom)]
        if len(words) != len(lst.items) or not words or not words[0].startswith("="):
            return None
        if words[0] == "=" and len(words) == 2:
            return words[1].upper()
        if words[0] != "=" and len(words) == 1:
            return words[0][1:].upper()
        raise self.fail(lst, "a link reads (=KEYWORD)")

    def words(self, lst: SList, what: str) -> list[str]:
        out = []
        for item in lst.items:
            if isinstance(item, SList):
                raise self.fail(item, f"unexpected nested list in the {what}")
            out.append(item.text)
        return out

    def show(self, item: Atom | SList) -> str:
        if isinstance(item, Atom):
            return item.text
        return "(" + " ".join(self.show(x) for x in item.items) + ")"

    def check_links(self, script: Script, at: dict[str, SList]) -> None:
        def need(target: str, where: SList, owner: str) -> None:
            kw = script.keywords.get(target)
            if kw is None or not kw.is_key:
                raise self.fail(where, f"{owner} links to {target}, which has no rules in this script")

        for word, kw in script.keywords.items():
            if kw.link:
                need(kw.link, at[word], word)
            for rule in kw.rules:
                for r in rule.reassemblies:
                    if r.target:
                        need(r.target, at[word], word)
        for rule in script.none.rules:
            for r in rule.reassemblies:
                if r.target:
                    need(r.target, at["NONE"], "NONE")
        if script.memory_key is not None:
            kw = script.keywords.get(script.memory_key)
            if kw is None or not kw.is_key:
                raise self.fail(
                    self.memory_at, f"the MEMORY keyword {script.memory_key} must also be an ordinary keyword with rules"
                )


def parse_script(text: str, source: str = "<script>") -> Script:
    """Parse a whole script; raises ScriptError (with line and column) when it is malformed."""
    items = read_lists(text, source)
    lines = text.split("\n")
    end = (len(lines), len(lines[-1]) + 1)
    return _Parser(source).script(items, end)
