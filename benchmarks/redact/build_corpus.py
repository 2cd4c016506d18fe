"""Write benchmarks/redact/corpus.tsv (issue 38.3): chat lines with planted personal data and
ordinary chat lines, for `python benchmarks/bench_redact.py`.

Planted lines: a template of the kind people type in a Turing-test chat with one planted item
(a first name, a town, an email, a phone number, a handle or a long number), drawn with a fixed
seed. Names and towns are drawn half from the shipped lists the redactor uses (SSA names, Census
cities) and half from names and towns it has never seen (UK and other first names, UK and Irish
towns), so the recall is not only that of a list lookup. Ordinary lines hold the words that trip
a redactor: capitals at a sentence start, days, months, nationalities, brands, times, years, sums.
Columns: label (planted|clean), kind, planted (the planted string; empty for clean), text.
"""

from __future__ import annotations

import csv
import random
from pathlib import Path

HERE = Path(__file__).parent
SEED = 38
LISTED_NAMES = ["James", "Mary", "Robert", "Patricia", "Michael", "Jennifer", "David", "Linda", "Sarah", "Daniel",
                "Karen", "Joseph", "Nancy", "Thomas", "Lisa", "Mark", "Emily", "Paul", "Laura", "Steven"]
OTHER_NAMES = ["Siobhan", "Callum", "Priya", "Aoife", "Declan", "Niamh", "Rhys", "Imogen", "Tariq", "Fenella",
               "Ruairi", "Oluwaseun", "Mairead", "Hamish", "Ffion", "Kieran", "Saoirse", "Zainab", "Alasdair", "Bethan"]
LISTED_TOWNS = ["Chicago", "Houston", "Phoenix", "Denver", "Seattle", "Boston", "Portland", "Austin", "Nashville",
                "San Diego", "Los Angeles", "New York", "Detroit", "Memphis", "Baltimore"]
OTHER_TOWNS = ["Harrogate", "Leeds", "Bristol", "Swansea", "Galway", "Dundee", "Ipswich", "Cheltenham", "Wigan",
               "Aberystwyth", "Kilkenny", "Norwich", "Stockport", "Inverness", "Basingstoke"]
NAME_T = ["hi im {x}", "my name is {x} btw", "Hi! I'm {x}, nice to meet you", "call me {x}", "{x} here, whats up",
          "it's {x} lol", "hey there, name's {x}", "you can call me {x} if you like", "i am {x} and you?",
          "my mate {x} told me about this", "{x} says hi", "sorry {x} was talking to me"]
TOWN_T = ["I live in {x}", "im from {x}", "grew up in {x} but moved", "based in {x} at the moment",
          "it's raining in {x} again", "just outside {x} actually", "born in {x}, you?", "near {x}, you know it?",
          "we moved to {x} last year", "{x} is where i live", "the weather in {x} is awful", "visiting {x} this week"]
EMAIL_X = ["j.moorcroft@gmail.com", "sam_k91@hotmail.co.uk", "tl.rivers@outlook.com", "kate1990@yahoo.com",
           "d.okafor@uni.ac.uk", "benny.h@icloud.com", "rosie.p@protonmail.com", "mike@fenwick-design.co.uk"]
EMAIL_T = ["email me at {x}", "my email is {x}", "{x} if you want to chat later", "send it to {x} ok",
           "drop me a line {x}", "contact: {x}"]
PHONE_X = ["07700 900461", "07911 123456", "+44 7700 900982", "(415) 555-2671", "212-555-0198", "020 7946 0018",
           "0161 496 0753", "+1 312 555 0147"]
PHONE_T = ["text me on {x}", "my number is {x}", "ring {x} after 6", "{x} thats my mobile", "call {x} if you want",
           "whatsapp {x}"]
HANDLE_X = ["@moorcroft_j", "@sam.k91", "@tl_rivers", "@katie.b", "@dokafor", "@benny_h22", "@rosie_paints",
            "@mike.fenwick"]
HANDLE_T = ["follow me {x}", "my insta is {x}", "add me {x} on snap", "im {x} on twitter", "dm me {x}",
            "tiktok: {x}"]
NUMBER_X = ["5567123", "88213", "40021937", "771045", "31337", "9081726", "123987", "55501"]
NUMBER_T = ["my student number is {x}", "order {x} still hasnt arrived", "staff id {x}", "account {x}",
            "ref {x} if you need it", "my prolific id ends {x}"]
CLEAN = """hi there
how's your day going?
where are you from?
what's 17 times 23?
are you a bot?
tell me a joke
what time is it for you?
pretty good, bit tired
no idea lol
raining as usual
about 4pm
I'm fine thanks
I am not a robot
Monday is the worst day
See you in March
I went there in 2019
It was 1998 when that came out
Netflix is better than the cinema
I'm British but I live abroad
My favourite band is Radiohead
Python is my favourite language
Good morning!
Yes I am human
Sure, why not
That's 391 by the way
Is it Friday yet?
Christmas is coming
I had pizza for lunch
Do you like football?
The Beatles are overrated
I'm studying Biology
Really? That's cool
Not sure what you mean
Honestly I think you're an AI
Ok fine, you win
Maybe, maybe not
I watched Star Wars last night
We had 3 exams this week
That costs about 20 pounds
I'm doing well, and you?
What's your favourite colour?
Blue, probably
Have you been to the beach?
I read a lot of Stephen King
Let's talk about something else
Why do you ask?
I don't trust ChatGPT
Easter holidays were short
My cat is called Mr Whiskers
In April I start a new job""".splitlines()
CLEAN_T = ["{a} {b}", "{a}, {b}", "{a}. {b}", "{b} {a}"]


def build() -> list[dict[str, str]]:
    rng = random.Random(SEED)
    rows = []
    kinds = [("name", NAME_T, None), ("place", TOWN_T, None), ("email", EMAIL_T, EMAIL_X),
             ("phone", PHONE_T, PHONE_X), ("handle", HANDLE_T, HANDLE_X), ("number", NUMBER_T, NUMBER_X)]
    for i in range(330):
        kind, templates, items = kinds[i % len(kinds)]
        if kind == "name":
            x = rng.choice(LISTED_NAMES if rng.random() < 0.5 else OTHER_NAMES)
        elif kind == "place":
            x = rng.choice(LISTED_TOWNS if rng.random() < 0.5 else OTHER_TOWNS)
        else:
            x = rng.choice(items)
        rows.append({"label": "planted", "kind": kind, "planted": x, "text": rng.choice(templates).format(x=x)})
    for i in range(330):
        a, b = rng.sample(CLEAN, 2)
        text = a if i < len(CLEAN) else rng.choice(CLEAN_T).format(a=a, b=b.lower() if i % 3 else b)
        rows.append({"label": "clean", "kind": "", "planted": "", "text": text})
    return rows


if __name__ == "__main__":
    out = HERE / "corpus.tsv"
    with out.open("w", encoding="utf-8", newline="") as f:
        w = csv.DictWriter(f, ["label", "kind", "planted", "text"], delimiter="\t")
        w.writeheader()
        w.writerows(build())
    print(f"wrote {out}")
