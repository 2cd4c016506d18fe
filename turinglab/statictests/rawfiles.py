"""Judge data as psiTurk and jsPsych store it, read into one shape: judges, each with their
answers to the questionnaire and their trials (flat dicts of the experiment's own fields).

psiTurk: the `participants` table (a CSV export of it, or the SQLite/any SQLAlchemy database
psiTurk writes), whose `datastring` column holds each participant's JSON (`workerId`,
`questiondata`, `data`: `[{current_trial, trialdata, ...}]`); or `psiturk download_datafiles`'
headerless `trialdata.csv` (uniqueid, current_trial, time, trialdata JSON) with `questiondata.csv`
(uniqueid, key, value) beside it. jsPsych: `jsPsych.data.get().json()` (a list of trial objects)
or `.csv()` (a header row, then one row per trial).

Worker, assignment and HIT ids and IP addresses are never kept: a judge is labelled by a keyed
pseudonym of their id (HMAC-SHA256 as `analysis.export.pseudonyms.keyed` makes it, key
$TURINGLAB_EXPORT_KEY, else a random key for this import), and only trial fields and questionnaire answers are returned.
"""

from __future__ import annotations

import csv
import hashlib
import hmac
import json
import os
import secrets
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from turinglab.statictests.zhang import ImportProblem

# fields that identify a person or a machine: never copied out of a record
PERSONAL = {"workerid", "workerId", "assignmentid", "assignmentId", "hitid", "hitId", "uniqueid", "ipaddress",
            "ip", "useragent", "browser", "platform"}


@dataclass
class RawJudge:
    label: str  # a pseudonym, never the source's id
    demographics: dict[str, Any] = field(default_factory=dict)
    trials: list[dict[str, Any]] = field(default_factory=list)


class Pseudonyms:
    """One keyed pseudonym per source id, the same within an import (and across imports when
    $TURINGLAB_EXPORT_KEY is set). The same HMAC as `analysis.export.pseudonyms.keyed` (written out
    here: statictests sits below analysis in the import layers, tests/test_imports.py)."""

    def __init__(self, prefix: str = "W") -> None:
        env = os.environ.get("TURINGLAB_EXPORT_KEY")
        self.key, self.prefix = (env.encode() if env else secrets.token_bytes(32)), prefix

    def __call__(self, value: str) -> str:
        return self.prefix + hmac.new(self.key, str(value).encode(), hashlib.sha256).hexdigest()[:16]


def _clean(d: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in d.items() if k not in PERSONAL}


def _csv_rows(path: Path) -> list[list[str]]:
    csv.field_size_limit(sys.maxsize)
    try:
        with path.open(encoding="utf-8", newline="") as fh:
            return list(csv.reader(fh))
    except (OSError, UnicodeDecodeError, csv.Error) as exc:
        raise ImportProblem(str(path), [f"cannot read CSV ({exc}); export the table as UTF-8 CSV"]) from None


def _is_sqlite(path: Path) -> bool:
    with path.open("rb") as fh:
        return fh.read(16) == b"SQLite format 3\x00"


def read_psiturk(source: str, table: str | None = None) -> list[RawJudge]:
    """psiTurk's participants table (CSV, SQLite file or SQLAlchemy URL) or trialdata.csv."""
    if "://" in source:
        return _from_datastrings(_db_datastrings(source, table), source)
    path = Path(source)
    if not path.is_file():
        raise ImportProblem(source, ["no such file; give psiTurk's participants table (CSV or database) or trialdata.csv"])
    if _is_sqlite(path):
        return _from_datastrings(_db_datastrings(f"sqlite:///{path.resolve()}", table), source)
    rows = _csv_rows(path)
    if rows and "datastring" in rows[0]:
        col = rows[0].index("datastring")
        return _from_datastrings([(n + 2, r[col] if col < len(r) else "") for n, r in enumerate(rows[1:])], source)
    return _from_trialdata(rows, path)


def _db_datastrings(url: str, table: str | None) -> list[tuple[int, str]]:
    """The datastrings of `table`, or of the one table with a datastring column (psiTurk's
    `table_name`, "turkdemo" in its default config)."""
    from sqlalchemy import MetaData, Table, create_engine, inspect, select
    from sqlalchemy.exc import SQLAlchemyError

    engine = create_engine(url)
    try:
        if table is None:
            found = [n for n in inspect(engine).get_table_names()
                     if any(c["name"] == "datastring" for c in inspect(engine).get_columns(n))]
            if len(found) != 1:
                raise ImportProblem(url, [f"{len(found)} tables with a 'datastring' column ({', '.join(found) or 'none'}); "
                                          "name psiTurk's participants table in a --map file (table: NAME)"])
            table = found[0]
        t = Table(table, MetaData(), autoload_with=engine)
        if "datastring" not in t.c:
            raise ImportProblem(url, [f"table {table!r} has no 'datastring' column; name psiTurk's participants "
                                      "table (map file: table: NAME)"])
        with engine.connect() as conn:
            return [(n + 1, v or "") for n, (v,) in enumerate(conn.execute(select(t.c.datastring)).all())]
    except SQLAlchemyError as exc:
        raise ImportProblem(url, [f"cannot read table {table!r} ({str(exc).splitlines()[0]}); name psiTurk's "
                                  "participants table (map file: table: NAME)"]) from None
    finally:
        engine.dispose()


def _from_datastrings(rows: list[tuple[int, str]], source: str) -> list[RawJudge]:
    """One judge per row with a datastring (rows without one never started the task)."""
    names, judges, problems = Pseudonyms(), [], []
    for row, text in rows:
        if not text.strip():
            continue
        try:
            d = json.loads(text)
        except json.JSONDecodeError as exc:
            problems.append(f"row {row}: field 'datastring' is not JSON ({exc.msg} at {exc.pos}); export the table again")
            continue
        if not isinstance(d, dict) or not isinstance(d.get("data"), list):
            problems.append(f"row {row}: field 'datastring' has no 'data' list; is this psiTurk's participants table?")
            continue
        who = d.get("workerId") or d.get("uniqueid") or f"row {row}"
        trials = [dict(x["trialdata"]) for x in d["data"] if isinstance(x, dict) and isinstance(x.get("trialdata"), dict)]
        q = d.get("questiondata") if isinstance(d.get("questiondata"), dict) else {}
        judges.append(RawJudge(names(str(who)), _clean(q), [_clean(t) for t in trials]))
    if problems:
        raise ImportProblem(source, problems)
    return judges


def _from_trialdata(rows: list[list[str]], path: Path) -> list[RawJudge]:
    """`psiturk download_datafiles`' trialdata.csv (and questiondata.csv beside it)."""
    names, by_id, problems = Pseudonyms(), {}, []
    for n, r in enumerate(rows, 1):
        if len(r) < 4:
            problems.append(f"row {n}: {len(r)} columns; trialdata.csv has uniqueid, current_trial, time, trialdata "
                            "(or give the participants table with its datastring column)")
            continue
        try:
            td = json.loads(r[3])
        except json.JSONDecodeError:
            problems.append(f"row {n}: column 4 (trialdata) is not JSON; export trialdata.csv again")
            continue
        if isinstance(td, dict):
            by_id.setdefault(r[0], RawJudge(names(r[0].split(":")[0]))).trials.append(_clean(td))
    q = path.with_name("questiondata.csv")
    if q.is_file():
        for r in _csv_rows(q):
            if len(r) >= 3 and r[0] in by_id and r[1] not in PERSONAL:
                by_id[r[0]].demographics[r[1]] = r[2]
    if problems:
        raise ImportProblem(str(path), problems)
    return list(by_id.values())


def read_jspsych(source: str, judge_field: str | None) -> list[RawJudge]:
    """jsPsych data (JSON list of trial objects, or CSV with a header), one judge per value of
    `judge_field` (one judge for the whole file when it is None)."""
    path = Path(source)
    if not path.is_file():
        raise ImportProblem(source, ["no such file; give jsPsych's data as JSON (.json()) or CSV (.csv())"])
    text = path.read_text(encoding="utf-8")
    if text.lstrip().startswith("["):
        try:
            records = json.loads(text)
        except json.JSONDecodeError as exc:
            raise ImportProblem(source, [f"cannot read JSON ({exc}); save jsPsych.data.get().json() as it is"]) from None
    else:
        rows = _csv_rows(path)
        records = [dict(zip(rows[0], r)) for r in rows[1:] if r] if rows else []
    if not records or not all(isinstance(r, dict) for r in records):
        raise ImportProblem(source, ["no trial objects; jsPsych data is a list of trials ({trial_type, trial_index, ...})"])
    names, by_id, problems = Pseudonyms(), {}, []
    for n, r in enumerate(records):
        who = r.get(judge_field) if judge_field else path.stem
        if who in (None, ""):
            problems.append(f"trial {r.get('trial_index', n)}: field {judge_field!r} is empty; every trial needs "
                            "the judge's id (jsPsych.data.addProperties)")
            continue
        by_id.setdefault(str(who), RawJudge(names(str(who)))).trials.append(
            {k: v for k, v in r.items() if k != judge_field and k not in PERSONAL})
    if problems:
        raise ImportProblem(source, problems)
    return list(by_id.values())
