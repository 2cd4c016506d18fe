"""A versioned, pseudonymous dataset of one study: CSV + Parquet, codebook, report numbers,
the report itself and `rebuild.py`, which recomputes every number from the CSV files.

Participant ids are replaced by salted hashes; the salt is random per export and is not
written anywhere, so two exports cannot be linked to each other or to the database.
"""

from __future__ import annotations

import hashlib
import json
import secrets
import shutil
from importlib import resources
from pathlib import Path

import pandas as pd

from turinglab.analysis.core import Analysis, Options, analyse
from turinglab.analysis.report import write_numbers, write_report
from turinglab.analysis.schema import (
    JUDGEMENT_COLUMNS, OPTIONAL_JUDGEMENT_COLUMNS, PARTICIPANT_COLUMNS, TAG_COLUMNS,
)

EXPORT_VERSION = "1.0"
MESSAGE_COLUMNS = {
    "game_id": ("string", "Game identifier."),
    "seq": ("Int64", "Position of the event in the game's append-only log."),
    "t_ms": ("Int64", "Time the message was accepted, ms since the Unix epoch."),
    "actor": ("string", "'interrogator' or the witness seat ('A'/'B')."),
    "conversation": ("string", "The conversation (witness seat) the message belongs to."),
    "text": ("string", "Message text as sent (untrusted user text)."),
}
TABLES = {"judgements": JUDGEMENT_COLUMNS, "participants": PARTICIPANT_COLUMNS, "messages": MESSAGE_COLUMNS,
          "tags": TAG_COLUMNS}


def pseudonymise(values: pd.Series, salt: str, prefix: str = "P") -> pd.Series:
    def h(v):
        if pd.isna(v):
            return pd.NA
        return prefix + hashlib.sha256((salt + str(v)).encode()).hexdigest()[:16]

    uniq = {v: h(v) for v in pd.unique(values.dropna())}
    return values.map(uniq).astype("string")


def codebook(study: str, options: Options, counts: dict[str, int], extra_flags: list[str]) -> dict:
    from turinglab import __version__

    tables = {}
    for name, cols in TABLES.items():
        tables[name] = {c: {"dtype": t, "description": d} for c, (t, d) in cols.items()}
    for c, (t, d) in OPTIONAL_JUDGEMENT_COLUMNS.items():
        tables["judgements"][c] = {"dtype": t, "description": d}
    for f in extra_flags:
        tables["judgements"][f] = {"dtype": "boolean", "description": f"Flag stored with the game: {f[5:]}."}
    return {
        "dataset_version": EXPORT_VERSION, "turinglab_version": __version__, "study": study,
        "rows": counts,
        "pseudonymisation": "participant ids and tagger names are salted SHA-256 hashes; the salt was random and discarded",
        "default_analysis": {"alpha": options.alpha, "exclude": list(options.exclude), "n_boot": options.n_boot,
                             "seed": options.seed},
        "files": {n: [f"{n}.csv", f"{n}.parquet"] for n in TABLES},
        "tables": tables,
    }


def codebook_md(cb: dict) -> str:
    lines = [f"# Codebook: {cb['study']}", "",
             f"Dataset version {cb['dataset_version']}, written by turinglab {cb['turinglab_version']}.", "",
             cb["pseudonymisation"] + ".", "",
             "Every table is given as CSV and Parquet. `rebuild.py` recomputes every number of `report.html` "
             "from the CSV files (`python rebuild.py`) and compares them with `report_numbers.json`.", ""]
    for name, cols in cb["tables"].items():
        lines += [f"## {name} ({cb['rows'].get(name, 0)} rows)", "", "| column | type | description |", "|---|---|---|"]
        lines += [f"| `{c}` | {v['dtype']} | {v['description']} |" for c, v in cols.items()]
        lines.append("")
    return "\n".join(lines)


def export(loaded, out_dir: str | Path, options: Options | None = None, salt: str | None = None) -> dict:
    """Write the dataset of a `load.Loaded` study to `out_dir` (created; must be empty or absent)."""
    out = Path(out_dir)
    if out.exists() and any(out.iterdir()):
        raise FileExistsError(f"{out} is not empty; choose a new directory for the export")
    out.mkdir(parents=True, exist_ok=True)
    opt = options or Options(exclude=tuple(f for f in loaded.exclusions if "flag_" + f in loaded.judgements.columns),
                             pass_decisions=loaded.pass_decisions)
    salt = salt or secrets.token_hex(16)
    j = loaded.judgements.copy()
    for c in ("interrogator_id", "witness_participant_id"):
        j[c] = pseudonymise(j[c], salt)
    p = loaded.participants.copy()
    p["participant_id"] = pseudonymise(p["participant_id"], salt)
    t = loaded.tags.copy()
    t["tagger"] = pseudonymise(t["tagger"], salt, prefix="T")
    m = loaded.messages.copy()
    tables = {"judgements": j, "participants": p, "messages": m, "tags": t}
    for name, df in tables.items():
        df.to_csv(out / f"{name}.csv", index=False)
        df.to_parquet(out / f"{name}.parquet", index=False)
    # the report and its numbers, computed from exactly what was exported (read back from CSV)
    back = read_tables(out)
    a = analyse(back["judgements"], back["participants"], opt, tags=back["tags"])
    write_numbers(a, out / "report_numbers.json")
    write_report(a, out / "report.html")
    extra = [c for c in j.columns if c.startswith("flag_") and c not in JUDGEMENT_COLUMNS]
    cb = codebook(loaded.study_name, opt, {n: len(df) for n, df in tables.items()}, extra)
    (out / "codebook.json").write_text(json.dumps(cb, indent=1))
    (out / "codebook.md").write_text(codebook_md(cb))
    src = resources.files("turinglab.analysis").joinpath("rebuild.py")
    with resources.as_file(src) as path:
        shutil.copyfile(path, out / "rebuild.py")
    return {"out": str(out), "rows": cb["rows"], "analysis": a}


def read_tables(d: str | Path) -> dict[str, pd.DataFrame]:
    """Read an export's CSV files back with the codebook's dtypes."""
    d = Path(d)
    out = {}
    for name, cols in TABLES.items():
        df = pd.read_csv(d / f"{name}.csv", keep_default_na=False, na_values=[""])
        for c, (t, _) in cols.items():
            if c in df.columns:
                if t == "string":
                    df[c] = df[c].astype("string").fillna("") if c in ("reason", "text") else df[c].astype("string")
                elif t == "boolean":
                    df[c] = df[c].map({True: True, False: False, "True": True, "False": False}).astype("boolean")
                else:
                    df[c] = df[c].astype(t)
        for c in df.columns:
            if c.startswith("flag_"):
                df[c] = df[c].map({True: True, False: False, "True": True, "False": False}).fillna(False).astype(bool)
        out[name] = df
    return out


def analyse_export(d: str | Path, options: Options | None = None) -> Analysis:
    t = read_tables(d)
    return analyse(t["judgements"], t["participants"], options, tags=t["tags"])
