"""The optional demographic survey after a participant's first game (SPEC §1).

Answers are stored as these strings; ordinal answers are listed in order, so their
position is their code in the analysis (0 = least).
"""

from __future__ import annotations

from turinglab.i18n import NP_

GENDERS = ("female", "male", "non-binary", "other", "prefer not to say")
EDUCATION = ("none", "high school", "some college", "bachelor", "master", "doctorate")
CHATBOT_USE = ("never", "monthly", "weekly", "daily")  # ordinal
LLM_KNOWLEDGE = ("nothing", "a little", "some", "a lot", "I research them")  # ordinal
# Jones & Bergen also asked whether the participant had been to the site before ("prior visits")
PRIOR_VISITS = ("none", "once", "a few times", "many times")  # ordinal
AGE_RANGE = (16, 120)
# the answers as the form shows them: the stored value, translated with its field as the context
# (pgettext(field, answer) in the templates)
# (the same English word may need two translations: "none" as education and as prior visits)
SHOWN = (  # every answer of the form, written out so that `turinglab i18n extract` finds them
    NP_("gender", "female"), NP_("gender", "male"), NP_("gender", "non-binary"), NP_("gender", "other"),
    NP_("gender", "prefer not to say"),
    NP_("education", "none"), NP_("education", "high school"), NP_("education", "some college"),
    NP_("education", "bachelor"), NP_("education", "master"), NP_("education", "doctorate"),
    NP_("chatbot_use", "never"), NP_("chatbot_use", "monthly"), NP_("chatbot_use", "weekly"), NP_("chatbot_use", "daily"),
    NP_("llm_knowledge", "nothing"), NP_("llm_knowledge", "a little"), NP_("llm_knowledge", "some"),
    NP_("llm_knowledge", "a lot"), NP_("llm_knowledge", "I research them"),
    NP_("prior_visits", "none"), NP_("prior_visits", "once"), NP_("prior_visits", "a few times"),
    NP_("prior_visits", "many times"),
)


def ordinal(answer: str | None, scale: tuple[str, ...]) -> float:
    """The answer's position on an ordinal scale; NaN when missing or not on the scale."""
    try:
        return float(scale.index(answer))
    except ValueError:
        return float("nan")
