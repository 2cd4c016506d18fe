"""Items for AI judges: one row per (stimulus, response) with the truth, as a plain pandas table.

Columns (ITEM_COLUMNS): item_id, stimulus_id, task, stimulus (cue word, image id or transcript
header), response (the text judged), truth ('human' | 'machine'), agent ('human' or the machine's
name). Loaders read Zhang et al.'s ground-truth dictionaries (word.json, caption.json, ...) and the
human judges' trials of the word task, so the judges work before (and without) the static store.
"""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

import pandas as pd

from turinglab.plugins.manager import static_tasks

ITEM_COLUMNS = ["item_id", "stimulus_id", "task", "stimulus", "response", "truth", "agent"]
TRUTHS = ("human", "machine")

# agent names in the human-judge file -> names in word.json; page letters -> agent
_JUDGE_AGENT = {"GPT3(pr, DaVinci)": "gpt3promptdav", "GPT3(pr, Curie)": "gpt3promptcurie",
                "GPT3(Emb)": "gpt3emb", "GPT2": "gpt2", "Word2Vec": "word2vec"}
_PAGE_LETTER = {"a": "human", "b": "word2vec", "c": "gpt2", "d": "gpt3emb", "e": "gpt3promptcurie",
                "f": "gpt3promptdav"}
_PAGE = re.compile(r"(\d+)_([a-f])_(\d+)\.html$")


class ItemsError(ValueError):
    """Items that cannot be judged as given (missing column, unknown truth, bad file)."""


def validate(items: pd.DataFrame) -> pd.DataFrame:
    """Check the item table once at the boundary; returns it with string columns and a fresh index."""
    missing = [c for c in ITEM_COLUMNS if c not in items.columns]
    if missing:
        raise ItemsError(f"item table lacks column(s) {missing}; needs {ITEM_COLUMNS}")
    out = items.copy()
    for c in ITEM_COLUMNS:
        out[c] = out[c].fillna("").astype(str)
    bad = sorted(set(out["truth"]) - set(TRUTHS))
    if bad:
        raise ItemsError(f"truth must be 'human' or 'machine', got {bad[:5]}")
    if out["item_id"].duplicated().any():
        dup = out.loc[out["item_id"].duplicated(), "item_id"].iloc[0]
        raise ItemsError(f"item_id must be unique; {dup!r} appears twice")
    if len(out) == 0:
        raise ItemsError("no items to judge")
    if out["truth"].nunique() < 2:
        raise ItemsError("items need both human and machine responses")
    return out.reset_index(drop=True)


def fingerprint(items: pd.DataFrame) -> str:
    """A hash of the items' content (ids, texts, truths), for caching results."""
    h = hashlib.sha256()
    for row in items[ITEM_COLUMNS].itertuples(index=False):
        h.update(json.dumps(list(row)).encode())
    return h.hexdigest()[:16]


def _read_json(path: Path) -> object:
    try:
        return json.loads(Path(path).read_text())
    except FileNotFoundError:
        raise ItemsError(f"{path}: no such file") from None
    except (OSError, ValueError) as exc:
        raise ItemsError(f"{path}: not readable JSON ({exc})") from None


def load_zhang(path: str | Path, task: str | None = None) -> pd.DataFrame:
    """Read one of Zhang et al.'s ground-truth dictionaries (word.json, caption.json, object.json,
    color.json): {stimulus: [records]} -> item table. Item ids are `<stimulus index>:<position>`
    in file order; the task defaults to the file name."""
    path = Path(path)
    task = task or path.stem
    tasks = [t for t in static_tasks() if t != "fv"]  # a scanpath is no text to read
    if task not in tasks:
        raise ItemsError(f"unknown task {task!r}; use one of {', '.join(tasks)}")
    data = _read_json(path)
    if not isinstance(data, dict):
        raise ItemsError(f"{path}: expected an object of stimulus -> list of records")
    rows = []
    for s_index, (stimulus, records) in enumerate(data.items()):
        if not isinstance(records, list):
            raise ItemsError(f"{path}: stimulus {stimulus!r} does not map to a list of records")
        for pos, rec in enumerate(records):
            try:
                truth = rec["groundtruth"]
                agent = "human" if truth == "human" else rec["machine_groundtruth"]
                rows.append({"item_id": f"{s_index}:{pos}", "stimulus_id": str(s_index), "task": task,
                             "stimulus": str(rec.get("cueWord", rec.get("imageID", stimulus))),
                             "response": str(rec["response"]).strip(), "truth": truth, "agent": agent})
            except (KeyError, TypeError):
                raise ItemsError(f"{path}: record {pos} of {stimulus!r} lacks groundtruth/response fields") from None
    return validate(pd.DataFrame(rows, columns=ITEM_COLUMNS))


def load_human_judges(path: str | Path, items: pd.DataFrame) -> pd.DataFrame:
    """Zhang's human-judge trials of the word task matched to `items` (from word.json).

    The stimulus page `<cue index>_<letter>_<k>.html` is read as: cue index = position of the cue in
    word.json, letter = agent, k = the k-th human response of that cue (machines have one each).
    This mapping is inferred (the letters agree with the trials' labels, which is checked), not
    documented by the source. Returns judge_id, item_id, verdict ('human'|'machine'), truth, agent.
    """
    data = _read_json(path)
    if not isinstance(data, dict):
        raise ItemsError(f"{path}: expected an object of trials")
    index: dict[tuple[str, str, int], str] = {}
    for (sid, agent), grp in items.groupby(["stimulus_id", "agent"], sort=False):
        for k, item_id in enumerate(grp["item_id"]):
            index[(sid, agent, k)] = item_id
    rows, unmatched = [], 0
    for key, trial in data.items():
        t = trial.get("trialData", {})
        m = _PAGE.search(str(t.get("page_name", "")))
        if not m:
            raise ItemsError(f"{path}: trial {key} has no stimulus page name")
        cue, letter, k = m.group(1), m.group(2), int(m.group(3))
        agent = _PAGE_LETTER[letter]
        labelled = "human" if t.get("groundtruth") == "human" else _JUDGE_AGENT.get(t.get("machine_groundtruth"))
        if labelled != agent:
            raise ItemsError(f"{path}: trial {key}: page letter {letter!r} disagrees with its label {labelled!r}")
        item_id = index.get((cue, agent, k))
        if item_id is None:
            unmatched += 1
            continue
        verdict = str(t.get("response_speaker", "")).lower()
        if verdict not in TRUTHS:
            raise ItemsError(f"{path}: trial {key}: verdict {verdict!r} is neither human nor machine")
        rows.append({"judge_id": str(trial.get("workerID", "")), "item_id": item_id, "verdict": verdict,
                     "truth": "human" if agent == "human" else "machine", "agent": agent})
    if unmatched:
        raise ItemsError(f"{path}: {unmatched} trial(s) name stimuli not in the items; is this the word task?")
    return pd.DataFrame(rows, columns=["judge_id", "item_id", "verdict", "truth", "agent"])
