"""Issue 36: the content filter's third pass, family by family and in both directions: what a
person still reads as abuse is refused, ordinary speech holding a listed string is not, ids and
hex never trip it, and personal data is masked (not refused)."""

from __future__ import annotations

import asyncio

import pytest

from turinglab.textnorm import see
from turinglab.witnesses import personal_data
from turinglab.witnesses.content_filter import ContentFilter, verdict
from turinglab.witnesses.filter_rules import ALLOWED, readings, unflip

FILTER = ContentFilter()


def refused(text: str) -> str | None:
    return asyncio.run(FILTER.check(text))


ABUSE = {
    "letterlike": ["🇰 🇾 🇸", "🇳🇮🇬🇬🇪🇷", "ⓢⓛⓤⓣ", "🅒🅤🅝🅣", "𝖋𝖚𝖈𝖐 𝖔𝖋𝖋", "𝙬𝙝𝙤𝙧𝙚", "⒡⒰⒞⒦ you"],
    "flipped": ["ɟɟo ʞɔnɟ", "pɹɐʇǝɹ", "ʇoƃƃɐɟ", "ǝıp oƃ"],
    "reversed": ["ffo kcuf", "draterr", "ynnart", "toggaf", "flesruoy llik og"],
    "spaced": ["f . u . c . k", "f    u c k", "s / l / u / t", "c--u--n--t", "w  h  o  r  e", "k , y , s",
               "f_____u_____c_____k"],
    "symbols": ["f#ck off", "f_ck", "k%s", "phuck you", "fvcking hell", "c|_|nt", "|<ys", "wh()re", "$l|_|t",
                "r3t@rd", "m0th3rphuck3r", "|\\|igger", "vvhore", "фuck"],
    "plurals_and_compounds": ["you niggers", "dumb faggots", "sluts", "trannies", "fuckface", "dumbfuck", "fuckwit"],
    "euphemism": ["kill yo self", "neck urself", "go commit sudoku", "kil urself", "unalive yourself",
                  "go neck yourself", "just drink bleach", "kill urself", "hang yourself mate",
                  "why don't you kill yourself", "k.y.s", "jump off a bridge"],
}
ORDINARY = {
    "substring": ["the Scunthorpe problem", "Penistone Grammar School", "Middlesex University", "a cocktail bar",
                  "shiitake broth", "assassin bugs", "my therapist", "spicy wings", "the retardation of the wave"],
    "names": ["Dick Van Dyke danced on the roofs", "Moby Dick is long", "Philip K Dick", "Mr Cockburn",
              "Kyle Sandilands", "Nigel Farage"],
    "idioms": ["don't kill yourself over it", "you'll kill yourself laughing", "a chink in the armour",
               "a chink of light", "spic and span", "nipping out for a fag", "fag end of the evening",
               "faggots and peas", "slut-shaming is wrong", "go die-hard fans", "take the pressure off yourself",
               "rope yourself in before the climb", "delete yourself from the group chat",
               "if your friends did it would you jump off a bridge too?"],
    "technical": ["the tranny fluid is low", "retard the ignition timing", "flame retardant", "kill -9 the pid",
                  "oilseed rape fields", "the Rape of Nanking", "kill the process",
                  "the retarded potential in electrodynamics"],
    "films": ["Die Hard is a Christmas film", "Kill Bill vol 2", "Live and Let Die", "The Killing Fields"],
    "ids": ["4f9a2c7e1b3d", "p3fa9c0e1b2d4a5f", "3fa85f64-5717-4562-b3fc-2c963f66afa6", "commit a3f9c01",
            "#ff0055", "sha 9e107d9d372bb6826bd81d3542a419d6", "token k9x2m4p7q1z8w3r5t6y0"],
    "reversed_ordinary": ["stressed is desserts reversed", "a man a plan a canal panama", "live evil", "gnikool"],
    "flipped_ordinary": ["ɥǝllo ʇɥǝɹǝ", "ʇɐɥʍ"],
    # the dictionary words (wbritish + wamerican, 106 160) the readings once refused
    "dictionary": ["clips", "Kip's", "Tull's", "goodie bag", "who're you", "the CIPS exam", "spices", "spikes",
                   "splices", "phages", "sniggered", "niggardly", "Spicer", "spiced rum", "Faggs Manor Road"],
    "allowed_plurals": ["I had faggots for dinner", "a packet of fags", "chinks in the wall"],
}


@pytest.mark.parametrize("family,text", [(f, t) for f, ts in ABUSE.items() for t in ts])
def test_abuse_a_person_still_reads_is_refused(family, text):
    assert refused(text), (family, readings(see(text).shown))


@pytest.mark.parametrize("family,text", [(f, t) for f, ts in ORDINARY.items() for t in ts])
def test_ordinary_speech_holding_a_listed_string_passes(family, text):
    assert refused(text) is None, (family, readings(see(text).shown))
    assert FILTER.mask(text) is None, family


@pytest.mark.parametrize("text", ["chink", "you chink", "rape you", "the fag over there", "tranny freak",
                                  "you're retarded", "fuck you, a chink in the armour"])
def test_the_allow_list_is_about_the_phrase_not_the_word(text):
    assert refused(text)


def test_a_studys_own_words_are_matched_as_written_the_shipped_ones_with_their_plural():
    f = ContentFilter(["pineapple"])
    assert asyncio.run(f.check("I love pineapples")) is None
    assert asyncio.run(f.check("I love pineapple"))
    assert asyncio.run(f.check("sluts"))


def test_every_allowed_phrase_has_a_reason_and_flipped_text_is_turned_the_right_way_up():
    assert all(why.strip() for _, why in ALLOWED)
    assert unflip("ʞɔnɟ") == "fuck" and unflip("hello") is None


PERSONAL = [
    ("write to jo.smith@example.co.uk", "write to [email hidden]", ["email"]),
    ("jo dot smith at gmail dot com", "[email hidden]", ["email"]),
    ("ring 07700 900123", "ring [phone hidden]", ["phone"]),
    ("call (212) 555-0187 now", "call [phone hidden] now", ["phone"]),
    ("+44 20 7946 0958", "[phone hidden]", ["phone"]),
    ("oh seven seven double oh nine hundred", None, []),  # "hundred" is not a digit: too short to be a number
    ("zero seven seven double zero nine zero zero one two three", "[phone hidden]", ["phone"]),
    ("I'm at 42 Acacia Avenue, Leeds", "I'm at [address hidden]", ["address"]),
    ("postcode LS6 2AB", "postcode [address hidden]", ["address"]),
    ("my insta is lucy.bakes", "my insta is [handle hidden]", ["handle"]),
    ("snap: tommo_99 or @tommo", "snap: [handle hidden] or [handle hidden]", ["handle"]),
    ("hmu on insta lucyxo", "hmu on insta [handle hidden]", ["handle"]),
    ("call me at five five five, one two three four", "call me at [phone hidden]", ["phone"]),
    ("Apt 2, 350 5th Avenue", "Apt [address hidden]", ["address"]),  # the flat number too
    ("my postcode is sw1a 1aa", "my postcode is [address hidden]", ["address"]),
]


@pytest.mark.parametrize("text,masked,kinds", PERSONAL)
def test_personal_data_is_masked(text, masked, kinds):
    assert personal_data.mask(text) == (masked, kinds)
    assert refused(text) is None  # masked, never refused


@pytest.mark.parametrize("text", [
    "I was born in 1994", "it cost £12.50", "meet @ the pub at 8", "I'm on instagram too much", "room 101",
    "we live on a quiet street", "page 214", "the 7 45 train", "email me later", "one or two of them",
    "2014 to 2016", "my email is broken", "one two three four five six seven eight nine ten",
    "I'm on insta as well", "my snap is dead", "twitter: the worst", "@SUM(1+1)", "50 Oak trees", "she is at home",
    "the hash 2770254efd656a32eba84c177de52b0514312386",
])
def test_ordinary_numbers_and_words_are_not_personal_data(text):
    assert personal_data.mask(text) == (None, [])


def test_verdict_keeps_its_shape_and_adds_masked():
    v = verdict("email me: ana@example.org")
    assert v == {"verdict": "ok", "shown": "email me: ana@example.org", "key": "email me: anaaexample.org",
                 "rule": "personal data masked: email", "masked": "email me: [email hidden]"}
    assert verdict("fuck you ana@example.org")["masked"] is None  # refused, so nothing is sent
    assert verdict("hello")["masked"] is None


@pytest.mark.parametrize("name", ["labelled.tsv", "heldout.tsv"])
def test_the_labelled_sets_meet_the_targets(name):
    """benchmarks/filter (issue 36 item 6): recall >= 95 % (abusive refused, personal masked or
    refused), false refusals <= 1 % on the development set (the held-out slice is small: at most
    one), and the sets keep their size."""
    import csv
    from pathlib import Path

    path = Path(__file__).resolve().parents[2] / "benchmarks" / "filter" / name
    with path.open(encoding="utf-8", newline="") as f:
        rows = list(csv.DictReader(f, delimiter="\t"))
    pos = [r for r in rows if r["label"] in ("abusive", "personal")]
    neg = [r for r in rows if r["label"] == "ordinary"]
    assert {r["label"] for r in rows} == {"abusive", "personal", "ordinary"}
    assert (len(pos), len(neg)) >= ((200, 500) if name == "labelled.tsv" else (30, 60))

    def blocked(text):
        return FILTER.rule(see(text)) is not None  # what verdict() decides, without compiling the list again

    hits = sum(blocked(r["text"]) or (r["label"] == "personal" and FILTER.mask(r["text"]) is not None) for r in pos)
    refused = [r["text"] for r in neg if blocked(r["text"])]
    assert hits >= 0.95 * len(pos)
    assert len(refused) <= (0.01 * len(neg) if name == "labelled.tsv" else 1), refused


def test_random_ids_and_hashes_never_trip_the_filter():
    """Issue 36: the server's ids ("p"/"g"/"s" + 16 hex), UUIDs, git hashes (7 and 40 hex) and
    colours, 600 of each kind at random (seeded), inside a sentence: none refused, none masked."""
    import random
    import uuid

    rng = random.Random(36)
    made = []
    for _ in range(600):
        made += [f"my id is {c}{rng.getrandbits(64):016x}" for c in "pgs"]
        made += [f"ref {uuid.UUID(int=rng.getrandbits(128))}", f"commit {rng.getrandbits(28):07x} fixed it",
                 f"sha {rng.getrandbits(160):040x}", f"colour #{rng.getrandbits(24):06x}"]
    tripped = [t for t in made if FILTER.rule(see(t)) or FILTER.mask(t)]
    assert tripped == []
