"""The Jones & Bergen presets against the papers: the table in docs/protocol.md, a human witness's
message relayed as typed, per-game personas (drawn, stored, never sent) and both confidence scales
end to end over real websockets."""

from __future__ import annotations

import json
import re
import time
from pathlib import Path

import pytest
import yaml

from tests.server.live.test_server import FAST, RULES, ELIZA, in_game, players, running, say, study
from turinglab.game.config import Rules, Study, WitnessSpec
from turinglab.game.study_file import load_preset, parse_study
from turinglab.matchmaking.thompson import WitnessStats
from turinglab.store.api import Store
from turinglab.witnesses import persona, persona_draw
from turinglab.witnesses.base import Reply, Witness

DOC = Path(__file__).resolve().parents[2] / "docs" / "protocol.md"


def paper_table() -> list[tuple[str, str, object, object]]:
    """(preset, dotted setting, paper's value, preset's value) of every row of the doc's table."""
    text = DOC.read_text(encoding="utf-8")
    part = text.split("## Presets and the papers", 1)[1].split("\n## ", 1)[0]
    rows = []
    for line in part.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 5 and cells[0].startswith("jones-bergen"):
            val = lambda c: yaml.safe_load(c.strip("`"))  # noqa: E731
            rows.append((cells[0], cells[1].strip("`"), val(cells[2]), val(cells[4])))
    return rows


def setting(study_dump: dict, dotted: str):
    cur: object = study_dump
    for part in re.findall(r"[^.\[\]]+|\[\d+\]", dotted):
        cur = cur[int(part[1:-1])] if part.startswith("[") else cur[part]  # type: ignore[index]
    return cur


def test_each_preset_value_equals_the_papers_table():
    rows = paper_table()
    assert {p for p, *_ in rows} == {"jones-bergen-2023", "jones-bergen-2025"} and len(rows) >= 30
    dumps = {p: load_preset(p).model_dump(mode="json") for p in ("jones-bergen-2023", "jones-bergen-2025")}
    for preset, key, paper, shown in rows:
        got = setting(dumps[preset], key)
        assert got == paper, f"{preset} {key}: preset has {got!r}, the paper {paper!r}"
        assert shown == paper, f"{preset} {key}: the table's preset column says {shown!r}"
    # what issue 30 names, spelled out
    j23 = load_preset("jones-bergen-2023")
    assert j23.rules.human_witness_timing == "relay" and j23.allocation.thompson_floor == 0 and j23.persona_draw


def test_equalised_timing_and_the_floor_stay_study_settings():
    s = parse_study("preset: jones-bergen-2023\nname: x\nrules: {human_witness_timing: equalised}\n"
                    "allocation: {thompson_floor: 0.2}\n")
    assert s.rules.human_witness_timing == "equalised" and s.allocation.thompson_floor == 0.2
    with pytest.raises(ValueError, match="human_witness_timing"):
        parse_study("name: x\nrules: {human_witness_timing: held}\n")
    with pytest.raises(ValueError, match="confidence_min .* below confidence_max"):
        Rules(confidence_min=100, confidence_max=0)


async def _human_reply_delay(base: str, text: str) -> tuple[float, dict]:
    seats = await in_game(await players(base, 2))
    i, w = seats["interrogator"], seats["A"]
    await say(i, "hi, who is this?")
    await w.next("message")
    t0 = time.monotonic()
    await say(w, text, conv=None)
    shown = await i.next("message", timeout=30)
    return time.monotonic() - t0, shown


async def test_a_human_witness_message_reaches_the_interrogator_as_typed_under_the_2023_preset(sqlite_url, tmp_path):
    typed = "  hey, it's me… just typing   on my phone :) "
    relay = parse_study("preset: jones-bergen-2023\nname: relay-test\nallocation: {human_ratio: 1.0}\n")
    with running(relay, sqlite_url, human_timing="study") as base:
        took, shown = await _human_reply_delay(base, typed)
    assert shown["text"] == typed and shown["from"] == "them"
    assert took < 1.0, took  # no hold: the paper relayed human messages (typing indicator: 2-5 s)
    # the equalised hold as a study setting: the same message waits for 1 + 0.3 n + Gamma seconds
    held = parse_study("preset: jones-bergen-2023\nname: held-test\nallocation: {human_ratio: 1.0}\n"
                       "rules: {human_witness_timing: equalised, human_witness_delay: "
                       "{base_s: 1.0, s_per_char: 0.05, gamma_shape: 1.0, gamma_scale: 0.01}}\n")
    with running(held, f"sqlite:///{tmp_path}/held.db", human_timing="study") as base:
        took2, shown2 = await _human_reply_delay(base, typed)
    assert shown2["text"] == typed
    assert took2 >= 1.0 + 0.05 * len(typed) - 0.2, took2


class PromptWitness(Witness):
    """Fills the shipped prompt with the persona it was built with, and answers plainly."""

    codename, kind = "Gpt", "llm"
    built: list["PromptWitness"] = []

    def __init__(self, spec: WitnessSpec, seed: int) -> None:
        self.spec, self.seed, self.prompt = spec, seed, ""
        PromptWitness.built.append(self)

    async def start(self, ctx):
        self.prompt = persona.render("young", self.spec.persona, ctx)

    async def reply(self, history, ctx):
        return Reply(text="not much, just chilling at home")


async def test_personas_are_drawn_per_game_stored_and_never_sent(sqlite_url):
    PromptWitness.built.clear()
    gpt = WitnessSpec(codename="Gpt", kind="llm", model="m", base_url="http://127.0.0.1:9/v1", timing=FAST,
                      persona={"age": 23})
    s = study(ratio=0.0, witnesses=(gpt,), persona_draw=True)
    games = []
    with running(s, sqlite_url, witness_factory=lambda spec, seed: PromptWitness(spec, seed)) as base:
        for _ in range(3):
            (i,) = await players(base, 1)
            await i.phase("game")
            await say(i, "what are you up to")
            await i.next("message")
            await i.send({"type": "verdict", "choice": "ai", "confidence": 60})
            st = await i.phase("reveal")
            games.append((st["game"]["game_id"], i))
    played = [w for w in PromptWitness.built if w.prompt]  # the first one was the start-up check
    assert len(played) == 3
    with Store(sqlite_url) as store:
        for (gid, i), w in zip(games, played):
            drawn = persona_draw.draw(w.seed, age=23)
            (start,) = [e for e in store.events(gid) if e.type == "game_started"]
            assert start.payload["personas"] == {"A": drawn}  # stored with the game
            assert drawn["age"] == 23 and w.spec.persona == drawn  # the drawn fields fill the witness's persona
            assert f"You are {drawn['name']}, a 23-year-old from {drawn['city']}, the US" in w.prompt
            wire = json.dumps(i.frames)
            for value in (drawn["city"], drawn["timezone"]):
                assert value not in wire  # nothing of the persona reaches the interrogator
            assert not re.search(rf"\b{re.escape(drawn['name'])}\b", wire)
    assert len({persona_draw.draw(w.seed, age=23)["name"] + persona_draw.draw(w.seed, age=23)["city"]
                for w in played}) > 1


def test_persona_draws_follow_the_data_files():
    cities = persona_draw.cities()
    assert all(c["timezone"].startswith(("America/", "Pacific/")) for c in cities)
    n = 20000
    draws = [persona_draw.draw(s) for s in range(n)]
    share = sum(d["city"] == "New York, NY" for d in draws) / n
    p = persona_draw.city_probabilities()[0]
    assert abs(share - p) < 4 * (p * (1 - p) / n) ** 0.5  # weighted by population
    by_city = {f"{c['city']}, {c['state']}": c for c in cities}
    for d in draws[:500]:  # time zone and languages come from the city
        c = by_city[d["city"]]
        assert d["timezone"] == c["timezone"] and d["languages"] == c["languages"] and "English" in d["languages"]
    assert persona_draw.draw(7) == persona_draw.draw(7)


def test_thompson_weight_is_the_place_on_the_scale_or_the_distance_on_a_directional_one():
    s = WitnessStats.for_codenames(["X"])
    s.record("X", True, -40, (-100, 100))  # directional: 40 of the way towards "A is the human"
    s.record("X", False, 100, (-100, 100))
    s.record("X", True, 70)
    s.record("X", False, 30, (0, 100))
    t = s.tallies["X"]
    assert t.wins == pytest.approx(0.4 + 0.7) and t.losses == pytest.approx(1.0 + 0.3) and t.games == 4
    with pytest.raises(ValueError, match=r"-100\.\.100"):
        s.record("X", True, -101, (-100, 100))
    directional = Rules(confidence_min=-100, confidence_max=100)
    assert directional.directional and not Rules().directional
    assert [directional.confidence_weight(c) for c in (-100, -50, 0, 25, 100)] == [1.0, 0.5, 0.0, 0.25, 1.0]


@pytest.mark.parametrize("lo,hi,said", [(0, 100, 70), (-100, 100, -40)])
async def test_both_confidence_scales_work_end_to_end(sqlite_url, lo, hi, said):
    rules = RULES.model_copy(update={"confidence_min": lo, "confidence_max": hi})
    with running(study(ratio=0.0, witnesses=(ELIZA,), rules=rules), sqlite_url) as base:
        (i,) = await players(base, 1)
        await i.phase("game")
        await say(i, "I feel sad today")
        await i.next("message")
        # on the directional scale "human" needs a confidence above 0 (0 and the AI side are refused)
        wrong_side = (0, -40) if lo < 0 else ()
        for bad in (lo - 1, hi + 1, 10**7, 2.5, "50", *wrong_side):
            await i.send({"type": "verdict", "choice": "human", "confidence": bad})
            err = await i.next("error")
            assert err["code"] == "bad_verdict", (bad, err)
        choice = "ai" if said < 0 else "human"
        await i.send({"type": "verdict", "choice": choice, "confidence": said})
        st = await i.phase("reveal")
        assert st["game"]["reveal"] == {"seats": {"A": {"kind": "ai", "witness": "Eliza", "about": "ELIZA chatbot"}},
                                        "correct": choice == "ai"}
        assert st["game"]["verdict"]["confidence"] == said
        assert not [f for f in i.frames if f["type"] == "error" and f["code"] == "server_error"]
        async with __import__("httpx").AsyncClient(base_url=base) as c:
            page = (await c.get(f"/p/{i.pid}")).text
        assert f'min="{lo}" max="{hi}"' in page  # the slider runs over the study's scale
    with Store(sqlite_url) as store:
        (g,) = store.games()
        assert g.verdict.confidence == said


def test_survey_after_last_needs_session_rounds():
    assert load_preset("jones-bergen-2025").survey_after == "last"
    assert load_preset("jones-bergen-2023").survey_after == "first"
    with pytest.raises(ValueError, match="survey_after: last needs allocation.session_rounds"):
        Study(name="x", survey_after="last")
