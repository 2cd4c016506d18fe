"""Per-game persona draws (Jones & Bergen): a name and a US city for each game.

Jones & Bergen appended to every AI witness's prompt, at the start of each game, a name drawn
from the 100 most common US names and a US city weighted by traffic and time zone, with the
languages spoken. `draw` does that from a seed (the game's seat seed, so a game's persona is
reproducible): a name uniformly from `persona_data/us_names.tsv`, a city with probability
proportional to its `weight` from `persona_data/us_cities.tsv`; the time zone and languages
come from the city's row. The files' headers name their sources. The persona is stored with
the game (the `game_started` event) and never sent to a player.
"""

from __future__ import annotations

import csv
import functools
from pathlib import Path
from typing import Any

import numpy as np

DATA = Path(__file__).parent / "persona_data"
NAMES_FILE = DATA / "us_names.tsv"
CITIES_FILE = DATA / "us_cities.tsv"
# a study in another language draws from its country's files (issue 39); English: the US files
COUNTRIES = {"en": "the US", "de": "Germany", "es": "Spain"}


def files_for(language: str = "en") -> tuple[str, str, str]:
    """(names file, cities file, country) of a study's language; the US ones when it has none."""
    lang = language.split("-")[0].lower()
    n, c = DATA / f"{lang}_names.tsv", DATA / f"{lang}_cities.tsv"
    if lang in COUNTRIES and lang != "en" and n.is_file() and c.is_file():
        return str(n), str(c), COUNTRIES[lang]
    return str(NAMES_FILE), str(CITIES_FILE), COUNTRIES["en"]


class PersonaDataError(ValueError):
    """A names or cities file that cannot be used."""


def _rows(path: Path) -> list[dict[str, str]]:
    try:
        lines = [ln for ln in path.read_text(encoding="utf-8").splitlines() if ln.strip() and not ln.startswith("#")]
    except OSError as exc:
        raise PersonaDataError(f"{path}: cannot read ({exc.strerror})") from None
    return list(csv.DictReader(lines, delimiter="\t"))


@functools.lru_cache(maxsize=8)
def names(path: str = str(NAMES_FILE)) -> tuple[str, ...]:
    out = tuple(r["name"].strip() for r in _rows(Path(path)) if (r.get("name") or "").strip())
    if not out:
        raise PersonaDataError(f"{path}: no names; give a tab-separated file with a `name` column")
    return out


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


def city_probabilities(path: str = str(CITIES_FILE)) -> np.ndarray:
    w = np.array([c["weight"] for c in cities(path)], dtype=float)
    return w / w.sum()


def draw(seed: int, names_path: str = str(NAMES_FILE), cities_path: str = str(CITIES_FILE),
         country: str = "the US") -> dict[str, Any]:
    """The persona of one game: name, city (with its state), country, time zone, languages."""
    rng = np.random.default_rng([seed, 0x9E55])  # its own stream: the seat's other draws stay as they were
    ns = names(names_path)
    cs = cities(cities_path)
    name = ns[int(rng.integers(len(ns)))]
    c = cs[int(rng.choice(len(cs), p=city_probabilities(cities_path)))]
    return {"name": name, "city": f"{c['city']}, {c['state']}", "country": country,
            "timezone": c["timezone"], "languages": list(c["languages"])}
