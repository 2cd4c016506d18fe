"""The tidy tables every analysis reads, with a description of every column.

`judgements`: one row per (game, witness seat) judgement. A two-player game has one
row; a three-player game has two (seats A and B), whose `judged_human` are
complementary because the verdict is a forced choice.

`participants`: one row per participant, with the demographics the study collected.

The descriptions here are also the export's codebook, so keep them exact.
"""

from __future__ import annotations

import pandas as pd

FLAG_PREFIX = "flag_"
KNOWN_FLAGS = ("three_previous_ai", "three_previous_ai_interrogated", "knows_witness", "fallback_wrote_reply")

# who wrote an AI witness's reply (game/events.py SOURCES; analysis/live/sources.py)
AI_SOURCES = ("model", "regenerated", "brush_off", "fallback", "last_resort", "unknown")

REPLY_COLUMNS: dict[str, tuple[str, str]] = {
    "witness_replies": ("Int64", "Messages the witness in this seat wrote in its conversation."),
    **{f"replies_{s}": ("Int64", f"Of these, replies whose source is '{s}' (see messages.source).")
       for s in AI_SOURCES},
    "fallback_share": ("float64", "replies_fallback / witness_replies (empty without replies): the share of the "
                                  "witness's replies the fallback (ELIZA or the configured one) wrote."),
}
FLAG_DESCRIPTION = ("Exclusion flag: the fallback wrote at least one AI reply in this game (the game tested the "
                    "fallback as much as the witness); a study excludes such games by listing it in `exclusions`.")


# column -> (dtype, description)
JUDGEMENT_COLUMNS: dict[str, tuple[str, str]] = {
    "game_id": ("string", "Game identifier (as stored)."),
    "study": ("string", "Study name."),
    "format": ("string", "'two-player' or 'three-player'."),
    "interrogator_id": ("string", "The interrogator (a participant id; pseudonymous in exports)."),
    "game_index": ("Int64", "1 for the interrogator's first game, 2 for the second, ... (by start time)."),
    "seat": ("string", "Witness seat judged in this row: 'A' (or 'B' in three-player)."),
    "witness_kind": ("string", "'human' or 'ai': the truth about the witness in this seat."),
    "witness": ("string", "Witness codename for AI witnesses; 'Human' for human witnesses."),
    "witness_participant_id": ("string", "Participant id of a human witness (pseudonymous in exports); empty for AI."),
    "judged_human": ("boolean", "True if the interrogator's verdict said this seat is the human (the witness's success)."),
    "confidence": ("float64", "Interrogator's confidence in the verdict, 0-100 (as entered)."),
    "correct": ("boolean", "True if the verdict was right (the same for both rows of a three-player game)."),
    "reason": ("string", "Interrogator's free-text reason (untrusted user text; may be empty)."),
    "started_ms": ("Int64", "Game start, ms since the Unix epoch."),
    "ended_ms": ("Int64", "Verdict time, ms since the Unix epoch."),
    "duration_s": ("float64", "ended_ms - started_ms, in seconds."),
    "n_messages": ("Int64", "Messages exchanged in this seat's conversation (both sides)."),
    "selection_prob": ("float64", "Probability with which matchmaking chose this AI witness for the game (empty if not recorded)."),
    "flag_three_previous_ai": ("boolean", "Exclusion flag (Jones & Bergen): the interrogator's previous three games, in any "
                                          "role, were all against AI witnesses (a game as a human witness breaks the run)."),
    "flag_knows_witness": ("boolean", "Exclusion flag: the interrogator said they know the witness personally."),
}

# columns the loader adds when the data has them (not required of other judgement tables)
OPTIONAL_JUDGEMENT_COLUMNS: dict[str, tuple[str, str]] = {
    "flag_three_previous_ai_interrogated": ("boolean", "Exclusion flag, the interrogator-only reading: the previous "
                                                       "three games the interrogator *interrogated* were all against AIs."),
    "exclusion_origins": ("string", "Where each flag of the row came from: 'rule' (computed, e.g. knows_witness from "
                                    "the reason), 'hand' (set by a researcher with `turinglab flag set`, with the "
                                    "reason given), 'system' (recorded by the server); and flags a researcher "
                                    "cleared by hand (which then override the rule)."),
    **REPLY_COLUMNS,
    "flag_fallback_wrote_reply": ("boolean", FLAG_DESCRIPTION),
    "ai_outputs_blocked": ("Int64", "AI replies in this game that the content filter blocked (the model was asked "
                                    "again within the designed delay, then the fallback answered)."),
}

PARTICIPANT_COLUMNS: dict[str, tuple[str, str]] = {
    "participant_id": ("string", "Participant id (pseudonymous in exports)."),
    "age": ("Int64", "Age in years, as reported (empty if not answered)."),
    "gender": ("string", "Gender, as reported (empty if not answered)."),
    "education": ("string", "Highest education level, as reported."),
    "chatbot_freq": ("Int64", "How often they use chatbots: 0 never, 1 monthly, 2 weekly, 3 daily."),
    "llm_knowledge": ("Int64", "Knowledge of LLMs: 0 nothing, 1 a little, 2 some, 3 a lot, 4 researches them."),
    "prior_visits": ("Int64", "Played here before: 0 none, 1 once, 2 a few times, 3 many times."),
}

TAG_COLUMNS: dict[str, tuple[str, str]] = {
    "game_id": ("string", "Tagged game."),
    "taxonomy": ("string", "'strategy' (Jones & Bergen appendix H) or 'reason' (appendix G)."),
    "category": ("string", "Sub-category code, e.g. '1a' (see the taxonomy files)."),
    "tagger": ("string", "Who tagged (a name or pseudonym)."),
}


class SchemaError(ValueError):
    """A table does not have the documented columns."""


def empty(columns: dict[str, tuple[str, str]]) -> pd.DataFrame:
    return pd.DataFrame({c: pd.Series(dtype=t) for c, (t, _) in columns.items()})


def coerce(df: pd.DataFrame, columns: dict[str, tuple[str, str]], name: str) -> pd.DataFrame:
    """Check required columns and cast to the documented dtypes; extra `flag_*` columns stay."""
    missing = [c for c in columns if c not in df.columns and not c.startswith(FLAG_PREFIX)]
    if missing:
        raise SchemaError(
            f"{name} table lacks column(s) {', '.join(missing)}; see turinglab.analysis.live.schema for the layout"
        )
    out = df.copy()
    for c, (t, _) in columns.items():
        if c not in out.columns:  # a known flag nobody computed: not set
            out[c] = False
        out[c] = out[c].astype(t)
    return out


def flag_names(df: pd.DataFrame) -> list[str]:
    """Exclusion flags present in a judgements table, without the prefix."""
    return [c[len(FLAG_PREFIX):] for c in df.columns if c.startswith(FLAG_PREFIX)]


def validate_judgements(df: pd.DataFrame) -> pd.DataFrame:
    """Cast a judgements table and check the facts analyses rely on."""
    out = coerce(df, JUDGEMENT_COLUMNS, "judgements")
    bad_kind = set(out["witness_kind"].dropna().unique()) - {"human", "ai"}
    if bad_kind:
        raise SchemaError(f"witness_kind must be 'human' or 'ai', got {sorted(bad_kind)}")
    bad_fmt = set(out["format"].dropna().unique()) - {"two-player", "three-player"}
    if bad_fmt:
        raise SchemaError(f"format must be 'two-player' or 'three-player', got {sorted(bad_fmt)}")
    if out["format"].nunique() > 1:
        raise SchemaError("one analysis covers one format; filter the table by 'format' first")
    if out["judged_human"].isna().any():
        raise SchemaError("judged_human is missing in some rows; drop games without a verdict first")
    for c in out.columns:
        if c.startswith(FLAG_PREFIX):
            out[c] = out[c].fillna(False).astype("boolean")
    return out
