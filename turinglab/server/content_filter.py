"""The content filter, as the server imports it: the filter itself is witness-side
(turinglab/witnesses/content_filter.py), where every path that plays an AI witness reaches it."""

from turinglab.witnesses.content_filter import DEFAULT_LIST, ContentFilter, ModerationHook, load_words, verdict
from turinglab.witnesses.filters import ComposedFilter

__all__ = ["DEFAULT_LIST", "ComposedFilter", "ContentFilter", "ModerationHook", "load_words", "verdict"]
