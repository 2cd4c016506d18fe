"""Synthetic studies at the DataFrame level, with known true rates.

Fast (vectorised numpy), for coverage simulations and benchmarks. `turinglab demo-data`
instead plays games through the real engine and store (see `demo.py`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from turinglab.analysis.live.flags import flag_table
from turinglab.analysis.live.schema import validate_judgements

DEFAULT_RATES = {"Dragon": 0.50, "Sierra": 0.39, "November": 0.31, "ELIZA": 0.22}
GENDERS = np.array(["female", "male", "non-binary"])
EDUCATION = np.array(["high school", "bachelor", "master", "doctorate"])
REASONS = np.array([
    "too formal", "typos felt real", "answered too fast", "hunch", "", "",
    "knew the current time", "boring and generic", "swore at me", "plausible backstory",
])


@dataclass
class SynthSpec:
    """A study with known truth. Rates are probabilities of being judged human."""

    n_games: int = 1000
    rates: dict[str, float] = field(default_factory=lambda: dict(DEFAULT_RATES))
    human_rate: float = 0.66  # two-player: P(human witness judged human)
    format: str = "two-player"
    human_share: float = 0.5  # two-player: share of games with a human witness
    mean_games_per_interrogator: float = 2.5
    interrogator_sd: float = 0.0  # sd of a per-interrogator effect on the logit of "judged human"
    adaptive: bool = True  # witness choice probabilities drift over time (recorded in selection_prob)
    duration_leak_s: float = 0.0  # added to AI games' duration (to test the timing-leak figure)
    seed: int = 0
    study: str = "synthetic"


def _logit(p: np.ndarray) -> np.ndarray:
    p = np.clip(p, 1e-9, 1 - 1e-9)
    return np.log(p / (1 - p))


def _sort_within(values: np.ndarray, groups: np.ndarray) -> np.ndarray:
    """Sort values ascending within consecutive blocks of equal `groups` (groups already blocked)."""
    return values[np.lexsort((values, groups))]


def simulate(spec: SynthSpec) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Return (judgements, participants) in the documented tidy schema, flags computed."""
    rng = np.random.default_rng(spec.seed)
    n = int(spec.n_games)
    if n < 1:
        raise ValueError("n_games must be at least 1")
    names = list(spec.rates)
    if not names:
        raise ValueError("give at least one AI witness rate")
    p_ai = np.array([spec.rates[w] for w in names], dtype=float)

    # interrogators and the order of their games
    per = 1 + rng.geometric(1 / max(spec.mean_games_per_interrogator, 1.0), size=n) - 1
    inter = np.repeat(np.arange(len(per)), per)[:n]
    n_int = int(inter.max()) + 1
    # game_index counts within each interrogator's block; start times ascend within blocks
    idx = np.arange(n)
    new_block = np.r_[True, inter[1:] != inter[:-1]]
    game_index = idx - np.maximum.accumulate(np.where(new_block, idx, 0)) + 1
    start = rng.integers(0, 30 * 86_400_000, size=n).astype(np.int64) + 1_700_000_000_000
    start = _sort_within(start, inter)

    # witness choice with recorded probabilities: softmax(beta_t * rates), beta_t drifts up
    k = len(names)
    t_frac = (start - start.min()) / max(1, (start.max() - start.min()))
    if spec.adaptive and k > 1:
        beta = 1.0 + 6.0 * t_frac
        logits = beta[:, None] * p_ai[None, :]
        probs = np.exp(logits - logits.max(axis=1, keepdims=True))
        probs /= probs.sum(axis=1, keepdims=True)
    else:
        probs = np.full((n, k), 1.0 / k)
    cum = probs.cumsum(axis=1)
    choice = (rng.random(n)[:, None] > cum).sum(axis=1).clip(0, k - 1)
    sel_p = probs[np.arange(n), choice]

    u = rng.normal(0.0, spec.interrogator_sd, size=n_int)[inter] if spec.interrogator_sd > 0 else 0.0
    three = spec.format == "three-player"
    if three:
        is_human = np.zeros(n, dtype=bool)
    else:
        is_human = rng.random(n) < spec.human_share
    p_true = np.where(is_human, spec.human_rate, p_ai[choice])
    p = 1 / (1 + np.exp(-(_logit(p_true) + u))) if spec.interrogator_sd > 0 else p_true
    judged_human = rng.random(n) < p
    correct = judged_human == is_human
    if three:
        correct = ~judged_human  # the AI row judged human means the interrogator chose wrongly
    conf = np.clip(np.round(100 * rng.beta(np.where(correct, 4.0, 2.5), 2.5)), 0, 100)
    duration = np.minimum(300.0, rng.gamma(4.0, 45.0, size=n)) + np.where(is_human, 0.0, spec.duration_leak_s)
    n_msg = rng.poisson(9, size=n)
    reasons = REASONS[rng.integers(0, len(REASONS), size=n)].astype(object)
    game_ids = np.char.add("g", np.arange(n).astype(str))
    inter_ids = np.char.add("p", inter.astype(str))
    witness = np.where(is_human, "Human", np.array(names, dtype=object)[choice])
    human_wit = np.where(is_human, np.char.add("w", rng.integers(0, n_int, size=n).astype(str)), None)

    base = {
        "game_id": game_ids,
        "study": spec.study,
        "format": spec.format,
        "interrogator_id": inter_ids,
        "game_index": game_index,
        "started_ms": start,
        "ended_ms": start + (duration * 1000).astype(np.int64),
        "duration_s": duration,
        "n_messages": n_msg,
        "confidence": conf,
        "correct": correct,
        "reason": reasons,
    }
    ai_rows = pd.DataFrame({
        **base,
        "seat": "A",
        "witness_kind": np.where(is_human, "human", "ai"),
        "witness": witness,
        "witness_participant_id": human_wit,
        "judged_human": judged_human,
        "selection_prob": np.where(is_human, np.nan, sel_p),
    })
    if three:
        seat_ai = np.where(rng.random(n) < 0.5, "A", "B")
        ai_rows["seat"] = seat_ai
        human_rows = pd.DataFrame({
            **base,
            "seat": np.where(seat_ai == "A", "B", "A"),
            "witness_kind": "human",
            "witness": "Human",
            "witness_participant_id": np.char.add("w", rng.integers(0, n_int, size=n).astype(str)),
            "judged_human": ~judged_human,
            "selection_prob": np.nan,
        })
        df = pd.concat([ai_rows, human_rows], ignore_index=True).sort_values(["started_ms", "seat"], kind="stable")
    else:
        df = ai_rows
    df = flag_table(df.reset_index(drop=True))
    df = validate_judgements(df)

    participants = pd.DataFrame({
        "participant_id": np.char.add("p", np.arange(n_int).astype(str)),
        "age": rng.integers(18, 70, size=n_int).astype(float),
        "gender": GENDERS[rng.integers(0, 3, size=n_int)],
        "education": EDUCATION[rng.integers(0, 4, size=n_int)],
        "chatbot_freq": rng.integers(0, 4, size=n_int).astype(float),
        "llm_knowledge": rng.integers(0, 5, size=n_int).astype(float),
    })
    return df, participants


def from_counts(
    counts: dict[str, tuple[int, int]],
    *,
    human: tuple[int, int] | None = None,
    format: str = "two-player",
    first_games: dict[str, tuple[int, int]] | None = None,
    seed: int = 0,
    study: str = "counts",
) -> pd.DataFrame:
    """A judgements table with exactly the given (k judged human, n) per witness.

    `first_games` (optional) gives, per witness (use "Human" for humans), how many of the
    n games were interrogators' first games and how many of those were judged human.
    Every game gets its own interrogator unless it is a later game (then interrogators
    are shared so game_index > 1). Used to rebuild published tables (e.g. J&B table 1).
    """
    rng = np.random.default_rng(seed)
    rows = []
    table = dict(counts)
    if human is not None:
        table["Human"] = human
    gid = 0
    for w, (k, n) in table.items():
        if not 0 <= k <= n:
            raise ValueError(f"{w}: need 0 <= k <= n, got k={k}, n={n}")
        fk, fn = (first_games or {}).get(w, (min(k, n), n))
        if not (0 <= fk <= fn <= n and fk <= k and (n - fn) >= (k - fk)):
            raise ValueError(f"{w}: first-game counts {fk}/{fn} do not fit in {k}/{n}")
        judged = np.r_[np.ones(fk, bool), np.zeros(fn - fk, bool), np.ones(k - fk, bool), np.zeros(n - fn - (k - fk), bool)]
        first = np.r_[np.ones(fn, bool), np.zeros(n - fn, bool)]
        for j, f in zip(judged, first):
            rows.append((f"g{gid}", w, bool(j), bool(f)))
            gid += 1
    df = pd.DataFrame(rows, columns=["game_id", "witness", "judged_human", "first"])
    n = len(df)
    # first games: each its own new interrogator; later games: attached to an earlier interrogator
    n_first = int(df["first"].sum())
    inter = np.empty(n, dtype=np.int64)
    inter[df["first"].to_numpy()] = np.arange(n_first)
    later = ~df["first"].to_numpy()
    pool = max(n_first, 1)
    inter[later] = rng.integers(0, pool, size=int(later.sum()))
    df["interrogator_id"] = np.char.add("p", inter.astype(str))
    start = np.where(df["first"], 0, 1 + rng.integers(0, 10**9, size=n)) + 1_700_000_000_000
    df["started_ms"] = start
    df = df.sort_values(["interrogator_id", "started_ms"], kind="stable")
    df["game_index"] = df.groupby("interrogator_id").cumcount() + 1
    is_human = df["witness"].eq("Human").to_numpy()
    df["witness_kind"] = np.where(is_human, "human", "ai")
    df["study"] = study
    df["format"] = format
    df["seat"] = "A"
    df["witness_participant_id"] = np.where(is_human, "wx", None)
    jh = df["judged_human"].to_numpy()
    df["correct"] = ~jh if format == "three-player" else jh == is_human
    df["confidence"] = 50.0
    df["reason"] = ""
    df["ended_ms"] = df["started_ms"] + 180_000
    df["duration_s"] = 180.0
    df["n_messages"] = 9
    df["selection_prob"] = np.nan
    df = df.drop(columns=["first"]).sort_values("started_ms", kind="stable").reset_index(drop=True)
    if format == "three-player":
        if human is not None:
            raise ValueError("three-player: the human's success is 1 - the machine's; give machine counts only")
        other = df.copy()
        other["seat"] = "B"
        other["witness_kind"] = "human"
        other["witness"] = "Human"
        other["witness_participant_id"] = "wx"
        other["judged_human"] = ~df["judged_human"]
        df = pd.concat([df, other], ignore_index=True)
    df = flag_table(df)
    return validate_judgements(df)
