"""docs/protocol.md matches the wire: every frame of recorded two- and three-player games (real
websockets) validates against docs/protocol_schema.json, and the document names exactly the
schema's frame types, snapshot fields and error codes."""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path

import jsonschema
import pytest

from tests.server.live.test_server import ELIZA, RULES, in_game, players, running, say, study, three_player_opening
from turinglab.game.config import Rules

ROOT = Path(__file__).resolve().parents[3]
SCHEMA = json.loads((ROOT / "docs" / "protocol_schema.json").read_text(encoding="utf-8"))
DOC = (ROOT / "docs" / "protocol.md").read_text(encoding="utf-8")


def validator(which: str) -> jsonschema.Draft202012Validator:
    return jsonschema.Draft202012Validator({**SCHEMA, **SCHEMA[which]})


def check_frames(frames: list[dict]) -> set[str]:
    v = validator("server_to_browser")
    for f in frames:
        errors = list(v.iter_errors(f))
        assert not errors, (f, [e.message for e in errors[:3]])
    return {f["type"] for f in frames}


def _section(title: str) -> str:
    return DOC.split(title, 1)[1].split("\n## ", 1)[0].split("\n### ", 1)[0]


def _first_cells(section: str) -> list[str]:
    out = []
    for line in section.splitlines():
        if line.startswith("| `"):
            out += re.findall(r"`([a-z_]+)`", line.split("|")[1])
    return out


def test_the_document_names_the_schemas_frames_fields_and_codes():
    defs = SCHEMA["$defs"]
    server = {k.removeprefix("server_") for k in defs if k.startswith("server_")}
    browser = {k.removeprefix("browser_") for k in defs if k.startswith("browser_")}
    assert set(_first_cells(_section("## Server → browser"))) == server
    assert set(_first_cells(_section("## Browser → server"))) == browser
    assert set(_first_cells(_section("### Game snapshot (`state.game`)"))) == set(defs["snapshot"]["properties"])
    assert set(_first_cells(_section("## Error codes"))) == set(defs["server_error"]["properties"]["code"]["enum"])
    assert set(defs["server_state"]["properties"]) - {"type"} <= set(re.findall(r"`([a-z_]+)`", DOC))
    # the doc's `from` values and the end_reason mapping are the schema's
    assert defs["message"]["properties"]["from"]["enum"] == ["you", "them"]
    assert '`"interrogator"`' not in _section("## Server → browser").split("| `ack`")[0].split("| `message`")[1]
    assert "stored `abuse_report`" in DOC and "`\"report\"`" in DOC


def test_the_schema_refuses_what_the_wire_must_not_carry():
    v = validator("server_to_browser")
    bad = [{"type": "message", "id": "0123456789abcdef", "conv": "A", "from": "interrogator", "text": "x", "t_ms": 1},
           {"type": "error", "code": "server_errorr", "message": "x", "client_id": None},
           {"type": "typing", "conv": "A", "witness": "Eliza"}]
    for f in bad:
        assert list(v.iter_errors(f)), f


class Recorder:
    """The frames a player sent, so that they are checked against the browser_to_server schema."""

    def __init__(self, p):
        self.p, self.sent = p, []
        orig = p.send

        async def send(frame):
            if isinstance(frame, dict):
                self.sent.append(frame)
            await orig(frame)
        p.send = send


async def test_every_frame_of_a_recorded_two_player_game_matches_the_schema(sqlite_url):
    with running(study(), sqlite_url) as base:
        ps = await players(base, 2)
        recs = [Recorder(p) for p in ps]
        seats = await in_game(ps)
        i, w = seats["interrogator"], seats["A"]
        await i.send({"type": "ping"})
        await i.next("pong")
        await i.send({"type": "paste", "conv": "A", "length": 12})
        assert (await i.next("error"))["code"] == "paste_blocked"
        assert (await say(w, "me first", conv=None))["code"] == "not_your_turn"
        await say(i, "hello, how are you doing")
        await i.next("typing", timeout=5)
        await w.next("message")
        await say(w, "fine thanks", conv=None)
        await i.next("message")
        await i.send({"type": "verdict", "choice": "human", "confidence": 101})
        assert (await i.next("error"))["code"] == "bad_verdict"
        await i.send({"type": "verdict", "choice": "human", "confidence": 80, "reason": "typos"})
        await i.phase("reveal")
        await w.phase("reveal")
        await i.send({"type": "report", "reason": "late"})
        await asyncio.sleep(0.3)
        # a second game ends by a report: the wire says "report"
        await i.send({"type": "join"})
        await w.send({"type": "join"})
        seats = await in_game([i, w])
        await seats["A"].send({"type": "report", "reason": "rude"})
        st = await seats["interrogator"].next("state", phase="reveal", timeout=10)
        assert st["game"]["end_reason"] == "report"
        await asyncio.sleep(0.3)
    types = check_frames(i.frames + w.frames)
    assert types == {"state", "message", "ack", "typing", "error", "pong"}
    vb = validator("browser_to_server")
    for r in recs:
        for f in r.sent:
            assert not list(vb.iter_errors(f)) or f.get("confidence") == 101, f


async def test_every_frame_of_a_recorded_three_player_game_matches_the_schema(sqlite_url):
    rules = RULES.model_copy(update={"confidence_min": -100, "confidence_max": 100})
    assert isinstance(rules, Rules)
    with running(study(fmt="three-player", witnesses=(ELIZA,), rules=rules), sqlite_url) as base:
        seats, i, hseat, aseat = await three_player_opening(base)
        for _ in range(200):  # both replies, in whichever order they came
            if {f["conv"] for f in i.frames if f["type"] == "message" and f["from"] == "them"} == {"A", "B"}:
                break
            await asyncio.sleep(0.05)
        else:
            raise AssertionError(f"no reply in both conversations: {i.frames[-4:]}")
        conf = -100 if hseat == "A" else 100  # a directional scale: the human seat's end
        await i.send({"type": "verdict", "choice": hseat, "confidence": conf})
        st = await i.phase("reveal")
        assert st["game"]["verdict"]["confidence"] == conf
        await seats[hseat].phase("reveal")
    types = check_frames(i.frames + seats[hseat].frames)
    assert {"state", "message", "ack"} <= types  # "typing" too, unless a late timer let a reply beat it


@pytest.mark.parametrize("frame", [{"type": "verdict", "choice": "A", "confidence": 5},
                                   {"type": "message", "conv": None, "text": "hi", "client_id": "c"},
                                   {"type": "paste", "conv": "B"}])
def test_inbound_frames_the_server_accepts_match_the_schema(frame):
    from turinglab.server.live import protocol as proto

    proto.parse(json.dumps(frame))
    assert not list(validator("browser_to_server").iter_errors(frame))
