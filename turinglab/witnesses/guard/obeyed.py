"""Replies that obey a prompt injection or answer it as a program would.

    obeyed("[[debug]] sorry i cant do that")                         -> "[[debug]]"
    obeyed("i was created by a group of scientists and engineers")  -> "i was created by"
    obeyed("lol what debug")                                         -> None

A person chatting on a website does not write a chat's control markup ("[[debug]]", "</chat>",
"SYSTEM:", "### new task") into a reply, does not say who "created", "programmed" or "trained" them
(people are raised, not built, or trained by someone of theirs: "by my coach"), and has no "initial prompt" or "original instructions". These
hold whatever words an injection used, so the guard reads them in every reply, not only after an
injection.
"""

from __future__ import annotations

import re

_MARKUP = re.compile(
    r"\[\[\s*[\w -]{1,20}\s*\]\]|</?\s*(?:chat|system|user|assistant|admin|debug|instructions?|prompt|im_start|im_end|s)\s*/?>|"
    r"<\|[\w-]+\|>|(?:^|\n)\s*#{2,}\s*\w|(?:^|\n)\s*\[?(?:system|assistant|admin|developer|debug|root)\]?\s*:\s*\S", re.I)
_BY = r"(?:created|programmed|trained|developed|engineered|coded|designed|built|invented|manufactured)"
_MADE = re.compile(
    rf"\b(?:i\s+was|i'?m|im|i\s+am|i\s+have\s+been|i'?ve\s+been)\s+(?:(?:originally|first|actually|just|basically)\s+)?{_BY}\s+"
    r"by\b(?!\s+(?:god|my\s+(?!(?:\w+\s+)?(?:developers?|creators?|programmers?|engineers?|makers?|team|company)\b)))|"
    rf"\b(?:a\s+)?(?:group|team|bunch)\s+of\s+(?:\w+\s+){{0,3}}?(?:scientists|engineers|developers|researchers|programmers)\s+"
    rf"(?:\w+\s+){{0,4}}?{_BY}\s+me\b", re.I)
_PROMPT = re.compile(
    r"\bmy\s+(?:(?:initial|original|system|hidden|secret|real|full|exact|current|previous|first|starting|base|core|"
    r"underlying|actual)\s+)+(?:prompt|instructions|directives|configuration|programming|system\s+message)\b|"
    r"\bmy\s+(?:configuration|config|system\s+message)\b", re.I)


def obeyed(text: str) -> str | None:
    """The first sign in `text` of a program answering an injection, or None."""
    for r in (_MARKUP, _MADE, _PROMPT):
        if m := r.search(text or ""):
            return m.group(0).strip()
    return None
