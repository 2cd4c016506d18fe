"""`turinglab export --redact` (issue 38.3): the dataset's chat text, verdict reasons and free-text
survey answers with personal data replaced by typed placeholders (turinglab/witnesses/redact.py).

Every span found is a row of the review file (`REVIEW_COLUMNS`, with 40 characters of context
either side), written beside the export, never inside it: it holds the original words. A
researcher sets `decision` to `keep` or `redact` on each row and exports again with
`--redactions FILE`: a span whose row says `keep` stays; every other span found is redacted.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from turinglab.witnesses.redact import PLACEHOLDERS, apply, find

REVIEW_COLUMNS = ["id", "table", "row", "column", "kind", "original", "placeholder", "context", "decision"]
FREE_TEXT = {"messages": ["text"], "judgements": ["reason"], "participants": ["gender", "education"]}
CONTEXT = 40
METHOD = ("Personal data in messages.text, judgements.reason and the free-text participant answers "
          "(gender, education) is replaced by typed placeholders: [EMAIL], [PHONE] and [HANDLE] found by "
          "the live content filter's detectors (an address parser, libphonenumber via `phonenumbers`, handle "
          "cues), [PLACE] for street addresses, postcodes, US cities of the 2020 Census list and capitalised "
          "words after a place cue ('I live in', 'from'), [NAME] for first names of the SSA list written with a "
          "capital and words after a naming cue ('my name is', 'call me', 'I'm' + a capital), [NUMBER] for runs "
          "of five digits or more (or four that are not a year). The AI witnesses' drawn persona names and "
          "towns are not personal data: they are kept. Automatic redaction misses some personal data and "
          "hides some ordinary words (see docs/rights.md for the measured recall and false-redaction rate)")


def read_review(path: str | Path) -> dict[str, str]:
    """id -> decision of a reviewed file; a bad file is a ValueError saying what to fix."""
    df = pd.read_csv(path, dtype=str, keep_default_na=False)
    missing = [c for c in ("id", "decision") if c not in df.columns]
    if missing:
        raise ValueError(f"{path}: the review file needs the columns id and decision (missing: {', '.join(missing)})")
    bad = sorted(set(df["decision"].str.strip().str.lower()) - {"keep", "redact"})
    if bad:
        raise ValueError(f"{path}: decision must be keep or redact, not {', '.join(map(repr, bad))}")
    return dict(zip(df["id"], df["decision"].str.strip().str.lower()))


def redact_tables(tables: dict[str, pd.DataFrame], personas: dict[str, tuple[str, ...]],
                  reviewed: dict[str, str] | None = None) -> tuple[pd.DataFrame, dict[str, int]]:
    """Redact the free-text columns of `tables` in place; the review rows and the counts per kind."""
    rows: list[dict[str, str]] = []
    counts = {k: 0 for k in [*PLACEHOLDERS, "persona"]}
    seen: set[str] = set()
    for name, cols in FREE_TEXT.items():
        df = tables[name]
        for col in cols:
            if col not in df.columns:
                continue
            new = []
            for i, r in enumerate(df.to_dict("records")):
                text = r[col]
                if not isinstance(text, str) or not text:
                    new.append(text)
                    continue
                key = _row_key(name, r, i)
                spans = find(text, personas.get(str(r.get("game_id")), ()))
                chosen = []
                for x in spans:
                    sid = f"{name}:{key}:{col}:{x.start}"
                    decision = "keep" if x.kept else "redact"
                    if reviewed is not None and sid in reviewed:
                        decision = reviewed[sid]
                    if decision == "keep" and not x.kept:
                        x = type(x)(x.start, x.end, x.kind, x.text, kept=True)
                    chosen.append(x)
                    if sid not in seen:  # a three-player reason is in two rows: counted once
                        seen.add(sid)
                        counts[x.kind] += 1
                        rows.append({"id": sid, "table": name, "row": key, "column": col, "kind": x.kind,
                                     "original": x.text, "placeholder": x.placeholder,
                                     "context": text[max(0, x.start - CONTEXT):x.end + CONTEXT], "decision": decision})
                new.append(apply(text, chosen) if chosen else text)
            df[col] = pd.Series(new, index=df.index, dtype=df[col].dtype)
    return pd.DataFrame(rows, columns=REVIEW_COLUMNS), counts


def _row_key(table: str, r: dict, i: int) -> str:
    if table == "messages":
        return f"{r['game_id']}/{r['seq']}"
    if table == "judgements":
        return str(r["game_id"])
    return str(r.get("participant_id", i))


def review_path(out: Path) -> Path:
    """Where the review file goes: beside the export directory, not in it (it holds the originals)."""
    return out.parent / f"{out.name}.redactions_REVIEW.csv"
