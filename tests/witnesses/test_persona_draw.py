"""Per-game persona draws are coherent: the name fits the age, the prompt follows the country."""

from __future__ import annotations

from collections import Counter
from datetime import datetime, timezone

from turinglab.witnesses import persona, persona_draw
from turinglab.witnesses.base import GameContext
from turinglab.witnesses.guard import task

YEAR = 2026


def _share(name: str, born: int) -> float:
    """The name's share of its sex's births in `born`, read from the SSA table itself."""
    rows = [ln.split("\t") for ln in persona_draw.BY_YEAR_FILE.read_text().splitlines()
            if ln and not ln.startswith(("#", "year"))]
    return max((int(c) / int(t) for y, n, _s, c, t in rows if int(y) == born and n == name), default=0.0)


def test_a_drawn_age_lies_in_its_names_birth_cohort():
    draws = [persona_draw.draw(s, year=YEAR) for s in range(600)]
    ages = Counter(d["age"] for d in draws)
    assert set(ages) == set(range(persona_draw.AGES[0], persona_draw.AGES[1] + 1))  # every age drawn
    for d in draws:
        # born this year or the one before (birthday passed or not): the name was given to at least
        # 1 in 1000 babies of its sex in one of the two years
        assert max(_share(d["name"], YEAR - d["age"]), _share(d["name"], YEAR - d["age"] - 1)) >= 0.001, d
    # names of another generation never come with the young ages, and do with old ones
    old_names = {"Betty", "Dorothy", "Shirley", "Barbara", "Linda", "Deborah", "Gary", "Larry"}
    assert not old_names & {d["name"] for d in draws}
    aged = {persona_draw.draw(s, age=70, year=YEAR)["name"] for s in range(300)}
    assert {"Linda", "Deborah", "Gary"} & aged and not {"Madison", "Jayden", "Brianna"} & aged
    assert {d["sex"] for d in draws} == {"M", "F"}


def test_a_given_age_is_kept_and_the_name_drawn_for_it():
    d = persona_draw.draw(11, age=45, year=YEAR)
    assert d["age"] == 45 and _share(d["name"], YEAR - 45) + _share(d["name"], YEAR - 46) > 0.001
    assert persona_draw.draw(11, age=45, year=YEAR) == d  # reproducible from the seed
    # the city draw does not depend on the age: a study that fixes the age keeps its cities
    assert persona_draw.draw(11, age=45, year=YEAR)["city"] == persona_draw.draw(11, year=YEAR)["city"]


def _prompt(p: dict) -> str:
    now = datetime(2026, 11, 28, 12, tzinfo=timezone.utc)
    return persona.render("young", p, GameContext(game_id="g", started_at=now, now=now, time_limit_s=300,
                                                  max_chars=300))


def test_the_example_chat_follows_the_personas_country_and_the_persona_comes_after_it():
    us = _prompt(persona_draw.draw(3, year=YEAR))
    uk = _prompt({})  # the default persona: Jamie from Manchester
    fixed_us, shots_us, after_us = persona.split_examples(us)
    fixed_uk, shots_uk, _ = persona.split_examples(uk)
    said_us = " ".join(you for _, you in shots_us) + fixed_us
    said_uk = " ".join(you for _, you in shots_uk) + fixed_uk
    for british in ("flat", "maths", "sofa", "films", "mate"):
        assert f" {british}" not in said_us
    assert "flat" in said_uk and "maths" in said_uk and "apartment" in said_us and "math " in said_us
    # everything before the persona is the same in every US game (the prompt cache's shared part)
    other = persona_draw.draw(4, year=YEAR)
    fixed2, shots2, after2 = persona.split_examples(_prompt(other))
    assert (fixed2, shots2) == (fixed_us, shots_us) and after2 != after_us
    assert f"You are {other['name']}, a {other['age']}-year-old from {other['city']}, the US" in after2
    assert other["name"] not in fixed2


def test_the_brush_offs_follow_the_personas_english():
    us = {task.deflection(k, f"q{i}", i, english="us") for k in task.DEFLECTIONS for i in range(40)}
    uk = {task.deflection(k, f"q{i}", i) for k in task.DEFLECTIONS for i in range(40)}
    assert not any("maths" in x or "mate" in x or "on about" in x for x in us)
    assert any("maths" in x for x in uk) and any("math " in x + " " for x in us)
    assert persona.english("the US") == persona.english("United States") == "us" and persona.english("the UK") == "uk"
