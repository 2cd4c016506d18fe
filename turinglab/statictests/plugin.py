"""The built-in static tasks (Zhang et al.'s six) and importers (zhang, plain), registered
through the plugin hooks."""

from __future__ import annotations

from turinglab.plugins import hookimpl
from turinglab.plugins.kinds import Importer, StaticTask
from turinglab.statictests.importing import read_jspsych_data, read_plain, read_psiturk_data, read_zhang
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
        Importer("psiturk", read_psiturk_data, mapping="psiTurk's participants table (datastring) or trialdata.csv; "
                                                       "Zhang's colour/object runs built in, else --map (docs/static.md)"),
        Importer("jspsych", read_jspsych_data, mapping="jsPsych data (JSON or CSV) with a --map naming the trial "
                                                       "fields (docs/static.md)"),
    ]
