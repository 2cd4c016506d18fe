"""The displaced Turing test: conversation items cut from this platform's stored live games.

Each conversation of a game (two-player: A; three-player: A and B) is one stimulus; for every
length k in the study's `conversation_lengths` with at least k exchanges, its first k exchanges
(2k messages, in order) become one item. The text is exactly the stored `message` events, which
are what the interrogator saw. Speakers: "A" wrote first (the interrogator when they opened),
"B" the other; the item's truth is the witness's stored identity (human | machine), its agent the
AI witness's codename or "human". The interrogator is always a human. Each speaker has its own
truth (`payload["speakers"]`, machine speakers named in `payload["speaker_agents"]`;
`statictests.speakers`).

With `topics` ({game_id: topic}, e.g. from `--topics FILE`), a game's conversations carry the topic
control (`statictests.topics`); games without a topic get none.
"""

from __future__ import annotations

from typing import Any

from turinglab.game import events as ev
from turinglab.game.static_config import StaticStudy
from turinglab.statictests.topics import read_topics_csv, topic_fields
from turinglab.store.db import StoreError, UnknownId
from turinglab.store.static import ResponseIn, StimulusIn


def live_study_id(store: Any, ref: str) -> int:
    studies = store.studies()
    found = [s for s in studies if str(s.id) == ref or s.name == ref]
    if not found:
        names = ", ".join(sorted({s.name for s in studies})) or "none"
        raise UnknownId(f"no live study {ref!r} (live studies: {names}); see `turinglab db games`")
    return max(found, key=lambda s: s.version).id


def items_from_games(store: Any, study_id: int, lengths: tuple[int, ...],
                     topics: dict[str, str] | None = None) -> tuple[list[StimulusIn], list[ResponseIn]]:
    topics = topics or {}
    stimuli: list[StimulusIn] = []
    responses: list[ResponseIn] = []
    for game in store.games(study_id):
        log = store.events(game.id)
        for conv, ident in game.seats.items():
            msgs = [e for e in log if e.type == ev.MESSAGE and e.conversation == conv]
            if not msgs:
                continue
            first = msgs[0].actor
            turns = [{"speaker": "A" if e.actor == first else "B", "text": e.payload["text"],
                      "role": "interrogator" if e.actor == ev.INTERROGATOR else "witness"} for e in msgs]
            witness_truth = "human" if ident.kind == "human" else "machine"
            speakers = {"A": "human" if first == ev.INTERROGATOR else witness_truth,
                        "B": witness_truth if first == ev.INTERROGATOR else "human"}
            key = f"{game.id}/{conv}"
            made = False
            for k in lengths:
                chunk = first_exchanges(turns, k)
                if chunk is None:
                    continue
                made = True
                public = [{"speaker": t["speaker"], "text": t["text"]} for t in chunk]
                responses.append(ResponseIn(
                    f"{key}/{k}", key, "\n".join(f"{t['speaker']}: {t['text']}" for t in public), witness_truth,
                    ident.witness if ident.kind == "ai" else "human",
                    payload={"turns": public, "speakers": speakers, "length": k, "game_id": game.id,
                             "speaker_agents": {sp: ident.witness for sp, t in speakers.items() if t == "machine"},
                             "witness_speaker": "B" if first == ev.INTERROGATOR else "A"}))
            if made:
                fields = {"game_id": game.id, "conversation": conv, "format": game.format}
                if game.id in topics:
                    fields.update(topic_fields(topics[game.id], key))
                stimuli.append(StimulusIn(key, fields=fields))
    return stimuli, responses


def first_exchanges(turns: list[dict[str, Any]], k: int) -> list[dict[str, Any]] | None:
    """The first k exchanges (an exchange: a message and the other speaker's reply), or None."""
    out: list[dict[str, Any]] = []
    replies = 0
    for t in turns:
        if out and t["speaker"] != out[-1]["speaker"] and t["speaker"] == "B":
            replies += 1
        out.append(t)
        if replies == k:
            return out
    return None


def build(store: Any, from_study: str, study: StaticStudy,
          topics_file: str | None = None) -> tuple[int, int, int, int]:
    """Create the static study from the live study's games: (study id, stimuli, items, stimuli
    with a topic control). `topics_file`: CSV game_id,topic (`topics.read_topics_csv`; TopicsError)."""
    sid = live_study_id(store, from_study)
    topics = read_topics_csv(topics_file, {g.id for g in store.games(sid)}) if topics_file else None
    stimuli, responses = items_from_games(store, sid, tuple(study.conversation_lengths), topics)
    if not responses:
        raise StoreError(f"the games of live study {from_study!r} have no conversation of "
                         f"{min(study.conversation_lengths)} exchanges or more; play longer games or lower --lengths")
    new = store.import_static(study, stimuli, responses)
    return new, len(stimuli), len(responses), sum("topic" in s.fields for s in stimuli)
