"""Zhang et al.'s public data: the files shipped with the package and the larger ones fetched on demand.

Shipped (`zhang2023/`, MIT, pseudonymised judge ids) are pinned by sha256 here, so an edit to them shows.
The others are fetched from the authors' repository at a pinned commit. Their sha256 is unknown to this
project (it could not download them when this was written), so a download is checked by its length in
characters as read from the repository and its sha256 is printed for the user to keep. Judge files get
their MTurk worker ids replaced by `judge-0001`, ... in order of first appearance, as the shipped ones.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import urllib.parse
import urllib.request
from dataclasses import dataclass
from pathlib import Path

SHIPPED_DIR = Path(__file__).parent / "zhang2023"
REPO = "kreimanlab/TuringTest"
RAW_BASE = "https://raw.githubusercontent.com"
JUDGES = "d6ef4de8955b774b0035f6ec08c58f3ee238dd3d"  # the commit of the judge files
DICTS = "0dcd913b68b8b333c721bd3958db463de3cae2ad"  # the commit of benchmarking/groundtruth_dictionaries


class DataError(Exception):
    """A name that is not in the catalogue, or a download that is not the pinned file."""


@dataclass(frozen=True)
class DataFile:
    name: str
    what: str
    source: str  # path in the repository
    commit: str
    sha256: str | None = None  # of the file as shipped (pseudonymised where it says so)
    chars: int | None = None  # length of the source text, for a file fetched without a known sha256
    shipped: bool = False


SHIPPED = [
    DataFile("word.json", "word association: 1 500 responses to 150 cues", "benchmarking/groundtruth_dictionaries/word.json",
             DICTS, "293db002910549e0f9fb0d83ae794a860c847b1aa0dcde6925fff4d83a666b47", shipped=True),
    DataFile("caption.json", "captioning: 7 000 captions of 1 000 images", "benchmarking/groundtruth_dictionaries/caption.json",
             DICTS, "1c7ef3106124afd3800a9655a1d6f33ca39ba57dc742ad08ffff17971dd886de", shipped=True),
    DataFile("object.json", "object detection: 4 040 label sets of 808 images", "benchmarking/groundtruth_dictionaries/object.json",
             DICTS, "40d014d7c3801006a3f099f05e50a7f02ed6f252d085be4434af9c1172d39394", shipped=True),
    DataFile("color.json", "colour: 3 492 colour words of 873 images", "benchmarking/groundtruth_dictionaries/color.json",
             DICTS, "c2cc154f9d2caf842aeb33eb21b230a050d766466cb07c70fab784ff7c426756", shipped=True),
    DataFile("trials_all.json", "conversation test: 188 verdicts with reasons", "Conversations/turing_online/trials_all.json",
             JUDGES, "f7def9fd4a7d1f5d838f84aaaa3ad7ac527f2ef1253c8aac6109bbf3645c949b", shipped=True),
    DataFile("humanjudge_Word_Feedback_testphase.json", "word: 2 000 human-judge trials, 50 judges (pseudonymised)",
             "wordAssociation/Plot/Data_all/humanjudge_Word_Feedback_testphase.json", JUDGES,
             "ce59047f9c33b4bb0e9eec673f33241ea9a5e0ca82b5d2a3d1d6de00650f6573", shipped=True),
    DataFile("humanjudge_Object_Feedback_testphase.json", "object: 2 000 human-judge trials, 50 judges (pseudonymised)",
             "objectDetection/Plot/Data_all/humanjudge_Object_Feedback_testphase.json", JUDGES,
             "53ee42fa1d471cdd645bea3904592484b908e9f217e7a4efa16b9aef823d6935", shipped=True),
    DataFile("control_words.tsv", "colour and object: the control question's word in and not in each of 1 213 "
             "pictures (oneWord/wrongWord of the task code, transcribed)",
             "colorDetection/Feedback_Color/static/js/task_color.js", JUDGES,
             "7cd7fa3ac081dbbe53c705807915518812f271f0f9cbcfe40c17b798667cc1ac", shipped=True),
]
REMOTE = [
    DataFile("humanjudge_Color_Feedback_testphase.json", "colour: 2 659 human-judge trials",
             "colorDetection/Plot/Data_all/humanjudge_Color_Feedback_testphase.json", JUDGES, chars=1_705_127),
    DataFile("humanjudge_Color_ChatGPT_testphase.json", "colour, ChatGPT round: human-judge trials",
             "colorDetection/Plot/Data_all/humanjudge_Color_ChatGPT_testphase.json", JUDGES, chars=1_243_807),
    DataFile("humanjudge_Object_ChatGPT_testphase.json", "object, ChatGPT round: human-judge trials",
             "objectDetection/Plot/Data_all/humanjudge_Object_ChatGPT_testphase.json", JUDGES, chars=1_556_165),
    DataFile("humanjudge_Word_ChatGPT_testphase.json", "word, ChatGPT round: human-judge trials",
             "wordAssociation/Plot/Data_all/humanjudge_Word_ChatGPT_testphase.json", JUDGES, chars=1_674_600),
    DataFile("humanjudge_fv.json", "free viewing: human-judge trials",
             "attentionPrediction/Plot/Data_all/humanjudge_fv.json", JUDGES, chars=538_892),
    DataFile("fv.json", "free viewing: scanpaths of humans and models", "benchmarking/groundtruth_dictionaries/fv.json",
             DICTS, chars=871_361),
]
CATALOGUE = {f.name: f for f in SHIPPED + REMOTE}


def source_url(f: DataFile, base: str = RAW_BASE) -> str:
    return f"{base.rstrip('/')}/{REPO}/{f.commit}/{urllib.parse.quote(f.source)}"


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def lookup(name: str) -> DataFile:
    if name not in CATALOGUE:
        raise DataError(f"no data file {name!r}; `turinglab data list` shows the names")
    return CATALOGUE[name]


def pseudonymise(trials: dict) -> dict:
    """Each distinct workerID becomes judge-0001, judge-0002, ... in order of first appearance."""
    names: dict[str, str] = {}
    for trial in trials.values():
        if isinstance(trial, dict) and "workerID" in trial:
            trial["workerID"] = names.setdefault(trial["workerID"], f"judge-{len(names) + 1:04d}")
    return trials


def get(name: str, out: Path, base: str = RAW_BASE, timeout: float = 60.0) -> tuple[Path, str]:
    """Copy a shipped file or download a remote one into `out`; (the file written, a note on how it was checked)."""
    f = lookup(name)
    out.mkdir(parents=True, exist_ok=True)
    dest = out / f.name
    if f.shipped:
        shutil.copyfile(SHIPPED_DIR / f.name, dest)
        return dest, f"copied from the package (sha256 {f.sha256[:12]}… checked by the tests)"
    url = source_url(f, base)
    try:
        with urllib.request.urlopen(url, timeout=timeout) as r:  # noqa: S310 - a fixed https URL, or the user's --base
            raw = r.read()
    except OSError as exc:
        raise DataError(f"cannot fetch {url}: {exc}; check the network, or pass --base with a mirror") from None
    digest = hashlib.sha256(raw).hexdigest()
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise DataError(f"{url} is not UTF-8 text; nothing written") from None
    if len(text) != f.chars:
        raise DataError(f"{url} has {len(text)} characters, the pinned file {f.chars}; nothing written")
    if f.name.startswith("humanjudge_"):
        text = json.dumps(pseudonymise(json.loads(text)))
    dest.write_text(text, encoding="utf-8")
    return dest, (f"sha256 unknown to this project: verified by size ({f.chars} characters); "
                  f"the download's sha256 is {digest}" + ("; worker ids pseudonymised" if f.name.startswith("humanjudge_") else ""))
