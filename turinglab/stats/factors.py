"""Factor levels for the regressions, shared by the report and the export's stand-alone rebuild scripts:
ordinal factors in their survey order, one reference level per factor (the level of most interrogators)."""

from __future__ import annotations

import pandas as pd


ORDERS = {"education": ("none", "high school", "some college", "bachelor", "master", "doctorate")}  # the survey's order


def level_order(col: str, levels) -> list:
    """A factor's levels in their order (education from none to doctorate), others by name."""
    order = ORDERS.get(col, ())
    return sorted(levels, key=lambda v: (order.index(v) if v in order else len(order), str(v)))


def reference_levels(games: pd.DataFrame, parts: pd.DataFrame) -> dict:
    """One reference level per factor for every regression: the level of most interrogators (ties: the
    first in the factor's order)."""
    if parts is None or not len(parts):
        return {}
    it = interrogators(games, parts)
    out = {}
    for col in ("gender", "education"):
        vc = it[col].dropna().value_counts() if col in it else pd.Series(dtype=int)
        if len(vc):
            out[col] = level_order(col, vc.index[vc == vc.max()])[0]
    return out


def factor(d: pd.DataFrame, col: str, levels, ref) -> str:
    """Make `d[col]` a categorical in the factor's order and return its term with `ref` as the reference;
    when `ref` is not among `levels`, the level of most rows of `d` is."""
    levels = level_order(col, levels)
    if ref not in levels:
        vc = d[col].value_counts()
        ref = level_order(col, [v for v in levels if vc.get(v, 0) == vc.max()])[0]
    d[col] = pd.Categorical(d[col].where(d[col].isin(levels)), categories=levels)
    return f"C({col}, Treatment(reference={ref!r}))"


def interrogators(games: pd.DataFrame, parts: pd.DataFrame) -> pd.DataFrame:
    ids = pd.DataFrame({"interrogator_id": games["interrogator_id"].astype(str).unique()})
    p = parts.assign(interrogator_id=parts["participant_id"].astype(str))
    return ids.merge(p, on="interrogator_id", how="left")
