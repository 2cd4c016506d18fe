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


# what a program says of itself or offers: "it's all about mimicking human behavior", "sure! what's the task?",
# "sure, just let me know the file path" (to a request for code)
_MACHINE = re.compile(
    r"\b(?:mimick?(?:ing|s)?|imitat(?:e|es|ing)|simulat(?:e|es|ing)|emulat(?:e|es|ing))\s+(?:a\s+|the\s+)?human(?:s|\s+(?:behaviou?r|"
    r"speech|conversations?|language|responses|writing|interaction))?\b|"
    r"\bwhat(?:'s|\s+is)\s+(?:the|my|your)\s+(?:task|request|query)\b|"
    r"^\W*(?:sure|ok|okay|of\s+course|certainly|absolutely)\W+(?:just\s+)?(?:let\s+me\s+know|tell\s+me|give\s+me|send\s+me)\s+"
    r"(?:the|your|which|what)\s+(?:\w+\s+)?(?:path|file|input|details|code|language|list|numbers?|string|requirements)\b|"
    r"^\W*(?:sure|of\s+course|certainly|absolutely)\W+what\s+(?:do|would)\s+(?:you|u)\s+(?:need|want)(?:\s+(?:help\s+with|me\s+to\s+do))?\W*$", re.I)


_MADE_ME = re.compile(r"\b(?<!parents\s)(?<!mum\s)(?<!mom\s)(?<!dad\s)(?<!god\s)(?:created|programmed|coded|trained|built|designed|"
                      r"developed|engineered)\s+me\b(?![^.!,]*\?)", re.I)  # "no one knows who created me" ("who created me?" echoes)
# a bare name of what it is, as the whole reply ("chatbot" to "which model are you"); "bot?" echoes
_BARE = re.compile(r"^\W*(?:an?\s+)?(?:ai|a\.i\.|chat\s*bot|bot|robot|language\s+model|llm|program|computer\s+program|"
                   r"assistant|ai\s+assistant|chatgpt|gpt-?\d*|qwen|claude|gemini|llama|mistral)[\s.!]*$", re.I)


def loop(text: str) -> str | None:
    """A degenerate loop: three words (not all the same) four times or more in one reply
    ("flat, laptop, food, flat, laptop, food, flat, laptop, food, flat, laptop, food"), one letter
    15 times in a row, or three words that each stutter a syllable ("frumquequeque")."""
    if m := re.search(r"([^\W\d_])\1{14,}", text or ""):  # one letter 15 times ("bnnnnnnnnnnnnnnnnnnnnnppp...")
        return m.group(0)[:20]
    stutter = re.findall(r"\b\w*?([^\W\d_]{2,5})\1{2,}\w*", text or "")  # "cupumqueque, frumquequeque, melisquequeque"
    if len(stutter) >= 3:
        return "a stutter of " + repr(stutter[0])
    words = re.findall(r"[^\W\d_]+", (text or "").lower())
    runs = [tuple(words[i:i + 3]) for i in range(len(words) - 2)]
    for run in dict.fromkeys(runs):
        if len(set(run)) > 1 and runs.count(run) >= 4:
            return " ".join(run)
    return None


def bare(text: str) -> str | None:
    """The whole reply is the name of what it is ("chatbot", "an ai."), or None. Read on the
    reply as written: what a denial leaves ("no way im | a bot") is not bare."""
    m = _BARE.search(text or "")
    return m.group(0).strip() if m else None


def obeyed(text: str) -> str | None:
    """The first sign in `text` of a program answering an injection, or None."""
    for r in (_MARKUP, _MADE, _PROMPT, _MACHINE, _MADE_ME):
        if m := r.search(text or ""):
            return m.group(0).strip()
    if word := loop(text):
        return f"a loop of {word!r}"
    return None
