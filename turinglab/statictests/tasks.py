"""The six tasks of Zhang et al. (2023) as `StaticTask` descriptions: what the judge page says and
shows of an item of each, and the preset's rules (registered by statictests/plugin.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from turinglab.i18n import N_
from turinglab.plugins.kinds import StaticTask

FRAGMENTS = Path(__file__).with_name("fragments")


def fragment(name: str, picture: bool = False) -> str:
    """The Jinja source of a task's part of the judge page (after the picture, for picture tasks)."""
    own = (FRAGMENTS / f"{name}.html").read_text(encoding="utf-8")
    return ((FRAGMENTS / "picture.html").read_text(encoding="utf-8") + own) if picture else own


def _box(b: Any) -> dict[str, Any] | None:
    """A box as [x, y, w, h] (pixels of the image, or fractions when all are <= 1), with an optional label."""
    label = None
    if isinstance(b, dict):
        label, b = b.get("label"), b.get("box") or b.get("bbox")
    if isinstance(b, (list, tuple)) and len(b) == 4 and all(isinstance(v, (int, float)) for v in b):
        return {"xywh": [float(v) for v in b], "label": None if label is None else str(label)}
    return None


def _object(p: dict, text: str | None) -> dict:
    return {"labels": [str(x) for x in p.get("labels", [])] or [x.strip() for x in (text or "").split(",")],
            "boxes": [_box(b) for b in p.get("boxes", []) if _box(b) is not None]}


def _color(p: dict, text: str | None) -> dict:  # Zhang: the whole image and one of 11 colour names (no marked point)
    return {"color": str(p.get("color") or text or "")}


def _fv(p: dict, text: str | None) -> dict:  # at most 15 fixations (Zhang); pixels of the frame, or [-1, 1] fractions
    return {"scanpath": [[float(x), float(y)] for x, y in p.get("scanpath", [])][:15],
            "frame": [int(v) for v in p.get("frame", (1280, 1024))]}


def _conversation(p: dict, text: str | None) -> dict:
    turns = p.get("turns") or [{"speaker": s.strip(), "text": t.strip()} for s, _, t in
                               (ln.partition(":") for ln in (text or "").splitlines()) if t]
    turns = [{"speaker": str(t["speaker"]), "text": str(t["text"])} for t in turns]
    return {"turns": turns, "speakers": sorted({t["speaker"] for t in turns})[:2]}


# Zhang et al.'s per-task rules (seed paper, Sec. 3 and Supp. S2-S7), applied by `preset_study`
# for the zhang-2023 preset: the page's minimum viewing time (colour and object: 1.5 s in their task code;
# captioning: 3 s), the control-accuracy flag (free viewing: 7 of 12; conversations: 15 of 20
# topics, `topics.MIN_TOPIC_ACCURACY`) and the native-speaker flag (captioning).
ZHANG_TASKS = (
    StaticTask("word", N_("a cue word and the word someone associated with it"),
               N_("Was this association made by a human or a machine?"), fragment("word"), needs_text=True),
    StaticTask("caption", N_("a picture and a caption written for it"), N_("Was this caption written by a human or a machine?"),
               fragment("caption", picture=True), images=True,
               rules={"session": {"min_rt_ms": 3000}, "exclusions": {"native_language": "english"}}),
    StaticTask("object", N_("a picture and the objects someone named in it"),
               N_("Were these objects named by a human or a machine?"), fragment("object", picture=True), images=True,
               show=_object, rules={"session": {"min_rt_ms": 1500}}),
    StaticTask("color", N_("a picture and the main colour someone named for the whole picture (one of 11 colours)"),
               N_("Was this colour named by a human or a machine?"), fragment("color", picture=True), images=True,
               show=_color, rules={"session": {"min_rt_ms": 1500}}),
    StaticTask("fv", N_("a picture and where someone's eyes looked while viewing it (a replayable sequence of fixations)"),
               N_("Do these eye movements come from a human or a machine?"), fragment("fv", picture=True), images=True,
               show=_fv, rules={"exclusions": {"min_control_accuracy": 7 / 12}}),
    StaticTask("conversation", N_("part of a text conversation between two speakers"), None, fragment("conversation"),
               control_question=N_("What was this conversation mainly about?"), show=_conversation),
)
