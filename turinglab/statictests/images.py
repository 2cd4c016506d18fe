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


def image_problem(image_dir: Path, name: str, types: dict[str, str] = IMAGE_TYPES) -> str | None:
    """Why `name` is not a picture the judge pages can show from `image_dir` (None: it is), for
    the importers: a path, a link leading out of the folder, a missing file or another file type."""
    folder = image_dir.resolve()
    if Path(name).name != name:
        return f"is a path; give the bare file name of a picture in {folder}"
    if safe_image(folder, name, types) is not None:
        return None
    where = folder / name
    if where.is_symlink() or (where.exists() and not where.resolve().is_relative_to(folder)):
        return f"is a link to a file outside {folder}; copy the picture into the folder instead"
    if where.is_file():
        return f"is not a picture ({', '.join(sorted(types))})"
    return f"is not a file in {folder}; put the picture there or fix the name"
