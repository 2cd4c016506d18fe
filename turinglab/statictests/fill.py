"""Whether a static study's items fill a judge's session (issue 41.2): said at import and at
`serve` start in one line with the fix (`session.items`), rather than as a dead study whose
judges all see "not ready"."""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any

from turinglab.game.static_config import StaticStudy
from turinglab.store.db import StoreError
from turinglab.store.static import plan_session

SEEDS = range(5)  # the agents' remainder is drawn: a size counts as filled when every seed deals it


def _deals(items: Sequence[Any], study: StaticStudy) -> str | None:
    for seed in SEEDS:
        try:
            plan_session(items, study, random.Random(seed))
        except StoreError as exc:
            return str(exc)
    return None


def with_items(study: StaticStudy, n: int) -> StaticStudy:
    return study.model_copy(update={"session": study.session.model_copy(update={"items": n})})


def largest_session(items: Sequence[Any], study: StaticStudy) -> int:
    """The most test items per session (at most the study's `session.items`) the items deal; 0: none."""
    best = 0
    for n in range(1, study.session.items + 1):
        if _deals(items, with_items(study, n)) is not None:
            break
        best = n
    return best


def fill_problem(items: Sequence[Any], study: StaticStudy) -> str | None:
    """One line saying why the items cannot fill a session of the study, with the fix; None: they can."""
    why = _deals(items, study)
    if why is None:
        return None
    best = largest_session(items, study)
    fix = (f"set session.items to at most {best} in the study file (--study-file), or add items" if best
           else "add items (each session needs human and machine items on distinct stimuli)")
    return f"{why.split('; lower session.items')[0]}: a session of session.items={study.session.items} cannot be dealt; {fix}"


def dealable(items: Sequence[Any], task: str) -> tuple[list[Any], str | None]:
    """The items a judge may be dealt, and one line on those left out: a task that shows a picture
    (its plugin's `images`) never deals an item whose stimulus has none (`stimulus_image`)."""
    from turinglab.plugins.manager import static_tasks

    spec = static_tasks().get(task)
    if spec is None or not spec.images:
        return list(items), None
    ok = [i for i in items if getattr(i, "stimulus_image", None)]
    left = len(items) - len(ok)
    if not left:
        return ok, None
    return ok, (f"{left} of {len(items)} items are never dealt to judges: their stimulus has no picture (task "
                f"{task} shows one); import them again with --images DIR holding the picture files")
