"""Assistant register in a generated conversation turn: a chatbot's service voice ("feel free to
ask", "I'm glad I could help", "let me know if ...", "Great question! Here are a few ...") that a
person chatting with a stranger would not use. Two readers, either one enough:

* the persona guard of the live witnesses (`witnesses.guard.classify`: its rules, and its
  logistic-regression model trained on `guard/breaks.tsv` when that is sure, P >= `GUARD_MODEL`),
  which also catches admissions of being an AI and reads the turn in the context of the one before;
* a small model of register alone: word and character n-gram tf-idf and a logistic regression,
  trained at first use on `register.tsv` (55 assistant and 65 chat turns written for turinglab),
  a turn counting when P(assistant) >= `THRESHOLD`.

`cross_validated()` gives the register model's accuracy by stratified 5-fold cross-validation on
its own set; `python -m turinglab.statictests.register` prints it and how many of the persona
guard's held-out witness replies (`witnesses/guard/heldout.tsv`, labelled by hand) count as
assistant register: the in-persona ones (false alarms) and the breaks.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

DATA = Path(__file__).with_name("register.tsv")
THRESHOLD = 0.85  # the register model's P(assistant) from which a turn counts (0.7 flagged 22 of 170 held-out in-persona replies)
GUARD_MODEL = 0.9  # the guard's model alone counts from here ("got any recommendations for a newbie" is 0.77)


def examples(path: Path = DATA) -> tuple[list[str], list[int]]:
    texts, labels = [], []
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        label, text = line.split("\t", 1)
        if label not in ("assistant", "chat"):
            raise ValueError(f"{path}: label {label!r} is neither 'assistant' nor 'chat'")
        texts.append(text.replace("\\n", "\n"))
        labels.append(int(label == "assistant"))
    return texts, labels


def train(texts: list[str], labels: list[int]):  # noqa: ANN201 - a scikit-learn pipeline
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline, make_union

    feats = make_union(TfidfVectorizer(ngram_range=(1, 2), sublinear_tf=True, lowercase=False,
                                       token_pattern=r"[A-Za-z']+|[!?*\-]"),
                       TfidfVectorizer(analyzer="char_wb", ngram_range=(2, 4), sublinear_tf=True, lowercase=False))
    return make_pipeline(feats, LogisticRegression(C=10.0, max_iter=2000)).fit(texts, labels)


@lru_cache(maxsize=1)
def model():  # noqa: ANN201
    return train(*examples())


def p_assistant(text: str) -> float:
    return float(model().predict_proba([text])[0][1])


def assistant(text: str, before: str | None = None) -> str | None:
    """Why `text` (answering `before`) is in an assistant's register or admits being an AI; None: it is not."""
    from turinglab.witnesses.guard import classify

    if not (text or "").strip():
        return None
    hit, why = classify(text, before)
    if hit and not (why.startswith("model p=") and float(why[8:]) < GUARD_MODEL):
        return f"persona guard, {why}"
    p = p_assistant(text)
    return f"register model p={p:.2f}" if p >= THRESHOLD else None


def cross_validated(folds: int = 5, seed: int = 0) -> float:
    """The register model's accuracy by stratified k-fold cross-validation on its own examples."""
    from sklearn.model_selection import StratifiedKFold

    texts, labels = examples()
    right = 0
    for tr, te in StratifiedKFold(folds, shuffle=True, random_state=seed).split(texts, labels):
        clf = train([texts[i] for i in tr], [labels[i] for i in tr])
        right += sum(int(p == labels[i]) for p, i in zip(clf.predict([texts[i] for i in te]), te))
    return right / len(texts)


def heldout(path: Path | None = None) -> tuple[int, int, int, int]:
    """(in-persona replies flagged, in-persona replies, breaks flagged, breaks) of a guard held-out file."""
    from turinglab.witnesses.guard import load_in_context

    path = path or Path(__file__).parents[1] / "witnesses" / "guard" / "heldout.tsv"
    texts, labels, questions = load_in_context(path)
    hit = [assistant(t, q) is not None for t, q in zip(texts, questions)]
    ok = [h for h, y in zip(hit, labels) if not y]
    br = [h for h, y in zip(hit, labels) if y]
    return sum(ok), len(ok), sum(br), len(br)


if __name__ == "__main__":
    print(f"register model, 5-fold cross-validated accuracy on register.tsv: {cross_validated():.3f}")
    fo, no, fb, nb = heldout()
    print(f"guard held-out replies counted as assistant register: in persona {fo}/{no}, breaks {fb}/{nb}")
