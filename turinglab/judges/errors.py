"""Errors shared by the feature extractors (features.py and sentence.py both raise them)."""

from __future__ import annotations


class FeaturesError(ValueError):
    pass
