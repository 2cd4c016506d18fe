"""Redaction for publication (issue 38.3): personal data in chat text, verdict reasons and
free-text answers replaced by typed placeholders.

Kinds and how each is found:
- [EMAIL], [PHONE], [HANDLE]: the content filter's detectors (witnesses/personal_data.py:
  the standard library's address parser, `phonenumbers`, handle cues); a street address or a
  postcode found there is a [PLACE];
- [NAME]: a first name of the shipped SSA list (persona_data/us_names_by_year.tsv) written with a
  capital, or any word after a naming cue ("my name is", "call me", "I'm" + a capital);
- [PLACE]: a city of the shipped Census list (persona_data/us_cities.tsv), or capitalised words
  after a place cue ("I live in", "from", "grew up in", "near");
- [NUMBER]: a run of five digits or more, or four that is not a year (ids, house and account numbers).
Words given in `keep` (a witness's drawn persona name and town: not personal data) are kept and
reported as kind "persona" with `kept=True`.
"""

from __future__ import annotations

import csv
import functools
import re
from dataclasses import dataclass
from importlib import resources

from turinglab.witnesses import personal_data

PLACEHOLDERS = {"name": "[NAME]", "place": "[PLACE]", "email": "[EMAIL]", "phone": "[PHONE]",
                "handle": "[HANDLE]", "number": "[NUMBER]"}
_FROM_FILTER = {"email": "email", "phone": "phone", "handle": "handle", "address": "place"}
# capitalised words that follow a cue but name no one and nowhere
_NOT_NAMES = frozenset("""i im ok okay not so very just really here there home sure fine good great tired bored
back done sorry happy glad new old from in at the a an and but or if yes no hi hey hello well doing going
monday tuesday wednesday thursday friday saturday sunday january february march april may june july august
september october november december english british american scottish welsh irish french german spanish
italian chinese indian canadian australian european asian african christian muslim jewish human ai bot
robot real person student teacher doctor nurse engineer single married retired uk us usa england scotland
wales ireland america europe asia africa internet google reddit chatgpt gpt discord covid christmas easter
i'm i'll i'd i've
""".split())
_CAP = r"[A-Z][a-z'’]+"
# a naming cue takes the next word whatever its case; a weaker one ("I'm", "my mate", "says") a capitalised word
_NAME_CUE = re.compile(r"\b(?:my\s+name\s+is|my\s+name's|name's|call\s+me|i'?m\s+called|i\s+am\s+called|"
                       r"they\s+call\s+me)\s+([A-Za-z][a-z'’]+)"
                       r"|\b(?:i'?m|i\s+am|it'?s|this\s+is|sorry|thanks|cheers|hi|hey|hello|(?:my|our)\s+(?:mate|friend|"
                       r"sister|brother|mum|mom|dad|wife|husband|boyfriend|girlfriend|partner|son|daughter|cousin|"
                       r"flatmate|roommate|boss|teacher))\s+((?-i:" + _CAP + r"))\b"
                       r"|(?<![.!?]\s)(?<!^)\b((?-i:" + _CAP + r"))\s+(?:says|said|here\b|told\s+me|was\s+talking)"
                       r"|^((?-i:" + _CAP + r"))\s+(?:says|said|here\b)", re.I)
_PLACE_CUE = re.compile(r"\b(?:live\s+in|living\s+in|lived\s+in|from|born\s+in|grew\s+up\s+in|based\s+in|"
                        r"near|moved\s+to|raised\s+in|located\s+in|outside|visiting|stay\s+in|staying\s+in)\s+"
                        r"(" + _CAP + r"(?:[ -](?:upon-|on-|under-)?" + _CAP + r"){0,2})")
_LONG_NUMBER = re.compile(r"(?<![\w.])\d{4,}(?![\w.])")
_YEAR = re.compile(r"(?:19|20)\d\d")


@dataclass(frozen=True)
class Span:
    start: int
    end: int
    kind: str  # a key of PLACEHOLDERS, or "persona" (kept)
    text: str
    kept: bool = False

    @property
    def placeholder(self) -> str:
        return self.text if self.kept else PLACEHOLDERS[self.kind]


def _tsv(name: str, column: str) -> list[str]:
    with resources.files("turinglab.witnesses.persona_data").joinpath(name).open(encoding="utf-8") as f:
        rows = csv.DictReader((line for line in f if not line.startswith("#")), delimiter="\t")
        return [r[column] for r in rows]


@functools.cache
def _lists() -> tuple[re.Pattern, re.Pattern]:
    # every first name of the persona draws' SSA file (the most common names of each birth year)
    # (months are names too, "In April I start a new job": not redacted)
    months = {"January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
              "November", "December"}
    names = sorted(set(_tsv("us_names_by_year.tsv", "name")) - months, key=len, reverse=True)
    cities = sorted(_tsv("us_cities.tsv", "city"), key=len, reverse=True)
    name_re = re.compile(r"\b(?:" + "|".join(map(re.escape, names)) + r")\b")  # capitalised, as written
    city_re = re.compile(r"\b(?:" + "|".join(map(re.escape, cities)) + r")\b", re.I)
    return name_re, city_re


def find(text: str, keep: tuple[str, ...] = ()) -> list[Span]:
    """The spans to redact (and the persona words kept) in `text`, in order, not overlapping."""
    found: list[tuple[int, int, str]] = [(s, e, _FROM_FILTER[k]) for s, e, k in personal_data.find(text)]
    name_re, city_re = _lists()
    for m in _NAME_CUE.finditer(text):
        g = next(i for i in range(1, 5) if m.group(i))
        if m.group(g).lower().strip("'’") not in _NOT_NAMES:
            found.append((m.start(g), m.end(g), "name"))
    for m in _PLACE_CUE.finditer(text):
        if m.group(1).split()[0].lower() not in _NOT_NAMES:
            found.append((m.start(1), m.end(1), "place"))
    found += [(m.start(), m.end(), "place") for m in city_re.finditer(text)
              if m.group(0)[0].isupper() or " " in m.group(0)]
    found += [(m.start(), m.end(), "name") for m in name_re.finditer(text)]
    found += [(m.start(), m.end(), "number") for m in _LONG_NUMBER.finditer(text)
              if not (len(m.group(0)) == 4 and _YEAR.fullmatch(m.group(0)))]
    kept = {k.lower() for k in keep if k}
    out: list[Span] = []
    for s, e, kind in sorted(found, key=lambda x: (x[0], -x[1])):
        if out and s < out[-1].end:  # inside or across one already taken: widen it
            p = out[-1]
            out[-1] = Span(p.start, max(p.end, e), p.kind, text[p.start:max(p.end, e)])
            continue
        out.append(Span(s, e, kind, text[s:e]))
    return [Span(x.start, x.end, "persona", x.text, kept=True) if x.text.lower() in kept else x for x in out]


def apply(text: str, spans: list[Span]) -> str:
    """`text` with each span not kept replaced by its placeholder."""
    out, pos = [], 0
    for x in spans:
        out += [text[pos:x.start], x.placeholder]
        pos = x.end
    out.append(text[pos:])
    return "".join(out)


def redact(text: str, keep: tuple[str, ...] = ()) -> str:
    return apply(text, find(text, keep))
