"""Scanpath features (Zhang et al.'s free-viewing task): the first 15 fixations as one flat vector
(x1, y1, x2, y2, ...), coordinates normalised to [0, 1] by the image size, a shorter scanpath
padded with (1, 1) as in the paper. The scanpath data (fv.json) is not in the repository's
shared data yet; this is the feature the trained judges will use once it is imported.
"""

from __future__ import annotations

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
