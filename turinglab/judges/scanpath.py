"""Scanpath features (Zhang et al.'s free-viewing task).

`scanpath_vector`: the first 15 fixations (what the human judges saw) as one flat vector
(x1, y1, x2, y2, ...), scaled to [0, 1] by the image size, a shorter scanpath padded with (1, 1).

`paper_features`: the paper's AI-judge input (S4.2.2): the first 10 fixations, coordinates scaled
to [-1, 1]; scanpaths with fewer than 10 fixations are dropped, and how many were dropped is
returned so that it can be reported.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np

N_FIXATIONS = 15
PAD = (1.0, 1.0)


def scanpath_vector(fixations: Sequence[Sequence[float]], width: float = 1.0, height: float = 1.0,
                    n: int = N_FIXATIONS) -> np.ndarray:
    """(x, y) fixations in pixels -> a 2n vector: the first n, scaled by the image size, padded with (1, 1)."""
    if width <= 0 or height <= 0:
        raise ValueError("image width and height must be positive")
    pts = np.asarray(list(fixations)[:n], dtype=float).reshape(-1, 2) if len(fixations) else np.zeros((0, 2))
    if pts.size and not np.isfinite(pts).all():
        raise ValueError("fixations must be finite numbers")
    pts = pts / np.array([width, height])
    pad = np.tile(np.asarray(PAD), (n - len(pts), 1))
    return np.concatenate([pts, pad]).ravel()


PAPER_FIXATIONS = 10


@dataclass
class ScanpathSet:
    X: np.ndarray  # one row per kept scanpath: 2 * n values in [-1, 1]
    truth: np.ndarray  # 'human' | 'machine'
    agent: np.ndarray  # 'human' or the model's name
    image: np.ndarray  # image id (the stimulus)
    kept: int
    dropped: int  # scanpaths shorter than the cut
    dropped_by_agent: dict[str, int]


def paper_features(fv: dict, width: float = 1280.0, height: float = 1024.0, n: int = PAPER_FIXATIONS) -> ScanpathSet:
    """Zhang's fv.json ({image: [{response: [[x, y], ...], groundtruth, machine_groundtruth}]}) -> the
    first `n` fixations of each scanpath of at least `n`, scaled from pixels of `width` x `height`
    to [-1, 1] (a point outside the frame stays outside the range: the data is kept as recorded)."""
    if n < 1:
        raise ValueError("the fixation cut must be at least 1")
    rows, truth, agent, image = [], [], [], []
    dropped: dict[str, int] = {}
    for img, records in fv.items():
        for rec in records:
            who = "human" if rec["groundtruth"] == "human" else str(rec.get("machine_groundtruth") or "machine")
            pts = np.asarray(rec["response"], dtype=float).reshape(-1, 2)
            if len(pts) < n:
                dropped[who] = dropped.get(who, 0) + 1
                continue
            scaled = pts[:n] / np.array([width, height]) * 2.0 - 1.0
            rows.append(scaled.ravel())
            truth.append("human" if who == "human" else "machine")
            agent.append(who)
            image.append(str(img))
    X = np.vstack(rows) if rows else np.zeros((0, 2 * n))
    return ScanpathSet(X, np.asarray(truth, dtype=object), np.asarray(agent, dtype=object),
                       np.asarray(image, dtype=object), len(rows), sum(dropped.values()), dropped)
