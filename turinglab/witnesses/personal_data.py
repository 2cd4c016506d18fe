"""Personal data in a chat message (issue 36): emails, phone numbers (in digits or in words),
street addresses and postcodes, social handles. `mask(text)` returns the text with each span
replaced by a label such as "[email hidden]" (the message is still sent: a person giving their
number is not abusive, but a Turing test must not let the players meet or identify each other),
or None when nothing was found.

Each rule and its reason:
- email: any `local@domain.tld` that the standard library's address parser
  (`email.headerregistry.Address`) accepts, and the spelt form "jo dot smith at gmail dot com"
  (people write it that way to dodge filters) rewritten and parsed the same way;
- phone: `phonenumbers` (libphonenumber's metadata) finds numbers valid for the UK or the US in
  the text, and in runs of digits and number words ("oh seven seven double nine ...", seven
  digits or more) read as digits, so a number read aloud is found like one typed; a run of ten
  digits or more that libphonenumber calls possible counts too (pagers, island ranges), and so
  do seven digits or more read aloud (nobody spells out a long number that is not one to call;
  counting "one two three four ..." excepted);
- address: a house number, one to three words and a street type ("14 Wellington Road", "221b
  Baker St"), and UK postcodes ("LS6 2AB"): enough to find someone's door;
- handle: `@name` (not an email), and a platform named with a cue ("insta: name",
  "my snap is name", "follow me on tiktok @name"): enough to find someone online.
"""

from __future__ import annotations

import re
from email.errors import HeaderParseError
from email.headerregistry import Address

from turinglab.witnesses.filter_rules import scrub_ids

LABELS = {"email": "[email hidden]", "phone": "[phone hidden]", "address": "[address hidden]",
          "handle": "[handle hidden]"}

_EMAIL = re.compile(r"(?<![\w.+-])[\w.+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}(?![\w-])")
_DOT = r"\s*(?:\(dot\)|\[dot\]|\bdot\b|\.)\s*"
_TLD = r"(?:com|net|org|io|co|uk|edu|gov|ac|me|info|biz|de|fr|es|it|nl|us|ca|au|ie|in)"
_SPELT_EMAIL = re.compile(rf"(?<![\w.])([\w+-]+(?:{_DOT}[\w+-]+)*)\s*(?:\(at\)|\[at\]|\bat\b|@)\s*"
                          rf"([a-z0-9-]+(?:{_DOT}[a-z0-9-]+)*{_DOT}{_TLD})\b", re.I)
_STREET = (r"(?:street|st|road|rd|lane|ln|avenue|ave|close|drive|dr|way|crescent|cres|terrace|place|pl|"
           r"gardens|court|ct|boulevard|blvd|grove|row|square|sq|mews|parade|walk|hill)")
_ADDRESS = re.compile(rf"\b\d{{1,5}}[a-z]?,?\s+(?:(?!(?:and|or|of|the|in|on|at|to|for|a|an)\b)[A-Za-z0-9][\w'-]*\s+){{1,3}}"
                      rf"{_STREET}\b\.?(?-i:,\s*[A-Z][a-z]+\b)?", re.I)
# in capitals, or in small letters with its space ("sw1a 1aa"; "p66fe" is an id)
_POSTCODE = re.compile(r"\b[A-Z]{1,2}\d[A-Z\d]?\s*\d[ABD-HJLNP-UW-Z]{2}\b|(?i:\b[a-z]{1,2}\d[a-z\d]?\s+\d[abd-hjlnp-uw-z]{2}\b)")
# "@name(" is a formula or a call (@SUM(1+1)), not a handle
_AT_HANDLE = re.compile(r"(?<![\w@.])@(?=[\w.]*[A-Za-z])[A-Za-z0-9_][\w.]{1,29}\b(?![.\w]*\()")
_PLATFORM = r"(?:insta(?:gram)?|ig|snap(?:chat)?|twitter|tiktok|discord|threads|facebook|fb|telegram|kik|twitch|reddit|x)"
# ordinary words after a cue ("I'm on insta as well", "my snap is dead"): not a name
_NOT_HANDLE = (r"(?:well|usual|always|normal|often|much|too|and|or|but|the|this|that|it|is|was|so|very|really|"
               r"down|dead|broken|private|same|fine|good|bad|new|old|off|on|my|your|not|just|me|you)")
_HANDLE_CUE = re.compile(
    rf"(?:\b{_PLATFORM}\s*(?:[:=]|-(?=\s)|\bhandle\b|\bname\b)|\bmy\s+{_PLATFORM}\s+(?:is|=)|"
    rf"\b(?:(?:find|add|follow|dm|message|text)\s+me|hmu|hit\s+me\s+up)\s+on\s+{_PLATFORM}\s*,?|"
    rf"\bon\s+{_PLATFORM}\s+as)\s*@?(?!{_NOT_HANDLE}\b)([\w.#-]{{2,32}}\w)", re.I)

_NUMBER_WORDS = {"zero": "0", "oh": "0", "o": "0", "nought": "0", "one": "1", "two": "2", "three": "3", "four": "4",
                 "five": "5", "six": "6", "seven": "7", "eight": "8", "nine": "9"}
_TOKEN = re.compile(r"[A-Za-z]+|\d+|\+")
_FILL = re.compile(r"[\s,.\-()]*")


def _digit_runs(text: str) -> list[tuple[int, int, str, bool]]:
    """Runs of number words and digits (with "double"/"triple") that spell 7 digits or more:
    (start, end, digits, whether any was a word) in `text`."""
    runs, cur, start, end, pending = [], "", -1, -1, 1
    pos, spoken = 0, False
    for m in _TOKEN.finditer(text):
        word = m.group(0).lower()
        gap_ok = start >= 0 and _FILL.fullmatch(text[pos:m.start()]) is not None
        if word in ("double", "triple"):
            part, mult = None, 2 if word == "double" else 3
        elif word in _NUMBER_WORDS:
            part, mult = _NUMBER_WORDS[word], None
        elif word.isdigit() or word == "+":
            part, mult = word, None
        else:
            part = mult = None
        if part is None and mult is None or (start >= 0 and not gap_ok):
            if len(re.sub(r"\D", "", cur)) >= 7:
                runs.append((start, end, cur, spoken))
            cur, start, pending, spoken = "", -1, 1, False
            if part is None and mult is None:
                pos = m.end()
                continue
        if start < 0:
            start = m.start()
        spoken = spoken or not (word.isdigit() or word == "+")
        if mult:
            pending = mult
        else:
            cur += part[0] * pending + part[1:] if pending > 1 else part
            pending = 1
        end = pos = m.end()
    if len(re.sub(r"\D", "", cur)) >= 7:
        runs.append((start, end, cur, spoken))
    return runs


def _counting(digits: str) -> bool:
    """1 2 3 4 5 6 7 ...: counting, not a number to call."""
    d = [int(c) for c in digits if c.isdigit()]
    return all(b - a == 1 for a, b in zip(d, d[1:]))


def _phones(text: str) -> list[tuple[int, int]]:
    import phonenumbers

    text = scrub_ids(text)  # a hash or UUID holds runs of digits that are no one's number
    spans = []
    for start, end, digits, spoken in _digit_runs(text):
        if spoken and not _counting(digits):  # seven digits or more read aloud: a local number at least
            spans.append((start, end))
            continue
        for region in ("GB", "US"):
            try:
                n = phonenumbers.parse(digits, region)
            except phonenumbers.NumberParseException:
                continue
            # ten digits or more in one run is a number to call whatever its range (pagers, islands)
            if phonenumbers.is_valid_number(n) or len(digits) >= 10 and phonenumbers.is_possible_number(n):
                spans.append((start, end))
                break
    for region in ("GB", "US"):  # numbers typed with spaces, dashes and brackets
        for m in phonenumbers.PhoneNumberMatcher(text, region, leniency=phonenumbers.Leniency.VALID):
            spans.append((m.start, m.end))
    return spans


def _valid_email(addr: str) -> bool:
    try:
        a = Address(addr_spec=addr)
    except (HeaderParseError, ValueError, IndexError):
        return False
    return bool(a.username) and "." in a.domain


def _emails(text: str) -> list[tuple[int, int]]:
    spans = [(m.start(), m.end()) for m in _EMAIL.finditer(text) if _valid_email(m.group(0))]
    for m in _SPELT_EMAIL.finditer(text):
        local = re.sub(_DOT, ".", m.group(1), flags=re.I)
        domain = re.sub(_DOT, ".", m.group(2), flags=re.I)
        if _valid_email(f"{local}@{domain}"):
            spans.append((m.start(), m.end()))
    return spans


def find(text: str) -> list[tuple[int, int, str]]:
    """The personal-data spans of `text`: (start, end, kind), in order, not overlapping."""
    found = [(s, e, "email") for s, e in _emails(text)]
    text = scrub_ids(text)  # same length: ids and hex hold digits that are no number or address
    if any(c.isdigit() for c in text) or re.search(r"\b(?:one|two|three|four|five|six|seven|eight|nine|zero|oh)\b",
                                                   text, re.I):
        found += [(s, e, "phone") for s, e in _phones(text)]
        found += [(m.start(), m.end(), "address") for m in _ADDRESS.finditer(text)]
        found += [(m.start(), m.end(), "address") for m in _POSTCODE.finditer(text)]
    found += [(m.start(), m.end(), "handle") for m in _AT_HANDLE.finditer(text)]
    found += [(m.start(1), m.end(1), "handle") for m in _HANDLE_CUE.finditer(text)]
    out: list[tuple[int, int, str]] = []
    for s, e, kind in sorted(found, key=lambda x: (x[0], -x[1])):
        if out and s < out[-1][1]:  # inside or across one already taken: widen it
            ps, pe, pk = out[-1]
            out[-1] = (ps, max(pe, e), pk)
            continue
        out.append((s, e, kind))
    return out


def mask(text: str) -> tuple[str | None, list[str]]:
    """(the text with every personal-data span replaced by its label, the kinds found), or
    (None, []) when there is none."""
    spans = find(text)
    if not spans:
        return None, []
    out, pos = [], 0
    for s, e, kind in spans:
        out += [text[pos:s], LABELS[kind]]
        pos = e
    out.append(text[pos:])
    return "".join(out), sorted({k for _, _, k in spans})
