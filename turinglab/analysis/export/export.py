"""A versioned, pseudonymous dataset of one study: CSV + Parquet, codebook, report numbers,
the report itself and `rebuild.py`, which recomputes every number from the CSV files.

Every external id (participant ids, which are the participants' login tokens; tagger names) is
replaced by a keyed hash (turinglab/analysis/export/pseudonyms.py): the key is $TURINGLAB_EXPORT_KEY or
the database's own generated key, never in git. Raw Prolific ids, needed only for payment, are
in a separate, explicitly named file written by `payment_ids` (`turinglab export-payment-ids`).
"""

from __future__ import annotations

import json
import shutil
from importlib import resources
from pathlib import Path

import pandas as pd

from turinglab.analysis.live.belief import BELIEF_COLUMNS, analyse_beliefs
from turinglab.analysis.live.core import Analysis, Options, analyse
from turinglab.analysis.export.pseudonyms import PREFIX, export_key, keyed, pseudonymise
from turinglab.analysis.report.report import write_numbers, write_report
from turinglab.game import survey
from turinglab.analysis.live.schema import (
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
    "source": ("string", "Who wrote it: 'interrogator'; for a witness 'human' (a person), or for an AI witness "
                         "'model' (the model's first try), 'regenerated' (a later try after the content filter or "
                         "persona guard refused earlier ones), 'brush_off' (the persona's own deflection of a "
                         "machine task), 'fallback' (ELIZA or the configured fallback, e.g. the model failed or "
                         "was too slow), 'last_resort' (a fixed line when even the fallback was refused), "
                         "'unknown' (stored before sources were recorded)."),
}
PAYMENT_COLUMNS = {
    "participant_id": "the participant's pseudonym, as in the dataset",
    "prolific_pid": "RAW Prolific participant id", "prolific_study_id": "RAW Prolific study id",
    "prolific_session_id": "RAW Prolific session id", "duplicate_prolific_pid": "a second participant under a used PID",
    "consented": "consent given", "games": "games played in any seat",
}
WITNESS_COLUMNS = {
    "witness": ("string", "AI witness codename, as in judgements.witness (the study file's roster, played or not)."),
    "kind": ("string", "The witness's type in the study file (e.g. 'llm', 'eliza')."),
    "model": ("string", "The model the witness runs, if any."),
}
TABLES = {"judgements": JUDGEMENT_COLUMNS, "participants": PARTICIPANT_COLUMNS, "messages": MESSAGE_COLUMNS,
          "tags": TAG_COLUMNS, "witnesses": WITNESS_COLUMNS,
          "beliefs": BELIEF_COLUMNS}  # beliefs: the interrogators' slider moves (issue 29)


CONSENT_COLUMN = ("string", "The consent text the participant agreed to: the first 16 hex digits of its SHA-256 "
                  "(a changed text is a new version; empty: stored before versions were kept, or no consent).")
PAYMENT_FILE = "payment_ids_RAW.csv"
PSEUDONYMISATION = ("participant ids (the participants' login tokens) and tagger names are keyed hashes "
                    "(HMAC-SHA256 under the database's export key, $TURINGLAB_EXPORT_KEY or a key generated "
                    "and kept in the database, never in git): the same id has the same pseudonym in every table "
                    "and every export of this database, and without the key no id can be tested against one. "
                    "No raw external id is in this dataset: the raw Prolific participant, study and session ids, "
                    "needed only to pay people, are in the separate file " + PAYMENT_FILE + " written by "
                    "`turinglab export-payment-ids`, which joins them to these pseudonyms and must not be shared")


def codebook(study: str, options: Options, counts: dict[str, int], extra_flags: list[str],
             consent: dict[str, int] | None = None) -> dict:
    from turinglab import __version__

    tables = {}
    for name, cols in TABLES.items():
        tables[name] = {c: {"dtype": t, "description": d} for c, (t, d) in cols.items()}
    for c, (t, d) in OPTIONAL_JUDGEMENT_COLUMNS.items():
        tables["judgements"][c] = {"dtype": t, "description": d}
    for f in extra_flags:
        tables["judgements"][f] = {"dtype": "boolean", "description": f"Flag stored with the game: {f[5:]}."}
    tables["participants"]["consent_version"] = {"dtype": CONSENT_COLUMN[0], "description": CONSENT_COLUMN[1]}
    return {
        "dataset_version": EXPORT_VERSION, "turinglab_version": __version__, "study": study,
        "rows": counts,
        "pseudonymisation": PSEUDONYMISATION,
        "consent_versions": dict(consent or {}),  # version -> participants who agreed to it
        "raw_ids": {"file": PAYMENT_FILE, "written_by": "turinglab export-payment-ids", "columns": PAYMENT_COLUMNS,
                    "share": "never: for payment only"},
        "default_analysis": {"alpha": options.alpha, "exclude": list(options.exclude), "n_boot": options.n_boot,
                             "seed": options.seed},
        "files": {n: [f"{n}.csv", f"{n}.parquet"] for n in TABLES},
        "codes": {"chatbot_freq": list(survey.CHATBOT_USE), "llm_knowledge": list(survey.LLM_KNOWLEDGE)},
        "tables": tables,
    }


def codebook_md(cb: dict) -> str:
    lines = [f"# Codebook: {cb['study']}", "",
             f"Dataset version {cb['dataset_version']}, written by turinglab {cb['turinglab_version']}.", "",
             cb["pseudonymisation"] + ".", "",
             "Consent versions (participants per version of the consent text; `participants.consent_version`): "
             + (", ".join(f"{k}: {v}" for k, v in cb.get("consent_versions", {}).items()) or "none") + ".", "",
             "Redaction: " + cb.get("redaction", {}).get("method", "none") + (
                 " Placeholders per kind: " + ", ".join(f"{k} {v}" for k, v in cb["redaction"]["counts"].items()) + "."
                 if "counts" in cb.get("redaction", {}) else "."), "",
             "Every table is given as CSV and Parquet. `rebuild.py` recomputes every number of `report.html` "
             "from the CSV files (`python rebuild.py`) and compares them with `report_numbers.json`.", ""]
    for name, cols in cb["tables"].items():
        lines += [f"## {name} ({cb['rows'].get(name, 0)} rows)", "", "| column | type | description |", "|---|---|---|"]
        lines += [f"| `{c}` | {v['dtype']} | {v['description']} |" for c, v in cols.items()]
        lines.append("")
    return "\n".join(lines)


def export(loaded, out_dir: str | Path, options: Options | None = None, key: bytes | None = None, *,
           redact: bool = False, reviewed: dict[str, str] | None = None) -> dict:
    """Write the dataset of a `load.Loaded` study to `out_dir` (created; must be empty or absent).
    `key`: the export key (`pseudonyms.export_key(store)`); None: a random one, linking to nothing.
    `redact`: personal data in the free text replaced by placeholders (analysis/export/redaction.py),
    the review file written beside `out_dir`; `reviewed`: its decisions (id -> keep|redact)."""
    out = Path(out_dir)
    if out.exists() and any(out.iterdir()):
        raise FileExistsError(f"{out} is not empty; choose a new directory for the export")
    out.mkdir(parents=True, exist_ok=True)
    opt = options or Options(exclude=tuple(f for f in loaded.exclusions if "flag_" + f in loaded.judgements.columns),
                             pass_decisions=loaded.pass_decisions, language=loaded.language,
                             closed_criterion=loaded.closed_criterion)
    key = key or export_key()
    j = loaded.judgements.copy()
    for c in ("interrogator_id", "witness_participant_id"):
        j[c] = pseudonymise(j[c], key)
    p = loaded.participants.copy()
    p["participant_id"] = pseudonymise(p["participant_id"], key)
    if "consent_version" not in p.columns:
        p["consent_version"] = pd.Series(dtype="string")
    t = loaded.tags.copy()
    t["tagger"] = pseudonymise(t["tagger"], key, prefix=PREFIX["tagger"])
    m = loaded.messages.copy()
    w = pd.DataFrame([{"witness": x.codename, "kind": getattr(x.kind, "value", str(x.kind)), "model": x.model or ""} for x in loaded.witness_specs],
                     columns=list(WITNESS_COLUMNS))
    b = loaded.beliefs if loaded.beliefs is not None else pd.DataFrame(columns=list(BELIEF_COLUMNS))
    tables = {"judgements": j, "participants": p, "messages": m, "tags": t, "witnesses": w, "beliefs": b.copy()}
    redaction = None
    if redact:
        from turinglab.analysis.export.redaction import METHOD, redact_tables, review_path

        review, counts = redact_tables(tables, loaded.personas or {}, reviewed)
        review.to_csv(review_path(out), index=False)
        redaction = {"method": METHOD, "counts": counts, "reviewed": reviewed is not None,
                     "review_file": f"{review_path(out).name} (beside the dataset; holds the original words: never share it)"}
    for name, df in tables.items():
        df.to_csv(out / f"{name}.csv", index=False)
        df.to_parquet(out / f"{name}.parquet", index=False)
    # the report and its numbers, computed from exactly what was exported (read back from CSV)
    back = read_tables(out)
    a = analyse(back["judgements"], back["participants"], opt, tags=back["tags"], messages=back["messages"],
                witnesses=roster_specs(back["witnesses"]))
    a.beliefs = analyse_beliefs(a.judgements, back["messages"], back["beliefs"], back["tags"], alpha=opt.alpha)
    write_numbers(a, out / "report_numbers.json")
    write_report(a, out / "report.html")
    extra = [c for c in j.columns if c.startswith("flag_") and c not in JUDGEMENT_COLUMNS
             and c not in OPTIONAL_JUDGEMENT_COLUMNS]
    consent = p["consent_version"].fillna("none").value_counts().sort_index()
    cb = codebook(loaded.study_name, opt, {n: len(df) for n, df in tables.items()}, extra,
                  {str(k): int(v) for k, v in consent.items()})
    cb["redaction"] = redaction or {"method": "none: the free text is as typed (export with --redact to redact it)"}
    (out / "codebook.json").write_text(json.dumps(cb, indent=1))
    (out / "codebook.md").write_text(codebook_md(cb))
    for name in ("rebuild.py", "rebuild_more.py", "rebuild_glmm.py"):
        with resources.as_file(resources.files("turinglab.analysis.export").joinpath(name)) as path:
            shutil.copyfile(path, out / name)
    return {"out": str(out), "rows": cb["rows"], "analysis": a}


def read_tables(d: str | Path) -> dict[str, pd.DataFrame]:
    """Read an export's CSV files back with the codebook's dtypes."""
    d = Path(d)
    out = {}
    for name, cols in TABLES.items():
        f = d / f"{name}.csv"
        if not f.exists() and name == "witnesses":  # an export written before the roster was exported
            out[name] = pd.DataFrame({c: pd.Series(dtype="string") for c in cols})
            continue
        if not f.exists() and name == "beliefs":  # an export written before belief tracking
            out[name] = pd.DataFrame({c: pd.Series(dtype=t) for c, (t, _) in cols.items()})
            continue
        df = pd.read_csv(f, keep_default_na=False, na_values=[""])
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


def roster_specs(w: pd.DataFrame) -> tuple:
    """The exported roster as the study file's witness specs (codename, kind, model) that `analyse` reads."""
    from types import SimpleNamespace

    return tuple(SimpleNamespace(codename=str(r["witness"]), kind=str(r["kind"]),
                                 model=str(r["model"]) if pd.notna(r["model"]) else "") for r in w.to_dict("records"))


def analyse_export(d: str | Path, options: Options | None = None) -> Analysis:
    t = read_tables(d)
    return analyse(t["judgements"], t["participants"], options, tags=t["tags"], messages=t["messages"],
                   witnesses=roster_specs(t["witnesses"]))


def payment_ids(store, out_file: str | Path, study_id: int | None = None) -> int:
    """Write the RAW Prolific ids of the study's participants (for payment only), each beside its
    pseudonym in the dataset; returns the number of rows. Refuses to overwrite a file."""
    out = Path(out_file)
    if out.exists():
        raise FileExistsError(f"{out} exists; choose a new file for the raw ids")
    key = export_key(store)
    games = [g for g in store.games(study_id) if not (g.flags or {}).get("demo")]  # `serve --demo`: no payment
    played: dict[str, int] = {}
    for g in games:
        for pid in {g.interrogator_id, *(i.participant_id for i in g.seats.values())} - {None}:
            played[pid] = played.get(pid, 0) + 1
    rows = []
    for p in store.get_participants(sorted(played)):
        rows.append({"participant_id": keyed(p.id, key, PREFIX["participant"]), "prolific_pid": p.prolific_pid,
                     "prolific_study_id": p.prolific_study_id, "prolific_session_id": p.prolific_session_id,
                     "duplicate_prolific_pid": p.label == "duplicate_prolific_pid",
                     "consented": p.consent_ms is not None, "games": played[p.id]})
    pd.DataFrame(rows, columns=list(PAYMENT_COLUMNS)).to_csv(out, index=False)
    return len(rows)


def bonuses(store, study_id: int, per_game: float, per_correct: float) -> list[tuple[str, float]]:
    """Prolific bonuses of a study: (Prolific id, amount) per paid line (turinglab/store/payments.py)."""
    from turinglab.store.payments import payments

    return [(x.prolific_pid, x.cents / 100) for x in payments(store, study_id, per_game, per_correct).paid]


def bonus_csv(rows: list[tuple[str, float]]) -> str:
    """Prolific's bulk-bonus text, written and checked by turinglab/store/payments.py."""
    from turinglab.store.payments import Line, Payments, prolific_csv

    return prolific_csv(Payments([Line(pid, cents=round(amt * 100)) for pid, amt in rows], []))
