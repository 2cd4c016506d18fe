"""The built-in static tasks (Zhang et al.'s six) and importers (zhang, plain), registered
through the plugin hooks."""

from __future__ import annotations

from turinglab.plugins import hookimpl
from turinglab.plugins.kinds import Importer, StaticTask
from turinglab.statictests.importing import read_plain, read_zhang
from turinglab.statictests.tasks import ZHANG_TASKS


@hookimpl
def turinglab_static_tasks() -> list[StaticTask]:
    return list(ZHANG_TASKS)


@hookimpl
def turinglab_importers() -> list[Importer]:
    return [
        Importer("zhang", read_zhang, mapping="Zhang et al.'s response dictionaries (JSON) and judge files"),
        Importer("plain", read_plain, mapping="one CSV/JSONL row per response: stimulus_id, task, image, text, "
                                              "response, truth, agent (docs/static.md)"),
    ]
