"""The topic control of conversation items (Zhang et al.): the judge also picks the conversation's
general topic among five; judges with fewer than 15 of 20 topics right, and trials with a wrong
topic, were left out of the paper's analysis (here they are flagged, never deleted).

A conversation's topic is stored in its stimulus' fields: `topic`, `topic_choices` (the topic and
four distractors drawn from Zhang's topic list, reproducibly from the stimulus key, shuffled;
the judge page shuffles them again per judge and item) and `control_answer` (what the store scores
the judge's answer against). Topics come from a responses file's `topic` field, from
`static from-games --topics FILE` (CSV game_id,topic), or from the offline demo.
"""

from __future__ import annotations

import csv
import io
import random
from pathlib import Path
from typing import Any

# the topics of Zhang et al.'s conversations (the prompt of their AI speakers, Supp. S7)
ZHANG_TOPICS = ("fashion", "politics", "books", "sports", "general entertainment", "music", "science",
                "technology", "movies")
N_CHOICES = 5
MIN_TOPIC_ACCURACY = 0.75  # Zhang: judges needed at least 15 of 20 topics right


class TopicsError(ValueError):
    """Bad topic input; the message is one line (what, where, what to do)."""


def known_topic(value: Any) -> str | None:
    """`value` as one of ZHANG_TOPICS (case and surrounding spaces ignored), else None."""
    if not isinstance(value, str):
        return None
    v = " ".join(value.split()).lower()
    return v if v in ZHANG_TOPICS else None


def topic_fields(topic: str, key: str) -> dict[str, Any]:
    """Stimulus fields for a conversation whose true topic is `topic` (one of ZHANG_TOPICS): the
    same choices for the same key and topic on every run and machine (a str seed is hashed with sha512)."""
    t = known_topic(topic)
    if t is None:
        raise TopicsError(f"topic {topic!r} is not one of Zhang's topics ({', '.join(ZHANG_TOPICS)})")
    rng = random.Random(f"topic-choices:{key}:{t}")
    choices = [t, *rng.sample([x for x in ZHANG_TOPICS if x != t], N_CHOICES - 1)]
    rng.shuffle(choices)
    return {"topic": t, "topic_choices": choices, "control_answer": t}


def has_topic_control(fields: dict[str, Any]) -> bool:
    """Does a stimulus with these fields carry a scored topic (or other) control question?"""
    choices = fields.get("control_choices") or fields.get("topic_choices")
    return bool(isinstance(choices, list) and choices and "control_answer" in fields)


def read_topics_csv(path: str | Path, game_ids: set[str]) -> dict[str, str]:
    """A CSV file `game_id,topic` (header first) -> {game_id: topic}. Every game must be one of
    `game_ids`, at most once, with one of ZHANG_TOPICS. Raises TopicsError (one line) on the
    first problem. Games not in the file get no topic control."""
    p = Path(path)
    where = f"--topics {path}"
    if not p.is_file():
        raise TopicsError(f"{where}: no such file; give a CSV file with the header game_id,topic")
    try:
        text = p.read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as exc:
        raise TopicsError(f"{where}: cannot read it ({exc.__class__.__name__}); save it as UTF-8 text") from None
    rows = list(csv.reader(io.StringIO(text)))
    rows = [(n, r) for n, r in enumerate(rows, 1) if any(c.strip() for c in r)]
    if not rows or [c.strip().lower() for c in rows[0][1]] != ["game_id", "topic"]:
        got = ",".join(rows[0][1]) if rows else "an empty file"
        raise TopicsError(f"{where}: the first line must be the header game_id,topic (got {got!r}); add it")
    out: dict[str, str] = {}
    for line, r in rows[1:]:
        if len(r) != 2:
            raise TopicsError(f"{where} line {line}: {len(r)} fields; each line is game_id,topic "
                              "(quote a topic that holds a comma)")
        gid, topic = r[0].strip(), r[1]
        if gid not in game_ids:
            raise TopicsError(f"{where} line {line}: no game {gid!r} in the live study; "
                              "use the game ids of `turinglab db games`")
        if gid in out:
            raise TopicsError(f"{where} line {line}: game {gid!r} is listed twice; keep one line per game")
        t = known_topic(topic)
        if t is None:
            raise TopicsError(f"{where} line {line}: topic {topic.strip()!r} is not one of Zhang's topics; "
                              f"use one of: {', '.join(ZHANG_TOPICS)}")
        out[gid] = t
    if not out:
        raise TopicsError(f"{where}: no game listed under the header; add lines game_id,topic")
    return out
