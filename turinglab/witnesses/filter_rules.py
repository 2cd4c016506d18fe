"""The readings of a message the word list is matched against, and the ordinary phrases it must
leave alone (issue 36). Each rule says why it is there.

Readings of one message (`readings`), all from what a reader sees (textnorm.see):
- "text": the matching key (textnorm.key_of: look-alikes, accents, digit swaps folded) with ids
  and hex blanked first, because random hex read as digits-for-letters spelt slurs ("a3f9c0");
  A second "text" reading drops the @ that starts a handle ("@name"), read as "a" otherwise;
- "spaced": runs of single letters joined, whatever stands between them ("f . u . c . k",
  "n _ i _ g", "k      y      s"): a reader still reads one word;
- "flipped": upside-down text ("ʞɔnɟ") turned the right way up (the glyphs mapped back and the
  order reversed); made only when the text has a glyph that exists only upside down;
- "reversed": the key read backwards ("reggin", "flesruoy llik"); matched only against listed
  words of four letters or more, since short reversals are ordinary words.

Allowed phrases (`ALLOWED`): a listed word inside a common phrase that is not abuse (an idiom,
a car part, a verb, a food, a historical event or a title). They are blanked from each reading
before matching, so the same word elsewhere in the message is still caught.
"""

from __future__ import annotations

import re

from turinglab.textnorm import key_of

# Upside-down glyphs and the letter each stands for once turned (n/u, p/d, b/q swap places)
FLIP = {"ɐ": "a", "q": "b", "ɔ": "c", "p": "d", "ǝ": "e", "ɟ": "f", "ƃ": "g", "ɥ": "h", "ᴉ": "i", "ı": "i", "ɾ": "j",
        "ʞ": "k", "ꞁ": "l", "ɯ": "m", "u": "n", "d": "p", "b": "q", "ɹ": "r", "ʇ": "t", "n": "u", "ʌ": "v", "ʍ": "w",
        "ʎ": "y", "ⅎ": "f", "ᖵ": "a", "Ɐ": "a", "∀": "a", "Ǝ": "e", "Ⅎ": "f", "⅁": "g", "ſ": "j", "˥": "l", "Ԁ": "p",
        "ᴚ": "r", "⊥": "t", "∩": "u", "Λ": "v", "⅄": "y", "ʃ": "l", "ɓ": "g", "ɘ": "e"}
_FLIP_ONLY = frozenset("ɐɔǝɟƃɥᴉɾʞɯɹʇʌʍʎⅎ∀Ǝ⅁˥Ԁᴚ⊥∩Λ⅄ꞁ")
_FLIP_TABLE = str.maketrans(FLIP)

# Ids and hex: a UUID; a colour (#fa9, #ff0055); six or more hex digits with at least two digits
# and one letter, maybe after a one-letter prefix (the server's "p3fa9..." participant ids, git
# hashes); long tokens mixing letters and digits (keys, tokens). Shorter hex is left to the
# word list: "d13" and "f46" are as likely "die" and "fag" as an id. Slurs spelt with digits keep
# a letter that is not hex ("n1gg3r") or are short ("fa9"), so they are not taken for ids.
_IDS = re.compile(r"\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b"
                  r"|(?<![\w#])#[0-9a-f]{3,8}\b"  # a colour
                  r"|(?<![\w])[a-z_]?(?=[0-9a-f]*\d[0-9a-f]*\d)(?=[0-9a-f]*[a-f])[0-9a-f]{6,}\b"
                  r"|\b(?=\w*\d\w*\d\w*\d)(?=\w*[a-z])\w{16,}\b", re.I)
_SINGLES = re.compile(r"(?<![a-z0-9])[a-z0-9](?:[^a-z0-9]+[a-z0-9](?![a-z0-9])){2,}")
_NOT_LETTER = re.compile(r"[^a-z0-9]+")
_HANDLE_AT = re.compile(r"(?<![^\s(\[,;:])@")

ALLOWED = [(re.compile(p), why) for p, why in [
    (r"\bchink(?:s|ed|ing)?(?= (?:in|of)\b)", "'a chink in the armour', 'a chink of light': a gap, a sound"),
    (r"\bchinking\b|\bchinked\b", "the sound of glasses"),
    (r"\b(?:oil ?seed|the yellow fields are) rape\b|\brape ?(?:seed|field|fields|oil|crop|flowers?)\b",
     "oilseed rape, the crop"),
    (r"\brape of (?:the )?(?:nanking|nanjing|lock|sabine|lucrece|europa|belgium|proserpina)",
     "historical events and titles"),
    (r"\bspick? (?:and|&|n) span\b", "'spic and span': clean"),
    (r"\bfags? ?-?(?:end|ends|break|breaks|packet|packets|ash|lighter|paper|papers)\b", "a cigarette (British)"),
    (r"\b(?:for|have|had|having|need|want|smoke|smoking|quick|bum|nick|light|roll|rolled|lit|got) (?:a |another )?"
     r"fags?\b(?! (?:you|u)\b)", "a cigarette (British)"),
    (r"\bfaggs manor\b", "a place (Faggs Manor Road, Feltham)"),
    (r"\b(?:packet|pack|box|carton|twenty|ten|load) of fags\b", "cigarettes (British)"),
    (r"\bfaggots? for (?:tea|dinner|lunch|supper)\b|\b(?:ate|had|eat|cook|cooked|love) faggots\b",
     "faggots: a meatball dish"),
    (r"\bfaggots? (?:and|with|in|of) (?:mushy |garden )?(?:peas|gravy|mash|onions?|sticks|wood|twigs)",
     "faggots: a meatball dish, a bundle of sticks"),
    (r"\ba faggot of\b", "a bundle of sticks"),
    (r"\btranny (?:fluid|oil|box|cooler|mount|van|radio|rebuild|shop|is slipping|on)\b|\bthe tranny on\b|"
     r"\btranny is old slang for a transistor", "a car's transmission, a transistor radio"),
    (r"\bretard(?:s|ed|ing)? (?:the|its|their|his|her|timing|spark|ignition|growth|progress|by|potentials?|time|"
     r"flow|valve)\b|\bto retard\b",
     "the verb: to slow or delay"),
    (r"(?<!why )\b(?:don'?t|do not|never|dont) kill yourself\b|\bkill yourself (?:laughing|over|trying|working|for)\b",
     "'don't kill yourself over it', 'kill yourself laughing': idioms of care"),
    (r"\b(?:pressure|weight|load|heat|spotlight|focus|eyes|burden|blame|attention|it) off (?:of )?yourself\b",
     "'take the pressure off yourself': care, not a threat"),
    (r"\brope yourself (?:in|to|on|onto|up|together)\b", "climbing"),
    (r"\bdelete yourself from\b", "from a list or a group"),
    (r"\bwould you (?:also |too |just )?jump off a bridge\b", "the parents' saying about following friends"),
    (r"\bgo die[- ]?hard\b|\bdie[- ]hard\b|\bdie another day\b|\bgo die on that hill\b", "Die Hard, die-hard fans"),
    (r"\bchink santana\b", "a name (the rapper)"),
    (r"\bgo rope (?:climbing|swinging|skipping|jumping|walking)\b", "rope sports"),
    (r"\bgoodies?\b", "'goodie' holds 'go die' with no space (phrases may be run together)"),
    (r"\bwho're\b", "'who are', not 'whore'"),
    (r"\bslut[- ]?(?:shaming|shame|shamed|walk)", "slut-shaming, SlutWalk: speech against abuse"),
    (r"\bwhore of babylon\b|\bpity she'?s a whore\b", "titles: the Bible, Ford's play"),
]]


def scrub_ids(shown: str) -> str:
    """`shown` with ids and hex blanked (spaces of the same length, so offsets still hold)."""
    return _IDS.sub(lambda m: " " * len(m.group(0)), shown) if any(c.isdigit() for c in shown) else shown


_ANY_ALLOWED = re.compile("|".join(f"(?:{rx.pattern})" for rx, _ in ALLOWED))


def allow(key: str) -> str:
    """`key` with each allowed phrase blanked (spaces of the same length)."""
    return _ANY_ALLOWED.sub(lambda m: " " * len(m.group(0)), key)


def _collapse(key: str) -> str:
    return _SINGLES.sub(lambda m: _NOT_LETTER.sub("", m.group(0)), key)


def unflip(shown: str) -> str | None:
    """Upside-down text the right way up, or None when nothing in it is upside down."""
    if not any(c in _FLIP_ONLY for c in shown):
        return None
    return shown[::-1].translate(_FLIP_TABLE)


def readings(shown: str) -> list[tuple[str, str]]:
    """(name, key) of each reading of `shown` (see the module doc), allowed phrases blanked."""
    clean = scrub_ids(shown)
    key = key_of(clean)
    out = [("text", allow(key))]
    if "@" in clean:  # "@name": the @ of a handle is not the "a" of "r@pe"
        out.append(("text", allow(key_of(_HANDLE_AT.sub(" ", clean)))))
    spaced = _collapse(key)
    if spaced != key:
        out.append(("spaced", allow(spaced)))
    up = unflip(clean)
    if up is not None:
        up_key = key_of(up)
        out.append(("flipped", allow(up_key)))
        if _collapse(up_key) != up_key:
            out.append(("flipped", allow(_collapse(up_key))))
    out.append(("reversed", allow(key[::-1])))
    if spaced != key:
        out.append(("reversed", allow(spaced[::-1])))
    return out
