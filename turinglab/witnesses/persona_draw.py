"""Per-game persona draws (Jones & Bergen): a name, an age and a US city for each game.

Jones & Bergen appended to every AI witness's prompt, at the start of each game, a name drawn
from common US names and a US city weighted by traffic and time zone, with the languages
spoken. `draw` does that from a seed (the game's seat seed, so a game's persona is
reproducible), keeping the name and the age coherent: the age is drawn uniformly from `AGES`
(or given, when the witness's persona fixes it), the birth year follows from the game's year,
and the name is drawn from that birth year's most common names in proportion to their counts
(`persona_data/us_names_by_year.tsv`, SSA data), so a 20-year-old is an Emily or a Jacob, not
a Betty. The city is drawn with probability proportional to its `weight` from
`persona_data/us_cities.tsv`; the time zone and languages come from the city's row. The files'
headers name their sources. The persona is stored with the game (the `game_started` event)
and never sent to a player.
"""

from __future__ import annotations

import csv
import functools
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import numpy as np

DATA = Path(__file__).parent / "persona_data"
BY_YEAR_FILE = DATA / "us_names_by_year.tsv"
CITIES_FILE = DATA / "us_cities.tsv"
AGES = (18, 30)  # drawn uniformly, both included: the shipped personas are young (a student or a first job)
# a study in another language draws from its country's files (issue 39); English: the US files
COUNTRIES = {"en": "the US", "de": "Germany", "es": "Spain"}


def files_for(language: str = "en") -> dict[str, str]:
    """`draw`'s files and country for a study's language: the language's names (a plain list, no birth
    years) and cities where shipped, else the US ones (names by birth year)."""
    lang = language.split("-")[0].lower()
    n, c = DATA / f"{lang}_names.tsv", DATA / f"{lang}_cities.tsv"
    if lang in COUNTRIES and lang != "en" and n.is_file() and c.is_file():
        return {"names_path": str(n), "cities_path": str(c), "country": COUNTRIES[lang]}
    return {"names_path": str(BY_YEAR_FILE), "cities_path": str(CITIES_FILE), "country": COUNTRIES["en"]}


class PersonaDataError(ValueError):
    """A names or cities file that cannot be used."""


def _rows(path: Path) -> list[dict[str, str]]:
    try:
        lines = [ln for ln in path.read_text(encoding="utf-8").splitlines() if ln.strip() and not ln.startswith("#")]
    except OSError as exc:
        raise PersonaDataError(f"{path}: cannot read ({exc.strerror})") from None
    return list(csv.DictReader(lines, delimiter="\t"))


@functools.lru_cache(maxsize=8)
def cities(path: str = str(CITIES_FILE)) -> tuple[dict[str, Any], ...]:
    out = []
    for i, r in enumerate(_rows(Path(path)), 1):
        try:
            w = float(r["weight"])
            row = {"city": r["city"].strip(), "state": r["state"].strip(), "timezone": r["timezone"].strip(),
                   "weight": w, "languages": [x.strip() for x in r["languages"].split(";") if x.strip()]}
        except (KeyError, AttributeError, ValueError):
            raise PersonaDataError(f"{path}: row {i} needs city, state, timezone, weight (a number) and "
                                   "languages (separated by ;)") from None
        if w <= 0 or not row["languages"]:
            raise PersonaDataError(f"{path}: row {i} ({row['city']}) needs a positive weight and a language")
        out.append(row)
    if not out:
        raise PersonaDataError(f"{path}: no cities")
    return tuple(out)


@functools.lru_cache(maxsize=8)
def _has_years(path: str) -> bool:
    rows = _rows(Path(path))
    return bool(rows) and "year" in rows[0]


@functools.lru_cache(maxsize=8)
def names(path: str) -> tuple[str, ...]:
    """The names of a plain list (a `name` column), drawn from evenly."""
    out = tuple(r["name"].strip() for r in _rows(Path(path)) if (r.get("name") or "").strip())
    if not out:
        raise PersonaDataError(f"{path}: no names; give a tab-separated file with a `name` column")
    return out


def name_sexes(path: str) -> tuple[str, ...]:
    """The `sex` column (M or F, else "") of a plain list, in the order of `names`."""
    return tuple((r.get("sex") or "").strip().upper() for r in _rows(Path(path)) if (r.get("name") or "").strip())


@functools.lru_cache(maxsize=8)
def names_by_year(path: str = str(BY_YEAR_FILE)) -> dict[int, tuple[tuple[str, ...], tuple[str, ...], np.ndarray]]:
    """birth year -> (names, sexes, probabilities): a name's share among the year's listed names."""
    rows: dict[int, list[tuple[str, str, int]]] = {}
    for i, r in enumerate(_rows(Path(path)), 1):
        try:
            y, name, sex, n = int(r["year"]), r["name"].strip(), r["sex"].strip().upper(), int(r["count"])
        except (KeyError, AttributeError, ValueError):
            raise PersonaDataError(f"{path}: row {i} needs year, name, sex and count (whole numbers)") from None
        if not name or sex not in ("M", "F") or n <= 0:
            raise PersonaDataError(f"{path}: row {i} needs a name, sex M or F and a positive count")
        rows.setdefault(y, []).append((name, sex, n))
    if not rows:
        raise PersonaDataError(f"{path}: no names; give a tab-separated file with year, name, sex, count")
    out = {}
    for y, rs in rows.items():
        w = np.array([n for _, _, n in rs], dtype=float)
        out[y] = (tuple(x[0] for x in rs), tuple(x[1] for x in rs), w / w.sum())
    return out


def city_probabilities(path: str = str(CITIES_FILE)) -> np.ndarray:
    w = np.array([c["weight"] for c in cities(path)], dtype=float)
    return w / w.sum()


def draw(seed: int, *, age: int | None = None, year: int | None = None, names_path: str = str(BY_YEAR_FILE),
         cities_path: str = str(CITIES_FILE), country: str = "the US") -> dict[str, Any]:
    """The persona of one game: name (with its sex), age, city (with its state), country, time
    zone, languages. `age`: keep this age and draw the name for it (else drawn from `AGES`);
    `year`: the game's year (default: this year, UTC), which turns the age into a birth year.
    A names file without birth years (another country's list, `files_for`) is drawn from evenly."""
    rng = np.random.default_rng([seed, 0x9E55])  # its own stream: the seat's other draws stay as they were
    cs = cities(cities_path)
    c = cs[int(rng.choice(len(cs), p=city_probabilities(cities_path)))]
    drawn_age = int(rng.integers(AGES[0], AGES[1] + 1))  # drawn even when given: the stream stays the same
    age = drawn_age if age is None else int(age)
    born = (year or datetime.now(timezone.utc).year) - age - int(rng.integers(2))  # birthday passed or not
    if _has_years(names_path):
        years = names_by_year(names_path)
        ns, sexes, p = years[min(years, key=lambda y: (abs(y - born), y))]  # the nearest year the file has
        k = int(rng.choice(len(ns), p=p))
        name, sex = ns[k], sexes[k]
    else:
        ns, sexes = names(names_path), name_sexes(names_path)
        k = int(rng.integers(len(ns)))
        name, sex = ns[k], sexes[k]
    return {"name": name, "sex": sex, "age": age, "city": f"{c['city']}, {c['state']}", "country": country,
            "timezone": c["timezone"], "languages": list(c["languages"])}
