"""Every answer of a static study's judges besides human/machine, counted for `static summary`
and `report --study`: the control questions (the colour/object true/false question, the
1-of-3 or topic question, control items), the speaker-gender answers, and the judges' native
language and country, with Zhang et al.'s native-speaker rule (captioning) as a flag.

    answer_summary(store, study_id, exclusions) -> {"object_question", "choice_question",
        "control_items", "controls", "gender", "judges": {"native_language", "country", "native_flagged"}}
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import pandas as pd
from sqlalchemy import select

from turinglab.store.models import JudgeTrialRow as T
from turinglab.store.models import ParticipantRow, ResponseRow
from turinglab.store.withdraw import MARK, kept_trials


def is_native(demo: dict[str, Any], language: str) -> bool | None:
    """Whether a judge is a native speaker of `language`: their `native_language` answer (the
    judge pages) names it, or Zhang's imported `native` field is yes/no; None when unknown."""
    said = demo.get("native_language")
    if isinstance(said, str) and said.strip():
        return language.strip().lower() in said.lower()
    zhang = str(demo.get("native", "")).strip().lower()
    return {"yes": True, "no": False}.get(zhang)


def native_flags(judges: pd.DataFrame | None, judge_ids: Any, language: str | None) -> pd.Series:
    """True for judges known not to be native speakers of `language` (None: nobody flagged)."""
    ids = list(judge_ids)
    if not language or judges is None or judges.empty:
        return pd.Series(False, index=ids)
    demo = judges.to_dict("index")
    return pd.Series([is_native({k: v for k, v in demo.get(j, {}).items() if isinstance(v, str)}, language) is False
                      for j in ids], index=ids)


def _rate(k: int, n: int) -> dict[str, Any]:
    return {"answered": n, "correct": k, "accuracy": k / n if n else None}


def answer_summary(store: Any, study_id: int, exclusions: Any = None,
                   exclude: tuple[str, ...] = (MARK,)) -> dict[str, Any]:
    """Counts of every stored answer (see the module doc); reads the trials' answers column
    (`exclude`: the trials' exclusion flags applied, as `summary.FLAGS`)."""
    obj, choice, items, gender = Counter(), Counter(), Counter(), Counter()
    judges: set[str] = set()
    with store.engine.connect() as conn:
        q = (select(T.judge_id, T.answers, T.control_correct, ResponseRow.control)
             .join(ResponseRow, ResponseRow.id == T.response_id)  # practice trials apart (summary.practice)
             .where(T.study_id == study_id, T.phase == "test", *kept_trials(conn, study_id, exclude)))
        for judge, ans, correct, control in conn.execute(q):
            judges.add(judge)
            ans = ans or {}
            if control:
                items["n"] += 1
                items["k"] += correct is True
            if "object_answer" in ans:
                obj["n"] += 1
                obj["k"] += ans.get("object_answer") == ans.get("object_truth")
            if "control" in ans and not control:
                choice["n"] += 1
                choice["k"] += correct is True
            if isinstance(ans.get("gender"), str):
                gender[ans["gender"]] += 1
            for g in (ans.get("genders") or {}).values():
                if isinstance(g, str):
                    gender[g] += 1
        demo = {}
        ids = sorted(judges)
        for i in range(0, len(ids), 500):
            demo.update(conn.execute(select(ParticipantRow.id, ParticipantRow.demographics)
                                     .where(ParticipantRow.id.in_(ids[i:i + 500]))).all())
    lang = getattr(exclusions, "native_language", None)
    native = Counter(str((d or {}).get("native_language") or (d or {}).get("native") or "unknown") for d in demo.values())
    country = Counter(str((d or {}).get("country") or "unknown") for d in demo.values())
    flagged = sum(1 for d in demo.values() if lang and is_native(d or {}, lang) is False)
    ctl_n = obj["n"] + choice["n"] + items["n"]
    return {
        "object_question": _rate(obj["k"], obj["n"]),
        "choice_question": _rate(choice["k"], choice["n"]),
        "control_items": _rate(items["k"], items["n"]),
        "controls": _rate(obj["k"] + choice["k"] + items["k"], ctl_n),
        "gender": dict(sorted(gender.items())),
        "judges": {"native_language": dict(native.most_common()), "country": dict(country.most_common()),
                   "native_rule": lang, "native_flagged": flagged},
    }


def static_extras(store: Any, info: Any, alpha: float = 0.05, exclude: tuple[str, ...] = (MARK,)) -> dict[str, Any]:
    """What `static summary --json` and `report --study` add to the counts: the other answers
    (`answers`) and, for a conversation study, the per-speaker analysis (`speakers`, or None)."""
    from turinglab.analysis.static.speakers import speaker_report

    out: dict[str, Any] = {"answers": answer_summary(store, info.id, info.study.exclusions, exclude)}
    if info.task == "conversation":
        out["speakers"] = speaker_report(store, info.id, alpha, exclude)
    return out
