import math

from turinglab.game import survey


def test_ordinal_codes_follow_the_scale_order():
    assert [survey.ordinal(a, survey.CHATBOT_USE) for a in survey.CHATBOT_USE] == [0, 1, 2, 3]
    assert survey.ordinal("I research them", survey.LLM_KNOWLEDGE) == 4


def test_missing_or_unknown_answers_are_nan_not_a_crash():
    assert math.isnan(survey.ordinal(None, survey.CHATBOT_USE))
    assert math.isnan(survey.ordinal("hourly", survey.CHATBOT_USE))
