"""Image features for the colour task: a joint RGB colour histogram of the whole image.

Zhang et al. used CNN features (VGG / ResNet18 on ImageNet). No PyPI package was found that ships
such weights inside the package (sha256-pinnable, offline); the ones that exist download them from
a model hub at run time, which this project does not do. So the image side of the colour judge is
this colour histogram, and it needs the images themselves (`--images DIR`, files named by the
items' image ids), which are not in the shared data.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from turinglab.judges.errors import FeaturesError

BINS = 4  # per channel: 4 x 4 x 4 = 64 colours
NO_CNN = ("no CNN image features: no PyPI package ships pretrained CNN weights that can be pinned and loaded "
          "offline, so the colour judge uses a colour histogram of the image")


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


def image_features(stimuli: list[str], folder: str | Path | None, progress=None) -> np.ndarray:
    """One histogram row per item (the stimulus is the image's file name); each image read once."""
    if folder is None:
        raise FeaturesError("the 'histogram' features need the images: give --images DIR (files named as the "
                            "items' image ids); the shared data has no images")
    folder = Path(folder)
    if not folder.is_dir():
        raise FeaturesError(f"--images {folder}: no such folder")
    cache: dict[str, np.ndarray] = {}
    rows = []
    for s in stimuli:
        if s not in cache:
            p = folder / Path(s).name
            if not p.is_file():
                raise FeaturesError(f"image {p.name} not found in {folder}; every item's image must be there")
            cache[s] = histogram(p)
        rows.append(cache[s])
        if progress is not None:
            progress()
    return np.vstack(rows)
