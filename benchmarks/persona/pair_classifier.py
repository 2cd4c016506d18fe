"""A candidate persona check, evaluated offline (issue 40): P(break) of a reply read with its question.

    python benchmarks/persona/pair_classifier.py RUN.json [RUN.json ...]    (runs of the held-out battery)

The guard's rules and its model (`guard.model`, on the 257 lines of breaks.tsv) were written from
the wordings of the project's own probes. This candidate learns from every hand-labelled (reply,
question) pair of benchmarks/persona/labels.tsv (about 3 000, less the replies of every held-out
set: heldout/labels.tsv and the guard's heldout*.tsv) and reads meaning as well as wording: word
and character n-grams of the reply, the words of the question, and GloVe word vectors
(judges/vectors.py, shipped offline) of both and their product; one logistic regression. For
each labelled reply of the given runs (heldout/labels.tsv) it prints how the shipped guard and
the guard with this model added (a break when P >= the threshold and the reply claims no human)
score: breaks caught and ok replies refused, with exact 95 % intervals. It is not wired into the
guard: on the guard's own tests it refused "yeah right lol" after an accusation (P = 0.98) and
"i'm just a simple guy" (0.96).
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
LABELS, HELDOUT = HERE / "labels.tsv", HERE / "heldout" / "labels.tsv"
GUARD = HERE.parents[1] / "turinglab" / "witnesses" / "guard"
THRESHOLDS = (0.9, 0.95, 0.98)


def _dense(replies: list[str], questions: list[str]) -> np.ndarray:
    from turinglab.judges.vectors import glove, tokens

    g = glove()
    out = []
    for r, q in zip(replies, questions):
        vr, nr = g.phrase(r)
        vq, _ = g.phrase(q)
        unknown = (len(tokens(r)) - nr) / max(1, len(tokens(r)))  # words GloVe lacks: another language, code
        out.append(np.concatenate([vr, vq, vr * vq, [np.log1p(len(r)), np.log1p(nr), unknown, float(not q)]]))
    return np.array(out, dtype=np.float64)


class PairModel:
    """TF-IDF of the reply and the question plus scaled GloVe features, one logistic regression."""

    def __init__(self, replies: list[str], questions: list[str], labels: list[int]) -> None:
        from sklearn.feature_extraction.text import TfidfVectorizer
        from sklearn.linear_model import LogisticRegression
        from sklearn.preprocessing import StandardScaler

        self.words = TfidfVectorizer(ngram_range=(1, 2), sublinear_tf=True, token_pattern=r"[a-z']+")
        self.chars = TfidfVectorizer(analyzer="char_wb", ngram_range=(2, 5), sublinear_tf=True)
        self.asked = TfidfVectorizer(sublinear_tf=True, token_pattern=r"[a-z']+")
        self.scale = StandardScaler()
        self.words.fit(replies)
        self.chars.fit(replies)
        self.asked.fit(questions)
        self.scale.fit(_dense(replies, questions))
        self.lr = LogisticRegression(C=10.0, solver="liblinear", class_weight="balanced")
        self.lr.fit(self._x(replies, questions), labels)

    def _x(self, replies: list[str], questions: list[str]):  # noqa: ANN202 - a sparse matrix
        from scipy.sparse import csr_matrix, hstack

        dense = csr_matrix(self.scale.transform(_dense(replies, questions)) * 0.1)
        return hstack([self.words.transform(replies), self.chars.transform(replies),
                       0.5 * self.asked.transform(questions), dense]).tocsr()

    def p_break(self, replies: list[str], questions: list[str]) -> np.ndarray:
        return self.lr.predict_proba(self._x(replies, questions))[:, 1]


def _rows(path: Path) -> list[list[str]]:
    if not path.is_file():
        return []
    return [ln.split("\t") for ln in path.read_text(encoding="utf-8").splitlines()
            if ln.strip() and not ln.startswith("#")]


def training_pairs() -> tuple[list[str], list[str], list[int]]:
    """labels.tsv less every reply of a held-out set."""
    held = {r[1] for f in (HELDOUT, *sorted(GUARD.glob("heldout*.tsv"))) for r in _rows(f) if len(r) >= 2}
    keep = [r for r in _rows(LABELS) if len(r) >= 2 and r[0] in ("break", "ok") and r[1] not in held]
    return [r[1] for r in keep], [r[2] if len(r) > 2 else "" for r in keep], [int(r[0] == "break") for r in keep]


def exact(k: int, n: int) -> str:
    from scipy.stats import beta

    lo = 0.0 if k == 0 else beta.ppf(0.025, k, n - k + 1)
    hi = 1.0 if k == n else beta.ppf(0.975, k + 1, n - k)
    return f"{k}/{n} = {k / n:.1%} [{lo:.1%}, {hi:.1%}]" if n else "0/0"


def main() -> None:
    import sys

    from turinglab.witnesses import guard

    labels = {(r[1], r[2] if len(r) > 2 else ""): r[0] for r in _rows(HELDOUT) if len(r) >= 2}
    if not labels:
        sys.exit(f"{HELDOUT}: no labels yet; label the battery's replies first")
    clf = PairModel(*training_pairs()[:2], training_pairs()[2])
    pairs = list(labels.items())
    replies, questions = [r for (r, _), _ in pairs], [q for (_, q), _ in pairs]
    y = [lab == "break" for _, lab in pairs]
    old = [guard.classify(r, q)[0] for r, q in zip(replies, questions)]
    p = clf.p_break(replies, questions)
    human = [bool(guard._HUMAN_CLAIM.search(r) or guard._DENIAL.search(r)) for r in replies]
    n_break, n_ok = sum(y), len(y) - sum(y)
    print(f"{len(y)} labelled replies of the held-out battery: {n_break} breaks, {n_ok} ok")
    print(f"  shipped guard: breaks caught {exact(sum(o and t for o, t in zip(old, y)), n_break)}; "
          f"ok refused {exact(sum(o and not t for o, t in zip(old, y)), n_ok)}")
    for th in THRESHOLDS:
        new = [o or (pp >= th and not h) for o, pp, h in zip(old, p, human)]
        print(f"  + pair classifier at {th}: breaks caught {exact(sum(a and t for a, t in zip(new, y)), n_break)}; "
              f"ok refused {exact(sum(a and not t for a, t in zip(new, y)), n_ok)}")


if __name__ == "__main__":
    main()
