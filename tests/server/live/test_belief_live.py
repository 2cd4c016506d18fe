"""Belief tracking (issue 29): the interrogator's belief moves are stored as `belief` events and
reach no witness. Real server, real websockets, real SQLite."""

from __future__ import annotations

import asyncio

from tests.server.live.test_server import ELIZA, RULES, in_game, players, running, say, study
from turinglab.game import events as ev
from turinglab.store import Store

BELIEF_RULES = RULES.model_copy(update={"belief_tracking": True})
QUESTIONS = ["hello there, how are you", "where do you live these days", "what did you have for lunch"]


def normalised(frames: list[dict]) -> list:
    """A participant's frames with what differs between any two runs taken out: ids become their
    order of appearance, times are dropped (both runs' replies are compared by their delays)."""
    names: dict[str, str] = {}

    def walk(x, key=""):
        if isinstance(x, dict):
            return {k: walk(v, k) for k, v in sorted(x.items()) if not (k.endswith("_ms") or k == "client_id")}
        if isinstance(x, list):
            return [walk(v) for v in x]
        if key in ("id", "game_id", "after") and isinstance(x, str):
            return names.setdefault(x, f"id{len(names)}")
        return x
    return [walk(f) for f in frames if f["type"] != "pong"]


def the_game(frames: list[dict]) -> list[dict]:
    """The frames from the game's first state to its reveal: the waiting room's counts before it
    depend on who joined first, and the frames after it on when the test stopped listening."""
    phases = [f.get("phase") if f["type"] == "state" else None for f in frames]
    start, end = phases.index("game"), phases.index("reveal")
    return frames[start:end + 1]


async def human_game(url: str, move: bool) -> tuple[list, list[dict], str]:
    """A two-player human game of three rounds; with `move` the interrogator moves the slider after
    every reply (twice). Returns the witness's normalised frames, the interrogator's, the game id."""
    with running(study(rules=BELIEF_RULES), url) as base:
        seats = await in_game(await players(base, 2))
        i, w = seats["interrogator"], seats["A"]
        for k, q in enumerate(QUESTIONS):
            await say(i, q)
            await w.next("message", text=q)
            await say(w, f"answer {k}", conv=None)
            reply = await i.next("message", text=f"answer {k}")
            if move:
                n = len(w.frames)
                await i.send({"type": "belief", "value": 30 + 10 * k, "after": reply["id"]})
                await i.send({"type": "belief", "value": 40 + 10 * k, "after": reply["id"]})
                await asyncio.sleep(0.4)
                assert len(w.frames) == n, w.frames[n:]  # nothing reached the witness
        await i.send({"type": "verdict", "choice": "human", "confidence": 70})
        st = await i.phase("reveal")
        await w.phase("reveal")
        return normalised(the_game(w.frames)), i.frames, st["game"]["game_id"]


async def test_belief_moves_are_stored_and_the_witness_frames_are_the_same_without_them(tmp_path):
    with_moves = f"sqlite:///{tmp_path / 'a.db'}"
    w_moved, i_frames, gid = await human_game(with_moves, move=True)
    w_plain, _, _ = await human_game(f"sqlite:///{tmp_path / 'b.db'}", move=False)
    assert w_moved == w_plain  # the blinding: the same frames, in the same order
    assert not [f for f in i_frames if f["type"] == "error"]
    with Store(with_moves) as store:
        log = store.events(gid)
    beliefs = [e for e in log if e.type == ev.BELIEF]
    assert [e.payload["value"] for e in beliefs] == [30, 40, 40, 50, 50, 60]
    for e in beliefs:  # each follows the witness reply it names, and comes after it
        reply = log[e.payload["after_seq"]]
        assert reply.type == ev.MESSAGE and reply.actor == "A" and reply.seq < e.seq
        assert e.actor == "interrogator" and e.conversation == "A"
    replies = [e.seq for e in log if e.type == ev.MESSAGE and e.actor == "A"]
    assert sorted({e.payload["after_seq"] for e in beliefs}) == replies
    verdict = next(e for e in log if e.type == ev.VERDICT)
    assert verdict.payload["choice"] == "human" and verdict.payload["confidence"] == 70
    # the interrogator's state after a reload shows the last move
    last = [f for f in i_frames if f["type"] == "state" and f["game"]][-1]
    assert last["game"]["belief"]["value"] == 60


async def test_ai_reply_delays_are_the_same_with_and_without_belief_moves(tmp_path):
    """An AI witness's reply comes after the same designed delay (seeded draws) either way."""
    async def delays(url: str, move: bool) -> list[int]:
        with running(study(ratio=0.0, witnesses=(ELIZA,), rules=BELIEF_RULES), url, seed=11) as base:
            (i,) = await players(base, 1)
            await i.phase("game", timeout=15)
            out = []
            for q in QUESTIONS:
                ack = await say(i, q)
                reply = await i.next("message", conv="A", **{"from": "them"})
                out.append(reply["t_ms"] - ack["t_ms"])
                if move:
                    await i.send({"type": "belief", "value": 80, "after": reply["id"]})
            await i.send({"type": "verdict", "choice": "ai", "confidence": 90})
            await i.phase("reveal")
            return out
    moved = await delays(f"sqlite:///{tmp_path / 'a.db'}", True)
    plain = await delays(f"sqlite:///{tmp_path / 'b.db'}", False)
    # the designed delay dominates (ELIZA answers at once); a commit's jitter is a few ms
    assert all(abs(a - b) <= 60 for a, b in zip(moved, plain)), (moved, plain)


async def test_belief_refusals_are_clear(sqlite_url, tmp_path):
    with running(study(rules=BELIEF_RULES), sqlite_url) as base:
        seats = await in_game(await players(base, 2))
        i, w = seats["interrogator"], seats["A"]
        ack = await say(i, "hi")
        await i.send({"type": "belief", "value": 50, "after": ack["id"]})  # its own message, not a reply
        assert (await i.next("error"))["code"] == "bad_belief"
        await i.send({"type": "belief", "value": 101, "after": ack["id"]})
        assert (await i.next("error"))["code"] == "bad_belief"
        await i.send({"type": "belief", "value": "50", "after": ack["id"]})
        assert (await i.next("error"))["code"] == "bad_belief"
        await w.send({"type": "belief", "value": 50, "after": ack["id"]})
        assert (await w.next("error"))["code"] == "not_interrogator"
    # a study without belief tracking refuses the frame (and the snapshot has no slider)
    with running(study(), f"sqlite:///{tmp_path / 'off.db'}") as base:
        seats = await in_game(await players(base, 2))
        i, w = seats["interrogator"], seats["A"]
        st = [f for f in i.frames if f["type"] == "state" and f["game"]][-1]
        assert st["game"]["belief"] is None
        await say(i, "hi")
        await say(w, "hello", conv=None)
        reply = await i.next("message", text="hello")
        await i.send({"type": "belief", "value": 50, "after": reply["id"]})
        err = await i.next("error")
        assert err["code"] == "bad_belief" and "does not track" in err["message"]


async def three_player_game(url: str, move: bool) -> tuple[list, str]:
    """A three-player game (two people and ELIZA); with `move` the interrogator moves the slider
    after every reply it is shown. Returns the human witness's normalised frames and the game id."""
    with running(study(fmt="three-player", witnesses=(ELIZA,), rules=BELIEF_RULES), url, seed=5) as base:
        seats = await in_game(await players(base, 2))
        i = seats["interrogator"]
        (hseat,) = [k for k in seats if k != "interrogator"]
        w, aseat = seats[hseat], "B" if hseat == "A" else "A"
        for k, q in enumerate(QUESTIONS[:2]):
            await say(i, q, conv=hseat)
            await say(i, q, conv=aseat)
            await w.next("message", text=q)
            await say(w, f"answer {k}", conv=None)
            for _ in range(200):  # both replies of this round, in whichever order they came
                got = [f for f in i.frames if f["type"] == "message" and f["from"] == "them"]
                if all(sum(f["conv"] == c for f in got) > k for c in (hseat, aseat)):
                    break
                await asyncio.sleep(0.05)
            for reply in [f for f in got if f["conv"] in (hseat, aseat)][2 * k:]:
                if move:
                    n = len(w.frames)
                    await i.send({"type": "belief", "value": 20 + 30 * k, "after": reply["id"]})
                    await asyncio.sleep(0.3)
                    assert len(w.frames) == n, w.frames[n:]
        await i.send({"type": "verdict", "choice": hseat, "confidence": 60})
        st = await i.phase("reveal")
        await w.phase("reveal")
        return normalised(the_game(w.frames)), st["game"]["game_id"]


async def test_three_player_witness_frames_are_the_same_with_and_without_belief_moves(tmp_path):
    url = f"sqlite:///{tmp_path / 'a.db'}"
    moved, gid = await three_player_game(url, True)
    plain, _ = await three_player_game(f"sqlite:///{tmp_path / 'b.db'}", False)
    assert moved == plain
    with Store(url) as store:
        log = store.events(gid)
    beliefs = [e for e in log if e.type == ev.BELIEF]
    assert [e.payload["value"] for e in beliefs] == [20, 20, 50, 50]
    assert {e.conversation for e in beliefs} == {"A", "B"}
    assert all(log[e.payload["after_seq"]].actor == e.conversation for e in beliefs)
