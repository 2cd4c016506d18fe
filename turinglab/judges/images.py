"""Image features without a network: a joint RGB colour histogram of the whole image (`histogram`).

The ImageNet CNN features (`cnn`, Zhang et al.'s kind of image feature) are in `cnn.py` (the
optional extra `[image]`). Both need the images themselves (`--images DIR`, files named by the
items' image ids), which are not in the shared data.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from turinglab.judges.errors import FeaturesError

BINS = 4  # per channel: 4 x 4 x 4 = 64 colours
NO_CNN = ("no CNN image features in this run: the ImageNet CNN (EfficientNet-Lite0, feature set 'cnn', extra "
          "[image]) needs --images DIR")


def histogram(path: Path, bins: int = BINS) -> np.ndarray:
    """The share of the image's pixels in each of bins^3 RGB cells."""
    from PIL import Image, UnidentifiedImageError

    try:
        with Image.open(path) as im:
            px = np.asarray(im.convert("RGB").resize((64, 64)), dtype=np.int64).reshape(-1, 3)
    except (OSError, UnidentifiedImageError) as exc:
        raise FeaturesError(f"cannot read image {path}: {exc}") from None
    cell = px * bins // 256
    idx = (cell[:, 0] * bins + cell[:, 1]) * bins + cell[:, 2]
    return np.bincount(idx, minlength=bins ** 3).astype(np.float64) / len(idx)


def image_paths(stimuli: list[str], folder: str | Path | None, features: str = "histogram") -> list[Path]:
    """The image file of each item (the stimulus is the image's file name), each checked to exist."""
    if folder is None:
        raise FeaturesError(f"the '{features}' features need the images: give --images DIR (files named as the "
                            "items' image ids); the shared data has no images")
    folder = Path(folder)
    if not folder.is_dir():
        raise FeaturesError(f"--images {folder}: no such folder")
    out = []
    for s in stimuli:
        p = folder / Path(s).name
        if not p.is_file():
            raise FeaturesError(f"image {p.name} not found in {folder}; every item's image must be there")
        out.append(p)
    return out


def image_features(stimuli: list[str], folder: str | Path | None, progress=None) -> np.ndarray:
    """One histogram row per item (the stimulus is the image's file name); each image read once."""
    cache: dict[Path, np.ndarray] = {}
    rows = []
    for p in image_paths(stimuli, folder):
        if p not in cache:
            cache[p] = histogram(p)
        rows.append(cache[p])
        if progress is not None:
            progress()
    return np.vstack(rows)
