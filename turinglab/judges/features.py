"""Task features for the trained judges (computed once per item, before any fold).

Word association (Zhang et al.): GloVe vectors of cue and response and the paper's feature, the
squared difference (cue - response)^2; the cosine of the two; cheap lexical features (frequency
rank, length, morphology). Text tasks (captions, object labels, colour words): the GloVe mean of
the response and the lexical features; the sentence-embedding features live in `sentence.py`.
TF-IDF is not here: it is fitted inside each fold (see trained.py).

Feature sets are named; `--features sqdiff,lexical` picks them. Per-item extraction is cached in
memory by text, so repeated cues cost nothing.
"""

from __future__ import annotations

import math
import re

import numpy as np
import pandas as pd

from turinglab.judges.errors import FeaturesError
from turinglab.judges.vectors import glove, tokens

WORD_SETS = ("sqdiff", "glove", "cosine", "lexical", "minilm-sqdiff")  # minilm-sqdiff: the [text] extra
TEXT_SETS = ("mean", "lexical", "minilm", "histogram", "cnn", "turns")
IMAGE_SETS = ("histogram", "cnn")  # read the items' images: tasks with pictures only (cnn: the [image] extra)
FV_SETS = ("fixations10",)  # the paper's: first 10 fixations in [-1, 1] (scanpath.py)
DEFAULTS = {"word": ("sqdiff", "cosine", "lexical"), "caption": ("minilm", "lexical"),
            "object": ("minilm", "lexical"), "color": ("mean", "lexical"), "conversation": ("turns",),
            "transcript": ("minilm", "lexical"), "fv": ("fixations10",)}
SUFFIXES = ("ing", "ed", "s", "ly", "tion", "sion", "er", "est", "ness", "ment", "al", "ous", "ive", "able", "ful",
            "less", "ity", "ize", "ism", "ist")
LEXICAL_NAMES = ["log_rank", "oov", "n_chars", "n_tokens", "capitalized", "has_digit", "has_space_or_hyphen",
                 "cue_log_rank", "same_prefix4", "contains_cue", "len_ratio"] + [f"suffix_{s}" for s in SUFFIXES]


def parse_sets(spec: str | None, task: str) -> tuple[str, ...]:
    if not spec:
        return DEFAULTS.get(task, ("lexical",))
    names = tuple(s.strip() for s in spec.split(",") if s.strip())
    allowed = WORD_SETS if task == "word" else FV_SETS if task == "fv" else TEXT_SETS
    pictures = _has_pictures(task)
    # turns (per-speaker features, conversation.py): conversations and live transcripts, which have no picture
    bad = [s for s in names if s not in allowed or (s in IMAGE_SETS and not pictures) or (s == "turns" and pictures)]
    if bad or not names:
        raise FeaturesError(f"unknown feature set(s) {bad or spec!r} for task {task}; use a comma list of "
                            f"{', '.join(allowed)}")
    return names


def _has_pictures(task: str) -> bool:
    from turinglab.plugins.manager import static_tasks

    t = static_tasks().get(task)
    return bool(t is not None and t.images)


def _log_rank(rank: int | None, n_words: int) -> float:
    return math.log10((rank if rank is not None else n_words) + 1)


def lexical(stimulus: str, response: str) -> list[float]:
    g = glove()
    n_words = len(g.index)
    toks = tokens(response) or [""]
    ranks = [g.rank(t) for t in toks]
    known = [r for r in ranks if r is not None]
    last = toks[-1]
    cue = stimulus.lower().strip()
    resp = response.lower().strip()
    cue_ranks = [g.rank(t) for t in tokens(stimulus)]
    return [
        float(np.mean([_log_rank(r, n_words) for r in ranks])),
        float(len(known) < len(toks)),
        float(len(response)),
        float(len(toks)),
        float(response[:1].isupper()),
        float(bool(re.search(r"\d", response))),
        float(bool(re.search(r"[\s-]", response.strip()))),
        float(np.mean([_log_rank(r, n_words) for r in cue_ranks])) if cue_ranks else 0.0,
        float(len(cue) >= 4 and resp[:4] == cue[:4]),
        float(bool(cue) and (cue in resp or resp in cue)),
        float(len(resp) / max(len(cue), 1)),
    ] + [float(last.endswith(s) and len(last) > len(s) + 2) for s in SUFFIXES]


def word_features(items: pd.DataFrame, sets: tuple[str, ...], progress=None) -> np.ndarray:
    """One row per item: the chosen sets concatenated (in the order given)."""
    g = glove()
    cache: dict[str, np.ndarray] = {}

    def vec(text: str) -> np.ndarray:
        if text not in cache:
            cache[text] = g.phrase(text)[0]
        return cache[text]

    if "minilm-sqdiff" in sets:  # the authors' benchmark feature on a sentence model: (cue - response)^2
        from turinglab.judges.sentence import embed

        words = sorted(set(items["stimulus"]) | set(items["response"]))
        table = dict(zip(words, embed(words)))
    rows = []
    for stim, resp in zip(items["stimulus"], items["response"]):
        c, r = vec(stim), vec(resp)
        parts: list[np.ndarray] = []
        for s in sets:
            if s == "sqdiff":
                parts.append((c - r) ** 2)
            elif s == "glove":
                parts.append(np.concatenate([c, r]))
            elif s == "cosine":
                den = float(np.linalg.norm(c) * np.linalg.norm(r))
                parts.append(np.array([float(c @ r) / den if den else 0.0]))
            elif s == "lexical":
                parts.append(np.asarray(lexical(stim, resp)))
            elif s == "mean":
                parts.append(r)
            elif s == "minilm-sqdiff":
                parts.append((table[stim] - table[resp]) ** 2)
        rows.append(np.concatenate(parts).astype(np.float64))
        if progress is not None:
            progress()
    return np.vstack(rows)


def extract(items: pd.DataFrame, sets: tuple[str, ...], progress=None, images: str | None = None) -> np.ndarray:
    """The feature matrix of `items` (all of one task); `images`: the folder of the colour task's images."""
    task = items["task"].iloc[0]
    if task == "word":
        return word_features(items, sets, progress)
    if task == "fv":
        from turinglab.judges.scanpath import fixations, paper_vector

        try:
            return np.vstack([paper_vector(fixations(r)) for r in items["response"]])
        except ValueError as exc:
            raise FeaturesError(f"fv items: {exc}") from None
    blocks = []
    if "histogram" in sets:
        from turinglab.judges.images import image_features

        blocks.append(image_features(list(items["stimulus"]), images))
    if "cnn" in sets:
        from turinglab.judges import cnn

        blocks.append(cnn.image_features(list(items["stimulus"]), images))
    if "turns" in sets:
        from turinglab.judges.conversation import turn_features

        blocks.append(turn_features(list(items["response"])))
    other = tuple(s for s in sets if s not in ("minilm", "histogram", "cnn", "turns"))
    if "minilm" in sets:
        from turinglab.judges.sentence import embed

        texts = list(items["response"])
        unique = sorted(set(texts))  # each distinct text embedded once (colour words: a dozen)
        rows = dict(zip(unique, embed(unique)))
        blocks.append(np.vstack([rows[t] for t in texts]))
        if progress is not None:
            for _ in texts:
                progress()
    if other:
        blocks.append(word_features(items, other, None if "minilm" in sets else progress))
    return np.hstack(blocks)
