"""Features of the conversation judge (the `conversation` static task; also live transcripts):
per speaker, how the turns read. A conversation item's text is its turns, one per line,
`A: ...` / `B: ...` (statictests/conversations.py); a line without a `name:` prefix continues the
turn before it. The first two speakers met are slots 1 and 2; a conversation item is machine when
either speaker is a machine, so the judge sees both and their contrast.

Per speaker (PER_SPEAKER): turns, words per turn (mean, spread), letters per word, shares of turns
with a question, an exclamation, a lower-case start, no closing punctuation, an assistant phrase
("feel free to", "happy to help", ...), chat markers ("lol", "haha", ...), a contraction; the
speaker's type-token ratio, out-of-vocabulary share (GloVe 400k words), first-person share. Then
the two speakers' differences in words per turn and in assistant phrases.
"""

from __future__ import annotations

import re

import numpy as np

from turinglab.judges.vectors import glove, tokens

PER_SPEAKER = ["turns", "words_per_turn", "words_per_turn_sd", "letters_per_word", "question", "exclamation",
               "lower_start", "no_end_punct", "assistant_phrase", "chat_marker", "contraction", "type_token",
               "oov", "first_person"]
NAMES = [f"{s}_{k}" for s in ("s1", "s2") for k in PER_SPEAKER] + ["words_per_turn_gap", "assistant_gap"]
_TURN = re.compile(r"^\s*([^:\n]{1,40}):\s?(.*)$")
_ASSISTANT = re.compile(r"feel free|happy to help|glad to help|let me know|as an ai|i'?m (?:just )?an ai|"
                        r"great question|certainly[,!]|absolutely[,!]|i hope this helps|how can i (?:help|assist)|"
                        r"is there anything else|here are some|i'?d be happy", re.I)
_CHAT = re.compile(r"\b(?:lol|haha\w*|hehe|hmm+|omg|idk|tbh|btw|yeah|nah|u|ur|gonna|wanna)\b|[:;]-?[()dp]", re.I)
_FIRST = {"i", "me", "my", "mine", "i'm", "i've", "i'd", "i'll", "we", "our", "us"}


def turns(text: str) -> list[tuple[str, str]]:
    """(speaker, text) of each turn, in order."""
    out: list[tuple[str, str]] = []
    for line in text.splitlines():
        m = _TURN.match(line)
        if m:
            out.append((m.group(1).strip(), m.group(2).strip()))
        elif out and line.strip():
            out[-1] = (out[-1][0], f"{out[-1][1]} {line.strip()}")
    return out


def speaker_features(said: list[str]) -> list[float]:
    """PER_SPEAKER for one speaker's turns (zeros when the speaker said nothing)."""
    if not said:
        return [0.0] * len(PER_SPEAKER)
    g = glove()
    words = [t.split() for t in said]
    counts = np.array([len(w) for w in words], dtype=float)
    flat = [w.lower().strip(".,!?;:\"'()") for ws in words for w in ws]
    flat = [w for w in flat if w]
    toks = [t for s in said for t in tokens(s)]

    def share(pred) -> float:
        return float(np.mean([bool(pred(t)) for t in said]))

    return [
        float(len(said)), float(counts.mean()), float(counts.std()),
        float(np.mean([len(w) for w in flat])) if flat else 0.0,
        share(lambda t: "?" in t), share(lambda t: "!" in t),
        share(lambda t: t[:1].islower()), share(lambda t: t[-1:] not in ".!?)\"'"),
        share(_ASSISTANT.search), share(_CHAT.search), share(lambda t: re.search(r"\w'\w", t)),
        float(len(set(flat)) / len(flat)) if flat else 0.0,
        float(np.mean([g.rank(t) is None for t in toks])) if toks else 0.0,
        float(np.mean([w in _FIRST for w in flat])) if flat else 0.0,
    ]


def features(text: str) -> np.ndarray:
    """NAMES for one conversation item."""
    said: dict[str, list[str]] = {}
    for who, t in turns(text):
        said.setdefault(who, []).append(t)
    who = list(said)[:2] + [None] * (2 - min(2, len(said)))
    f1, f2 = (speaker_features(said.get(w, []) if w else []) for w in who)
    i_words, i_asst = PER_SPEAKER.index("words_per_turn"), PER_SPEAKER.index("assistant_phrase")
    return np.array(f1 + f2 + [abs(f1[i_words] - f2[i_words]), abs(f1[i_asst] - f2[i_asst])])


def turn_features(texts: list[str]) -> np.ndarray:
    """The `turns` feature set: one row of NAMES per conversation."""
    return np.vstack([features(t) for t in texts]) if texts else np.zeros((0, len(NAMES)))
