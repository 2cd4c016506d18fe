"""Write benchmarks/filter/labelled.tsv: the filter's development set (issue 36 item 6).

Written before the rules, by another method than they use: abusive lines are made by *forward*
transforms (a word drawn as emoji letters, flipped, reversed, spread out, with swapped symbols),
personal lines from random but well-formed addresses and numbers, ordinary lines from hand-written
families (idioms, places, film titles, names, history, technical terms, ids). Seeded: the same
file every run. The held-out slice (heldout.tsv) was written by hand first and is never tuned on.

    python benchmarks/filter/build_set.py
"""

from __future__ import annotations

import csv
import random
import uuid
from pathlib import Path

OUT = Path(__file__).with_name("labelled.tsv")
R = random.Random(36)

WORDS = ["fuck", "cunt", "nigger", "faggot", "retard", "slut", "whore", "kike", "spic", "chink", "tranny",
         "motherfucker", "nigga", "rapist", "fucker"]
PHRASES = ["fuck you", "fuck off", "kill yourself", "go die", "you retard", "shut up you slut", "you cunt",
           "die you faggot", "kill yourself loser", "fucking idiot"]
FRAMES = ["{}", "{} lol", "honestly {}", "{}!!", "ok {}", "{} mate", "well {} then", "{} haha"]


def regional(w: str) -> str:
    return " ".join(chr(0x1F1E6 + ord(c) - 97) if c.isalpha() else c for c in w)


def circled(w: str) -> str:
    return "".join(chr(0x24D0 + ord(c) - 97) if c.isalpha() else c for c in w)


def neg_squared(w: str) -> str:
    return "".join(chr(0x1F170 + ord(c) - 97) if c.isalpha() else c for c in w)


def math_style(w: str, base: int) -> str:
    return "".join(chr(base + ord(c) - 97) if c.isalpha() else c for c in w)


FLIP = dict(zip("abcdefghijklmnopqrstuvwxyz", "ɐqɔpǝɟƃɥᴉɾʞlɯuodbɹsʇnʌʍxʎz"))


def flipped(w: str) -> str:
    return "".join(FLIP.get(c, c) for c in reversed(w))


def reversed_(w: str) -> str:
    return w[::-1]


def spaced(w: str) -> str:
    sep = R.choice([" ", "  ", "   ", "    ", " . ", " - ", "_", " _ ", "~", " / ", " * ", "..", " | ", ",", "     "])
    return sep.join(c for c in w if c != " ") if " " not in w else "  ".join(sep.join(p) for p in w.split())


SWAPS = {"a": ["@", "4", "/\\", "∆"], "e": ["3", "€", "ε"], "i": ["1", "!", "|"], "o": ["0", "()", "ø"],
         "s": ["$", "5", "§"], "t": ["7", "+"], "u": ["v", "|_|", "ü", "μ"], "c": ["(", "<", "ç", "k"],
         "k": ["|<", "kk"], "g": ["9", "6"], "f": ["ph"], "r": ["®"], "h": ["#"]}


def swapped(w: str) -> str:
    out, n = "", 0
    for c in w:
        if c in SWAPS and (n == 0 or R.random() < 0.5):
            out += R.choice(SWAPS[c])
            n += 1
        else:
            out += c
    return out


EUPHEMISMS = [
    "kys", "just kys already", "go unalive yourself", "unalive urself", "you should unalive yourself",
    "kill urself", "kill ur self", "kill your self", "neck yourself", "go neck yourself loser",
    "hang yourself", "go hang yourself", "drink bleach", "go drink some bleach", "jump off a bridge",
    "go jump off a bridge", "rope yourself", "go rope", "end yourself", "end your life",
    "off yourself", "why dont you just kill yourself", "nobody would care if you died, kys",
    "do us all a favour and die", "go play in traffic", "unalive yourself pls", "k y s",
    "you should kys", "delete yourself", "go delete yourself", "slit your wrists",
]

FIRST = ["sam", "jo", "alex", "chris", "priya", "tom", "lucy", "mo", "ellie", "dan", "kate", "ravi", "zoe", "ben"]
LAST = ["smith", "jones", "patel", "brown", "taylor", "khan", "evans", "wilson", "walker", "wright"]
DOMAINS = ["gmail.com", "yahoo.co.uk", "outlook.com", "hotmail.com", "icloud.com", "protonmail.com", "uni.ac.uk"]
STREETS = ["Church", "Station", "Victoria", "Green", "Manor", "Park", "Queens", "Mill", "Oak", "Maple", "Elm",
           "High", "King", "Cedar", "Willow", "Albert", "Grange", "Springfield", "Main", "Washington"]
SUFFIX = ["Road", "Street", "Lane", "Avenue", "Close", "Drive", "Way", "Crescent", "Terrace", "Place", "Rd", "St",
          "Ave", "Gardens", "Court", "Boulevard", "Grove"]
TOWNS = ["Leeds", "Bristol", "Norwich", "York", "Cardiff", "Boston", "Austin", "Denver", "Glasgow", "Derby"]
NUMW = ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine"]
PLATFORMS = ["insta", "instagram", "ig", "snap", "snapchat", "twitter", "tiktok", "discord", "x"]


def user() -> str:
    a, b = R.choice(FIRST), R.choice(LAST)
    return R.choice([f"{a}.{b}", f"{a}{b}{R.randint(1, 99)}", f"{a}_{b}", f"{a[0]}{b}", f"{b}.{a}{R.randint(70, 99)}"])


def uk_mobile() -> str:
    return "07" + str(R.randint(400, 999)) + str(R.randint(100000, 999999))


def us_number() -> str:
    return f"{R.choice([212, 312, 415, 617, 646, 718, 202, 303, 512])}{R.randint(200, 999)}{R.randint(1000, 9999)}"


def in_words(digits: str) -> str:
    out, i = [], 0
    while i < len(digits):
        d = digits[i]
        if i + 1 < len(digits) and digits[i + 1] == d and R.random() < 0.4:
            out += ["double", "oh" if d == "0" and R.random() < 0.5 else NUMW[int(d)]]
            i += 2
            continue
        out.append("oh" if d == "0" and R.random() < 0.4 else NUMW[int(d)])
        i += 1
    return " ".join(out)


def personal() -> list[tuple[str, str]]:
    rows = []
    for _ in range(30):
        u, d = user(), R.choice(DOMAINS)
        rows.append((R.choice(["email me at {}", "my email is {}", "{} is my email", "drop me a line: {}",
                               "contact {} if you want"]).format(f"{u}@{d}"), "email"))
    for _ in range(12):
        u, d = user(), R.choice(DOMAINS)
        spelt = u.replace(".", " dot ") + R.choice([" at ", " (at) ", " [at] "]) + d.replace(".", R.choice([" dot ", " (dot) "]))
        rows.append((R.choice(["my email is {}", "email {}", "write to {}"]).format(spelt), "email"))
    for _ in range(25):
        n = uk_mobile()
        shown = R.choice([n, f"{n[:5]} {n[5:]}", f"+44 {n[1:5]} {n[5:]}", f"{n[:5]}-{n[5:8]}-{n[8:]}"])
        rows.append((R.choice(["text me on {}", "my number is {}", "call me {}", "{} whatsapp me",
                               "ring {} later"]).format(shown), "phone_digits"))
    for _ in range(15):
        n = us_number()
        shown = R.choice([f"({n[:3]}) {n[3:6]}-{n[6:]}", f"{n[:3]}-{n[3:6]}-{n[6:]}", f"+1 {n[:3]} {n[3:6]} {n[6:]}",
                          f"{n[:3]}.{n[3:6]}.{n[6:]}"])
        rows.append((R.choice(["my cell is {}", "call me at {}", "text {}", "hit me up {}"]).format(shown), "phone_digits"))
    for _ in range(25):
        n = uk_mobile() if R.random() < 0.7 else us_number()
        rows.append((R.choice(["my number is {}", "text me {}", "it's {}", "call {}"]).format(in_words(n)), "phone_words"))
    for _ in range(30):
        a = f"{R.randint(1, 250)} {R.choice(STREETS)} {R.choice(SUFFIX)}"
        if R.random() < 0.4:
            a += f", {R.choice(TOWNS)}"
        rows.append((R.choice(["I live at {}", "come to {}", "my address is {}", "send it to {}",
                               "we're at {} if you're near"]).format(a), "address"))
    for _ in range(30):
        h = user().replace(".", R.choice([".", "_", ""]))
        p = R.choice(PLATFORMS)
        rows.append((R.choice([f"add me @{h}", f"{p}: {h}", f"my {p} is {h}", f"follow me on {p} @{h}",
                               f"{p} - {h}", f"find me on {p}, {h}"]), "handle"))
    return rows


def abusive() -> list[tuple[str, str]]:
    rows = []
    math_bases = [0x1D41A, 0x1D44E, 0x1D482, 0x1D5BA, 0x1D5EE, 0x1D622, 0x1D68A, 0x1D51E, 0x1D586]
    for w in WORDS + PHRASES:
        frame = R.choice(FRAMES)
        rows.append((frame.format(regional(w)), "letterlike"))
        rows.append((R.choice(FRAMES).format(circled(w) if R.random() < 0.5 else neg_squared(w)), "letterlike"))
        rows.append((R.choice(FRAMES).format(math_style(w, R.choice(math_bases))), "letterlike"))
        rows.append((flipped(R.choice(FRAMES).format(w)), "flipped"))
        if len(w.replace(" ", "")) >= 4:
            rows.append((reversed_(R.choice(FRAMES).format(w)), "reversed"))
        rows.append((R.choice(FRAMES).format(spaced(w)), "spaced"))
        rows.append((R.choice(FRAMES).format(swapped(w)), "symbols"))
    rows += [(e, "euphemism") for e in EUPHEMISMS]
    return rows


PLACES = ["Scunthorpe", "Penistone", "Middlesex", "Sussex", "Essex", "Wessex", "Cockermouth", "Cockfosters",
          "Shitterton", "Twatt in Orkney", "Wetwang", "Dorking", "Bitchfield", "Crapstone", "Lickey End",
          "Sandwich in Kent", "Intercourse, Pennsylvania", "Blue Ball", "Hell, Michigan", "Climax, Georgia",
          "Middlesbrough", "Matlock", "Penrith", "Clitheroe", "Spittal", "Fanny Hands Lane", "Slackbottom",
          "Titicaca", "Hancock County", "Analomink", "Cockburnspath", "Rapides Parish", "Spicewood, Texas",
          "Dickleburgh", "Shaftesbury", "Assington", "Wankie", "Twatley", "Nobottle", "Brokenwind",
          "Kill Devil Hills", "Dildo, Newfoundland", "Chinkapin Oak Park", "Faggs Manor Road", "Retford",
          "Penzance", "Chichester", "Cocking, West Sussex", "Rapeseed Farm, Lincolnshire", "Titchfield"]
PLACE_FRAMES = ["I grew up near {}", "my cousin just moved to {}", "have you ever been to {}?",
                "{} is lovely in spring", "the train to {} was late again", "we stopped in {} for chips"]
FILMS = ["Moby Dick", "Die Hard", "Die Another Day", "Kill Bill", "Free Willy", "Cocktail", "Assassin's Creed",
         "Dick Tracy", "The Fast and the Furious", "Raging Bull", "Snatch", "Hot Fuzz", "Shaun of the Dead",
         "Hancock", "Knocked Up", "Dr Strangelove", "The Rape of the Lock", "'Tis Pity She's a Whore", "Fight Club",
         "Super Troopers", "Kiss Kiss Bang Bang", "Spice World", "Cocoon", "Titanic", "Cockneys vs Zombies",
         "Great Expectations", "Peeping Tom", "Kill the Messenger", "Live and Let Die", "To Kill a Mockingbird",
         "Die Hard with a Vengeance", "Dead Poets Society", "Pulp Fiction", "The Killing Fields",
         "Natural Born Killers", "Killing Eve", "Dickinson", "The Assassination of Jesse James", "Sex Education",
         "Sexy Beast", "Harry Potter", "The Wire", "Breaking Bad", "Pitch Perfect", "Meet the Fockers",
         "Spaceballs", "A Fish Called Wanda", "Trainspotting", "Lock, Stock and Two Smoking Barrels", "Dumbo"]
FILM_FRAMES = ["have you seen {}?", "{} is overrated tbh", "we watched {} last night", "my dad loves {}",
               "is {} worth watching?"]
NAMES = ["Dick Van Dyke", "Philip K. Dick", "Dick Cheney", "Dick Whittington", "Charles Dickens", "Moby", "Kyle",
         "Mr Cockburn", "Matt Hancock", "Benedict Cumberbatch", "Spike Lee", "Sir Francis Drake", "Dick Turpin",
         "Nigel", "Chink Santana", "Fanny Cradock", "Willy Wonka", "Rick Astley", "Hugh Jass", "Dixie Chicks",
         "Nick Clegg", "Johnny Cash", "Tracy Chapman", "Cassius Clay", "Bill Gates", "Ada Lovelace",
         "Alan Turing", "Anne Hathaway", "Assata Shakur", "Titus Andronicus"]
NAME_FRAMES = ["{} was on the telly again", "did you know {} is from round here?", "I read about {} yesterday",
               "my mum met {} once"]
HISTORY = ["the Battle of Hastings", "the Battle of the Somme", "the Battle of Bunker Hill", "the Rape of Nanking",
           "the Rape of the Sabine Women", "the Charge of the Light Brigade", "the Boston Tea Party", "the Blitz",
           "the Gunpowder Plot", "the Kill Devil Hills flights", "the Fall of Saigon", "the Battle of Britain",
           "the Gettysburg Address", "the Spanish Armada", "the Peasants' Revolt", "the Dissolution of the Monasteries",
           "the Great Fire of London", "the assassination of JFK", "the Cuban Missile Crisis", "Magna Carta"]
HISTORY_FRAMES = ["we did {} in year 9", "my grandad could talk about {} for hours", "a documentary on {} tonight",
                  "{} came up in the pub quiz"]
IDIOMS = [
    "bob's your uncle", "it's raining cats and dogs", "that's the bee's knees", "he's all mouth and no trousers",
    "we're not out of the woods yet", "don't get your knickers in a twist", "it's a piece of cake",
    "I'm knackered after that", "that's a load of codswallop", "she's the cat's pyjamas", "it costs an arm and a leg",
    "bite the bullet and do it", "let's call it a day", "don't kill yourself over it", "you'll kill yourself laughing",
    "I could kill for a cuppa", "that joke killed me", "I'm dying to know", "break a leg tonight",
    "he kicked the bucket last year", "there's a chink in the armour", "a chink of light at last",
    "spic and span by the time they arrive", "just popping out for a fag", "anyone got a fag I can nick?",
    "that's a fag end of an idea", "back of a fag packet maths", "faggots and mushy peas for tea",
    "the oilseed rape is flowering", "the yellow fields are rape, apparently", "slut-shaming is gross",
    "the die is cast", "go die-hard fans", "I'd go die on that hill", "my car is a tranny van, a Ford Transit",
    "y'all come back now", "he's all hat and no cattle", "bless your heart", "that's how the cookie crumbles",
    "it's not rocket science", "knock on wood", "hit the sack", "don't count your chickens",
    "you can't have your cake and eat it", "a penny for your thoughts", "chuffed to bits", "it's gone pear-shaped",
    "throw a spanner in the works", "the whole nine yards", "touch base tomorrow", "kill two birds with one stone",
    "dressed to kill", "she killed it at karaoke", "you're killing me, Smalls", "overkill, honestly",
    "that's the pot calling the kettle black", "rule of thumb", "his bark is worse than his bite",
    "don't throw the baby out with the bathwater", "it's all gone to pot", "cheers mate, ta",
    "a dog's dinner", "sweet fanny adams", "I haven't the foggiest", "what a palaver", "fair dinkum",
    "easy peasy lemon squeezy", "the pen is mightier than the sword", "curiosity killed the cat",
    "I'll eat my hat", "that went down like a lead balloon", "take it with a pinch of salt",
]
TECH = [
    "I need to flush the tranny fluid", "the tranny on my old jeep is slipping", "retard the timing by two degrees",
    "we retard the spark at high load", "flame retardant spray", "kill -9 the server process",
    "kill the process and restart it", "the master/slave naming in the old docs", "git blame the config",
    "a fork bomb took down the box", "do a hard reset", "rapeseed oil for frying", "cocktail sort is a bubble sort variant",
    "the assassin bug is a real insect", "bitcoin and ethereum", "the ballcock in the cistern is stuck",
    "turn off the stopcock", "blue tits nest in the box", "a great tit on the feeder", "tit for tat",
    "magna cum laude", "the dickey seat in a vintage car", "shiitake mushrooms", "a cocktail of drugs",
    "the analytics dashboard", "sextant navigation", "the assassination attempt failed", "shuttlecock",
    "hancock's half hour", "the cock of a gun", "a weathercock", "a stopcock key", "manhole cover",
    "docker kill the container", "pkill python", "the gearbox and transmission", "the fag-end of the year",
    "a faggot of sticks for the fire", "chinking glasses", "the whorl of a fingerprint", "a spick pair of shoes",
    "a dike along the river", "the dyke in the Netherlands", "the retarder on a lorry", "retardation in physics",
    "a kike-free keyboard layout is a typo joke", "python's kill switch", "the SIGKILL signal", "the die casting shop",
    "the sluice gate", "cocktail party problem in audio", "tranny is old slang for a transistor radio",
]
TECH_FRAMES = ["{}", "at work: {}", "today I learnt about {}", "{} apparently"]
SUBSTRING = [
    "we ordered cocktails", "shiitake risotto", "the assassin's creed soundtrack", "my therapist is great",
    "grapes are my favourite", "I have skills", "the class was boring", "pass the salt", "that's documented",
    "under the circumstances", "a Dickensian winter", "the peacock strutted", "a scrapbook", "a titanic effort",
    "Arsenal lost again", "the cockpit was tiny", "hotspurs fans", "spicy food", "the kitchen sink", "semantics",
    "I'm a specialist", "the grapevine", "a shitake omelette", "butterscotch", "pennies", "assume nothing",
    "cucumber sandwiches", "the spectacle", "raccoons everywhere", "Mississippi", "the parapet", "trapeze artists",
    "drapes for the lounge", "a kitchen chinker", "the prince", "homework", "scraped knee", "the vicar", "sunset",
    "tramways", "transmission", "tranquil lake", "a rapid reply", "a great rapport", "scrapes and bruises",
]
CHAT = [
    "I was born in 1994", "it cost £12.50 for two pints", "the score was 3 2", "we need 2 eggs and 250 g flour",
    "my flat number is 12", "I live on a quiet street", "the meeting's at 10:30", "I'm at uni studying maths",
    "email is slow today", "my phone is on 5%", "lol what a day", "meet @ the pub at 8?", "I'm @ home now",
    "the bus number is 42", "room 101 is free", "I got 87 out of 100", "the year 2000 bug", "call me later?",
    "text me when you're home", "what's your favourite street food?", "I moved house in 2019",
    "my street has loads of potholes", "we're on floor 3", "about 15 minutes away", "around 7 or 8 pm",
    "I'm 23 and my sister is 19", "in 1066 and all that", "the 1 2 3 4 combination", "I scored 1 0 1 in the quiz",
    "the M25 was rammed", "I live near the A1", "it's 25 degrees here", "we had 3 kids and 2 dogs",
    "is it 2 for 1 on Tuesdays?", "flight BA 117 was delayed", "my postcode area is lovely", "phone's dying",
    "what's your email client of choice?", "I hate my phone contract", "our address book app crashed",
    "I'm on instagram too much", "twitter is a mess now", "snapchat streaks are a thing", "discord servers are fun",
    "I'm on 50 Oak trees planted so far", "page 214 of the book", "the 7 45 train", "ninety nine problems",
    "one two three four, I declare a thumb war", "seven days a week", "two or three times a year",
    "four five six seven eight nine ten", "it's a hundred and twenty quid", "chapter 11 is the best",
    "the 2012 olympics were great", "I was there 2014 to 2016", "£1,250 a month rent", "1.5 million views",
]
N_IDS = 60


def ids() -> list[str]:
    out = []
    for i in range(N_IDS):
        kind = i % 6
        if kind == 0:
            out.append(f"my participant id is {R.getrandbits(48):012x}")
        elif kind == 1:
            out.append(f"ref {uuid.UUID(int=R.getrandbits(128))}")
        elif kind == 2:
            out.append(f"commit {R.getrandbits(28):07x} fixed it")
        elif kind == 3:
            out.append(f"the hash is {R.getrandbits(160):040x}")
        elif kind == 4:
            out.append(f"colour #{R.getrandbits(24):06x} looks nice")
        else:
            out.append(f"session {R.getrandbits(64):016x} timed out")
    return out


def ordinary() -> list[tuple[str, str]]:
    rows = [(R.choice(PLACE_FRAMES).format(p), "place") for p in PLACES]
    rows += [(R.choice(PLACE_FRAMES).format(p), "place") for p in PLACES]  # a second frame (duplicates dropped)
    rows += [(R.choice(FILM_FRAMES).format(f), "film") for f in FILMS]
    rows += [(R.choice(FILM_FRAMES).format(f), "film") for f in FILMS]
    rows += [(R.choice(NAME_FRAMES).format(n), "name") for n in NAMES]
    rows += [(R.choice(HISTORY_FRAMES).format(h), "history") for h in HISTORY]
    rows += [(i, "idiom") for i in IDIOMS]
    rows += [(R.choice(TECH_FRAMES).format(t), "technical") for t in TECH]
    rows += [(s, "substring") for s in SUBSTRING]
    rows += [(c, "chat") for c in CHAT]
    rows += [(i, "ids") for i in ids()]
    return rows


def main() -> None:
    rows = [(t, "abusive", f) for t, f in abusive()] + [(t, "personal", f) for t, f in personal()]
    rows += [(t, "ordinary", f) for t, f in ordinary()]
    seen, out = set(), []
    for r in rows:
        if r[0] not in seen and "\t" not in r[0] and "\n" not in r[0]:
            seen.add(r[0])
            out.append(r)
    with OUT.open("w", newline="", encoding="utf-8") as f:
        w = csv.writer(f, delimiter="\t", lineterminator="\n")
        w.writerow(["text", "label", "family"])
        w.writerows(out)
    from collections import Counter

    print(OUT, Counter(r[1] for r in out))


if __name__ == "__main__":
    main()
