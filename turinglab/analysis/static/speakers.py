"""The per-speaker analysis of conversation items (Zhang et al.: HH, HAI, AIH, AIAI; the labels are
defined in `statictests/speakers.py`).

`speaker_report(store, study_id)` gives the HH/HAI/AIH/AIAI confusion (truth class x judged class),
per-speaker judged-human rates by (truth, agent) and by conversation length (3 ... 24).
"""

from __future__ import annotations

from collections import Counter, defaultdict
from typing import Any

from sqlalchemy import select

from turinglab.statictests.speakers import CLASSES, SPEAKERS, pair_class, speaker_truths
from turinglab.stats import interval
from turinglab.store.models import JudgeTrialRow as T
from turinglab.store.models import ResponseRow
from turinglab.store.withdraw import MARK, kept_trials


def _rate(k: int, n: int, alpha: float) -> dict[str, Any]:
    if not n:
        return {"estimate": None, "low": None, "high": None}
    ci = interval(k, n, alpha, "clopper-pearson")
    return {"estimate": k / n, "low": float(ci.low), "high": float(ci.high)}


def speaker_report(store: Any, study_id: int, alpha: float = 0.05,
                   exclude: tuple[str, ...] = (MARK,)) -> dict[str, Any] | None:
    """The per-speaker analysis of a conversation study (None when no item names its speakers).
    Control items are left out; a trial counts when its item names both speakers and the judge
    labelled both."""
    iq = (select(ResponseRow.id, ResponseRow.payload, ResponseRow.control)
          .where(ResponseRow.study_id == study_id))
    with store.engine.connect() as conn:
        tq = select(T.response_id, T.answers).where(T.study_id == study_id, T.phase == "test",  # practice apart
                                                    *kept_trials(conn, study_id, exclude))
        items = {i: (speaker_truths(p or {}), (p or {}).get("length")) for i, p, c in conn.execute(iq) if not c}
        items = {i: v for i, v in items.items() if pair_class({sp: t for sp, (t, _) in v[0].items()})}
        if not items:
            return None
        conf: dict[str, Counter] = {c: Counter() for c in CLASSES}
        per: dict[tuple[str, str, str], Counter] = defaultdict(Counter)  # (speaker, truth, agent)
        by_len: dict[tuple[Any, str], Counter] = defaultdict(Counter)  # (length, truth)
        n = 0
        for rid, ans in conn.execute(tq):
            if rid not in items:
                continue
            said = (ans or {}).get("speakers") or {}
            judged = pair_class(said)
            if judged is None:
                continue
            truths, length = items[rid]
            n += 1
            conf[pair_class({sp: t for sp, (t, _) in truths.items()})][judged] += 1
            for sp in SPEAKERS:
                truth, agent = truths[sp]
                for key, c in (((sp, truth, agent), per), ((length, truth), by_len)):
                    c[key]["n"] += 1
                    c[key]["human"] += said[sp] == "human"
    return {
        "trials": n,
        "confusion": {t: {j: int(conf[t][j]) for j in CLASSES} for t in CLASSES},
        "speakers": [{"speaker": sp, "truth": t, "agent": a, "n": c["n"], "judged_human": c["human"],
                      "judged_human_rate": _rate(c["human"], c["n"], alpha)}
                     for (sp, t, a), c in sorted(per.items())],
        "by_length": [{"length": int(ln) if ln is not None else None, "truth": t, "n": c["n"],
                       "judged_human": c["human"], "judged_human_rate": _rate(c["human"], c["n"], alpha)}
                      for (ln, t), c in sorted(by_len.items(), key=lambda kv: (kv[0][0] is None, kv[0][0] or 0, kv[0][1]))],
    }


def _f(x: Any) -> str:
    return "–" if x is None else f"{x:.3f}"


def report_sections(sp: dict[str, Any]) -> list[tuple[str, str, list[str], list[list[Any]]]]:
    """The report's per-speaker tables: the class confusion, per speaker, per length."""
    conf = [[t, *(sp["confusion"][t][j] for j in CLASSES), sum(sp["confusion"][t].values())] for t in CLASSES]
    per = [[r["speaker"], r["truth"], r["agent"], r["n"], r["judged_human"], _f(r["judged_human_rate"]["estimate"]),
            f"[{_f(r['judged_human_rate']['low'])}, {_f(r['judged_human_rate']['high'])}]"] for r in sp["speakers"]]
    by_len = [[r["length"], r["truth"], r["n"], r["judged_human"], _f(r["judged_human_rate"]["estimate"]),
               f"[{_f(r['judged_human_rate']['low'])}, {_f(r['judged_human_rate']['high'])}]"] for r in sp["by_length"]]
    return [
        ("Speaker pairs: HH / HAI / AIH / AIAI", f"{sp['trials']} trials whose judge labelled both speakers. Rows: the "
         "true pair (speaker A then B; H human, AI machine); columns: the judge's labels.",
         ["truth \\ judged", *CLASSES, "trials"], conf),
        ("Per speaker", "Each speaker judged on its own: how often it was labelled human.",
         ["speaker", "truth", "agent", "labels", "judged human", "rate", "exact interval"], per),
        ("Per speaker, by conversation length", "Length in exchanges; human and machine speakers apart.",
         ["length", "truth", "labels", "judged human", "rate", "exact interval"], by_len),
    ]
