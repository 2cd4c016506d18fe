"""The Jones & Bergen taxonomies (appendix G reasons, appendix H strategies) and tag agreement."""

from __future__ import annotations

from functools import cache
from importlib import resources

import pandas as pd
import yaml

FILES = {"reason": "reasons.yaml", "strategy": "strategies.yaml"}


@cache
def load(taxonomy: str) -> dict:
    if taxonomy not in FILES:
        raise ValueError(f"unknown taxonomy {taxonomy!r}; use one of: {', '.join(FILES)}")
    text = resources.files("turinglab.analysis.live").joinpath("taxonomies", FILES[taxonomy]).read_text()
    return yaml.safe_load(text)


def codes(taxonomy: str) -> dict[str, str]:
    """Sub-category code ('1a') -> 'Category: sub-category'."""
    out = {}
    for cat in load(taxonomy)["categories"]:
        for letter, name in cat["sub"].items():
            out[f"{cat['code']}{letter}"] = f"{cat['name']}: {name}"
    return out


def names() -> dict[tuple[str, str], str]:
    return {(t, c): n for t in FILES for c, n in codes(t).items()}


def tag_accuracy(tags: pd.DataFrame | None, games: pd.DataFrame | None) -> pd.DataFrame:
    """Per (taxonomy, category): the analysed games with that tag and the interrogators' accuracy in them."""
    cols = ["taxonomy", "category", "games", "correct", "accuracy"]
    if tags is None or tags.empty or games is None or games.empty:
        return pd.DataFrame(columns=cols)
    correct = games.drop_duplicates("game_id").set_index(games.drop_duplicates("game_id")["game_id"].astype(str))["correct"]
    rows = []
    for (tax, cat), g in tags.groupby(["taxonomy", "category"]):
        acc = correct.reindex(g["game_id"].astype(str).unique()).dropna().astype(float)
        rows.append({"taxonomy": tax, "category": cat, "games": len(acc), "correct": float(acc.sum()),
                     "accuracy": float(acc.mean()) if len(acc) else float("nan")})
    return pd.DataFrame(rows, columns=cols)


def check(taxonomy: str, category: str) -> str:
    """Normalise and validate a code like '4C' -> '4c'; a clear error lists what is allowed."""
    code = category.strip().lower()
    known = codes(taxonomy)
    if code not in known:
        top = ", ".join(f"{c['code']} {c['name']}" for c in load(taxonomy)["categories"])
        raise ValueError(
            f"unknown {taxonomy} category {category!r}: use a sub-category code like '1a' "
            f"(categories: {top}; `turinglab tag list --taxonomy {taxonomy}` shows all)"
        )
    return code


def agreement(tags: pd.DataFrame, taxonomy: str, tagger_a: str | None = None, tagger_b: str | None = None,
              level: str = "sub") -> dict:
    """Cohen's kappa between two taggers over the games both tagged (one label per game each).

    A game with several tags by one tagger contributes its first tag (sorted), so the
    labels compared are single codes; level="top" compares the top-level categories.
    """
    from sklearn.metrics import cohen_kappa_score

    t = tags[tags["taxonomy"] == taxonomy].copy()
    taggers = sorted(t["tagger"].unique())
    if tagger_a is None or tagger_b is None:
        if len(taggers) != 2:
            raise ValueError(f"name the two taggers to compare; {taxonomy} tags have {len(taggers)}: {', '.join(taggers) or 'none'}")
        tagger_a, tagger_b = taggers
    if level == "top":
        t["category"] = t["category"].str.rstrip("abcdefghijklmnopqrstuvwxyz")
    first = t.sort_values("category").groupby(["tagger", "game_id"])["category"].first()
    a = first.get(tagger_a, pd.Series(dtype=str))
    b = first.get(tagger_b, pd.Series(dtype=str))
    both = a.index.intersection(b.index)
    if len(both) < 2:
        raise ValueError(f"{tagger_a} and {tagger_b} tagged {len(both)} game(s) in common; kappa needs at least 2")
    ya, yb = a.loc[both].to_numpy(), b.loc[both].to_numpy()
    kappa = float(cohen_kappa_score(ya, yb))
    return {"taxonomy": taxonomy, "tagger_a": tagger_a, "tagger_b": tagger_b, "level": level,
            "games": int(len(both)), "agreement": float((ya == yb).mean()), "kappa": kappa}


def stored_agreement(store, taxonomy: str, a: str | None, b: str | None, level: str) -> dict:  # noqa: ANN001 - Store
    """`agreement` of the tags stored in `store` (a Store) for this taxonomy."""
    rows = [{"game_id": t.game_id, "taxonomy": t.taxonomy, "category": t.category, "tagger": t.tagger}
            for t in store.tags(taxonomy=taxonomy)]
    return agreement(pd.DataFrame(rows, columns=["game_id", "taxonomy", "category", "tagger"]), taxonomy, a, b, level)
