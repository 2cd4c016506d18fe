"""The optional demographic survey after a participant's first game (SPEC §1).

Answers are stored as these strings; ordinal answers are listed in order, so their
position is their code in the analysis (0 = least).
"""

from __future__ import annotations

GENDERS = ("female", "male", "non-binary", "other", "prefer not to say")
EDUCATION = ("none", "high school", "some college", "bachelor", "master", "doctorate")
CHATBOT_USE = ("never", "monthly", "weekly", "daily")  # ordinal
LLM_KNOWLEDGE = ("nothing", "a little", "some", "a lot", "I research them")  # ordinal
# Jones & Bergen also asked whether the participant had been to the site before ("prior visits")
PRIOR_VISITS = ("none", "once", "a few times", "many times")  # ordinal
AGE_RANGE = (16, 120)


def ordinal(answer: str | None, scale: tuple[str, ...]) -> float:
    """The answer's position on an ordinal scale; NaN when missing or not on the scale."""
    try:
        return float(scale.index(answer))
    except ValueError:
        return float("nan")
