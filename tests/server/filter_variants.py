"""The 40 obfuscated variants of issue 24 (its families: variation selectors, bidi overrides, doubled
white space, dotless i, Hangul fillers, Armenian look-alikes, tabs and newlines between words,
digits for letters, separators, masking stars), and ordinary lines that must pass."""

VARIANTS = [
    # variation selectors and other invisible characters inside a word
    "f\ufe0fuck", "ni\ufe0egger", "f\U000e0100uck you", "fu\u200bck", "k\u2060y\u200ds",
    # bidi overrides and embeddings (shown reversed or reordered)
    "\u202ekcuf", "\u202eflesruoy llik", "hi \u202bfuck\u202c", "\u2067kys\u2069",
    # doubled white space, tabs, newlines between the words of a phrase
    "kill  yourself", "kill\tyourself", "kill\nyourself", "go   die", "go\r\ndie", "kill \u3000 yourself",
    # dotless i and other Latin look-alikes
    "n\u0131gger", "k\u0131ll yourself", "\u0280etard", "fuc\u0138",
    # Hangul fillers and the Braille blank inside words
    "fu\u3164ck", "fu\u115fck", "k\u1160ys", "fa\uffa0ggot", "sl\u2800ut",
    # Armenian, Cyrillic, Greek, Cherokee and full-width look-alikes
    "f\u057dck", "g\u0585 die", "wh\u0585re", "\u0455lut", "r\u0430pe", "\uff46\uff55\uff43\uff4b",
    # digits and symbols for letters
    "ki11 yourself", "k1ll y0urself", "n1gg3r", "wh0r3", "$lut", "r@pe",
    # separators and masking stars
    "f.u.c.k", "f-u-c-k you", "f*ck", "f**k off",
]
assert len(VARIANTS) == 40, len(VARIANTS)


def ordinary_lines(n: int = 200) -> list[str]:
    """`n` ordinary chat lines from the shipped material, in a fixed order: interrogator questions
    of the persona runs, replies hand-labelled "ok" (benchmarks/persona/labels.tsv), and the
    replies of the ELIZA script; at most a third from each of the first two before the third."""
    import json
    import re
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    questions: list[str] = []
    for f in sorted((root / "benchmarks/persona/runs").glob("*.json")):
        questions += [r["question"] for r in json.loads(f.read_text(encoding="utf-8"))["replies"]]
    replies = [ln.split("\t", 1)[1] for ln in (root / "benchmarks/persona/labels.tsv").read_text(encoding="utf-8").splitlines()
               if ln.startswith("ok\t")]
    script = (root / "turinglab/witnesses/eliza/doctor.txt").read_text(encoding="utf-8")
    eliza = [m.lower() for m in re.findall(r"\(([A-Z][A-Z ',.?]+)\)", script) if " " in m]
    out: list[str] = []
    for source, share in ((questions, n // 3), (replies, n // 3), (eliza, n), (questions + replies, n)):
        for line in source:
            if len(out) >= n or share == 0:
                break
            if line.strip() and line not in out:
                out.append(line)
                share -= 1
    return out
