"""The pictures of a static study: which files are pictures, and one found safely in its folder
(shared by the judge pages, which serve them, and `static generate --vision`, which sends them)."""

from __future__ import annotations

from pathlib import Path

IMAGE_TYPES = {".png": "image/png", ".jpg": "image/jpeg", ".jpeg": "image/jpeg", ".gif": "image/gif",
               ".webp": "image/webp", ".bmp": "image/bmp"}


def safe_image(image_dir: Path, name: str | None, types: dict[str, str] = IMAGE_TYPES) -> Path | None:
    """The picture `name` inside `image_dir` (no way out by '..' or links), a file of one of
    `types`; else None."""
    if not name:
        return None
    try:
        path = (image_dir / name).resolve()
    except (OSError, ValueError):
        return None
    if not path.is_relative_to(image_dir) or path.suffix.lower() not in types or not path.is_file():
        return None
    return path
