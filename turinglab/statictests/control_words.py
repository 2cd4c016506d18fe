"""Zhang et al.'s words for the true/false control question of the colour and object tests
("Does this image contain the following - <word>?"), per image: `oneWord` (in the picture) and
`wrongWord` (not in it), as their psiTurk task code held them (`task_color.js`, `task_objectdet.js`,
GitHub kreimanlab/TuringTest, MIT; `zhang2023/control_words.tsv`, licence in `zhang2023/LICENSE`).

The object test's lists are the first 813 images of the colour test's (same words). 32 of the 1 213 images
carry the same word in both lists (e.g. 726.jpg "road"): for those only the word in the picture is
asked, since "no" could not be right.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Any

WORDS_FILE = Path(__file__).parent / "zhang2023" / "control_words.tsv"
TASKS = ("color", "object")


@lru_cache(maxsize=1)
def _table() -> dict[str, dict[str, tuple[str, str]]]:
    out: dict[str, dict[str, tuple[str, str]]] = {t: {} for t in TASKS}
    for line in WORDS_FILE.read_text(encoding="utf-8").splitlines():
        if line.startswith("#") or not line.strip():
            continue
        image, one, wrong, tasks = line.split("\t")
        for t in tasks.split():
            out[t][image] = (one, wrong)
    return out


def author_words(task: str) -> dict[str, tuple[str, str]]:
    """{image file: (word in it, word not in it)} of the authors' task code; {} for other tasks."""
    return _table().get(task, {})


def add_author_words(task: str, fields_by_image: dict[str, dict[str, Any]]) -> str | None:
    """Give each stimulus the authors' control words (`object_present`, `object_absent`), when every
    image of the file is one of theirs for `task` and none brings its own words; returns a note
    saying what was done, or None when nothing was (another task, or another set of pictures)."""
    words = author_words(task)
    if not words or not fields_by_image or not set(fields_by_image) <= set(words):
        return None
    if any("object_present" in f or "object_absent" in f for f in fields_by_image.values()):
        return None
    same = 0
    for image, fields in fields_by_image.items():
        one, wrong = words[image]
        fields["object_present"] = [one]
        if wrong.casefold() != one.casefold():
            fields["object_absent"] = [wrong]
        else:
            same += 1
        fields["control_words"] = "zhang2023"
    return (f"control question: the authors' words (oneWord/wrongWord of their task code) for all "
            f"{len(fields_by_image)} images" + (f"; {same} have the same word in both lists and are asked only "
                                               "about the word in the picture" if same else ""))
