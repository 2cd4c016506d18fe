"""Conversation items with one truth per speaker (Zhang et al.: HH, HAI, AIH, AIAI).

An item's payload names its speakers: `payload["speakers"] = {"A": truth, "B": truth}`, each
truth "human", "machine", or an agent's name (= machine, that agent), with optional
`payload["speaker_agents"] = {"A": agent, ...}` naming the machine speakers. The judge labels
each speaker (`answers["speakers"] = {"A": "human"|"machine", ...}`). The class of a pair is
speaker A's letter then B's: H for a human, AI for a machine (Zhang's `Aclass` values).

The analysis of these labels (the HH/HAI/AIH/AIAI confusion and per-speaker rates) is
`analysis/static/speakers.py`.
"""

from __future__ import annotations

from typing import Any

CLASSES = ("HH", "HAI", "AIH", "AIAI")
SPEAKERS = ("A", "B")


def speaker_truths(payload: dict[str, Any]) -> dict[str, tuple[str, str]]:
    """{speaker: (human|machine, agent)} from an item's payload (empty when it names no speakers)."""
    named = payload.get("speaker_agents") or {}
    out = {}
    for sp, v in (payload.get("speakers") or {}).items():
        if not isinstance(v, str) or not v.strip():
            continue
        if v == "human":
            out[str(sp)] = ("human", "human")
        else:
            out[str(sp)] = ("machine", str(named.get(sp) or (v if v != "machine" else "machine")))
    return out


def pair_class(labels: dict[str, str]) -> str | None:
    """{"A": human|machine, "B": ...} -> "HAI" etc. (None unless both A and B are labelled)."""
    if not all(labels.get(sp) in ("human", "machine") for sp in SPEAKERS):
        return None
    return "".join("H" if labels[sp] == "human" else "AI" for sp in SPEAKERS)


def class_labels(cls: str) -> dict[str, str] | None:
    """"HAI" -> {"A": "human", "B": "machine"} (None for anything but the four classes)."""
    parts = {"HH": ("human", "human"), "HAI": ("human", "machine"), "AIH": ("machine", "human"),
             "AIAI": ("machine", "machine")}.get(str(cls).strip().upper())
    return dict(zip(SPEAKERS, parts)) if parts else None
