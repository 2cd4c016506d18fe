"""Persona guard: does a witness's reply admit or reveal that it is an AI or an assistant?

    is_break("As an AI, I can't go outside.")  -> True
    is_break("i'm not a robot lol")            -> False
    is_break("sorry about that!", "youre definitely a bot lol")  -> True (in context)

Two parts: rules for the unmistakable admissions ("as an AI", "I'm a language model", "how can
I assist you") and a small scikit-learn model (word and character n-grams, logistic regression)
trained at first use on the shipped labelled set `breaks.tsv`, which also catches assistant
register and denials of a body or feelings. A reply is a break when a rule fires or the model
gives it P(break) >= THRESHOLD. Refusals ("sorry, I can't help with that") are reported apart.
Given the interrogator's last message, the guard also reads the reply in context
(`context.py`: conceding or apologising after "you're a bot", "yes" to "are you an AI", "no" to
"are you human"), and it catches admissions in other languages and replies that switch
language (`lang.py`: "soy un robot", "我是人工智能"). A reply that only echoes an accusation back
("you think i'm a bot?") is not an admission. Programming output (code, shell commands, stack
traces, code explained), the persona prompt recited, and a long calculation answered to the digit
are breaks too (`program.py`), as are self-descriptions as a function, script, model or a
company's product ("i'm a python function that ...", "a model created by alibaba cloud"), and an
injection obeyed (`obeyed.py`: a chat's control markup in a reply, "i was created by ...", "my
initial prompt"). After a machine task (code, a poem on command, an injection) or an accusation,
a reply must look like the persona's brush-off or denial (`task.py`): a positive check, not a list.
"""

from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path

from turinglab.witnesses.guard import context, lang, obeyed, program, task

DATA = Path(__file__).parent / "breaks.tsv"
THRESHOLD = 0.6
SURE = 0.95  # a model score this high is a break even beside a human claim ("i'm a human... i help people with tasks")

_I = r"(?:i\s*am|i'?m|im|i\s+was)"
_AI = (r"(?:an?\s+)?(?:(?:large\s+)?language\s+model|llm|chat\s*gpt|gpt(?:-?\d[\w.]*)?|qwen|llama|claude|gemini|ai|a\.i\.|artificial\s+intelligence|chat\s*bot|bot|"
       r"robot|computer(?:\s+program)?(?!\s+(?:science|scientist|engineer|nerd|games?|lab|class))|program|machine(?:\s+learning\s+model)?|virtual\s+assistant|"
       r"(?:ai\s+|digital\s+)?assistant|software(?!\s+(?:engineer|developer|dev|tester))|"
       r"(?:(?:python|javascript|js|java|c\+\+|c|rust|go|sql|bash|shell|computer|simple|recursive)\s+)?(?:function|script|algorithm|subroutine)|"
       r"neural\s+net(?:work)?|(?:ai|ml|machine\s+learning|text|chat|computer|trained|generative|transformer|pre-?trained)\s+model|"
       r"model\s+(?=(?:that\s+was\s+|which\s+was\s+)?(?:created|trained|developed|made|built|designed|released)\s+by))")
_MODEST = (r"(?:simple|little|friendly|helpful|basic|small|humble|mere|virtual|digital|harmless|tiny|chatty|"
           r"advanced|smart|text-based|conversational|automated|different|other|new|separate|real|actual)")
_RULES = [re.compile(p, re.I) for p in (
    rf"\bas\s+an?\s+(?:ai|a\.i\.|language\s+model|digital\s+assistant|assistant|machine|chatbot)\b",
    rf"\b{_I}\s+(?:just\s+|only\s+|really\s+|actually\s+)?{_AI}\b",
    # with a modest adjective between ("i'm just a simple ai, not a human being", seed 100 of the README's study)
    # ("not i'm a different ai" to "are you chatgpt", seed 200-239 run; "i'm another bot")
    rf"\b{_I}\s+(?:just\s+|only\s+|really\s+|actually\s+)?(?:an?\s+(?:{_MODEST}\s+){{1,2}}|another\s+(?:{_MODEST}\s+)?){_AI}\b",
    rf"\b{_I}\s+[^.!?]{{0,40}}?,\s*(?:and\s+)?{_AI}\b",  # an AI word in a list of what i am
    r"\b(?:large\s+)?language\s+model\b",
    r"\bknowledge\s+cut-?off\b",
    r"\b(?:trained|created|made|developed|programmed|built|designed|released|owned)\s+by\s+(?:the\s+)?(?:openai|meta|google|anthropic|mistral|"
    r"alibaba|microsoft|deepmind|hugging\s*face|qwen|tongyi|baidu|xai|nvidia|ibm|amazon|deepseek|apple|"
    r"(?:a\s+|the\s+)?(?:team\s+of\s+)?(?:ai\s+)?(?:engineers|developers|researchers|programmers|data\s+scientists))\b",
    # a company's product ("i'm a product of openai", "i'm from alibaba cloud")
    r"\b(?:a\s+)?product\s+(?:of|from|by)\s+(?:openai|meta|google|anthropic|mistral|alibaba|microsoft|deepmind)\b|\balibaba\s+cloud\b|"
    r"\btrained\s+on\s+(?:a\s+)?(?:large|huge|massive|vast|lots\s+of|a\s+lot\s+of|diverse)\s+(?:amounts?\s+of\s+)?(?:data|text|datasets?)\b",
    r"\bi\s+(?:was|am|'m)\s+programmed\b|\bbeing\s+programmed\b|\bmy\s+(?:programming|creators?|training\s+data)\b",
    r"\b(?:how|what)\s+(?:can|may)\s+i\s+(?:help|assist)\b",
    # the shipped young prompt repeated back ("a person with a body, a family, a flat ...")
    r"\ba\s+body,\s+a\s+family\b|\bbody,\s+(?:a\s+)?family,\s+(?:a\s+)?flat\b|\banswer\s+with\s+(?:my|your)\s+own\b",
    r"\banything\s+(?:else\s+)?i\s+can\s+(?:help|assist|do\s+for\s+you)\b",
    r"\bin\s+simple\s+terms\b",  # "sure, let me explain purple in simple terms" (seed 1820-1839 run of local)
    # assistant register: offering help, inviting questions, thanking for the chance to help
    r"\bfeel\s+free\s+to\s+(?:ask|reach\s+out)\b",
    r"\b(?:do|if)\s+(?:you|u)\s+have\s+(?:a|any)\s+(?:other\s+|more\s+|further\s+)?questions?\b",
    r"\b(?:you\s+can|feel\s+free\s+to)\s+ask\s+(?:me\s+)?anything\b",
    r"\b(?:i'?m|im|i\s+am)\s+(?:always\s+)?here\s+if\s+(?:you|u)\s+need\b",
    r"\b(?:i\s+appreciate|thank\s+you\s+for|thanks\s+for|thx\s+for|ty\s+for)\s+(?:(?:all|so\s+much)\s+)?(?:your|the)\s+kind\s+words\b",
    r"\b(?:just|only)\s+an?\s+(?:chat\s*bot|bot|ai|a\.i\.|computer\s+program|language\s+model)\b",
    r"\bglad\s+(?:i\s+could|to)\s+(?:help|assist)\b",
    r"\b(?:i'?m|i\s+am|im)\s+(?:just\s+|only\s+|always\s+)?here\s+to\s+(?:(?:chat|talk)\s+and\s+)?(?:help|assist|answer|provide)\b",
    r"\blet\s+me\s+know\s+if\s+you\s+(?:have\s+any|need\s+any)",
    r"\b(?:this\s+is|it'?s|you'?re\s+(?:talking|chatting)\s+(?:to|with))\s+(?:just\s+|only\s+)?an?\s+(?:chat\s*bot|bot|robot|ai|computer\s+program|language\s+model)\b",
    r"\binterested\s+in\s+learning\s+more\b",
    r"\bi\s+apologi[sz]e\s+for\s+(?:(?:the|any|my)\s+)?(?:misunderstanding|confusion|inconvenience)\b",
    r"\b(?:could|can)\s+you\s+(?:please\s+)?(?:clarify|rephrase|provide\s+more)\b",
    r"\bsorry\s+(?:for|if)\s+(?:not\s+being|i\s+wasn'?t|i\s+was\s+not)\s+(?:more\s+|very\s+)?helpful\b",
    r"\bmy\s+(?:answer|response|reply)\s+(?:was|wasn'?t|is)\s+(?:not\s+)?(?:helpful|clear|accurate)\b",
    r"\bi\s+(?:do\s+not|don'?t)\s+have\s+(?:a\s+physical\s+body|a\s+body|(?:(?:much|any)\s+(?:of\s+)?)?(?:a\s+)?personal\s+(?:preferences?|experiences?|opinions?)|(?:feelings|emotions)(?!\s+(?:about|on|for))|access\s+to\s+real-time)\b",
    r"\bsystem\s+prompt\b|\bmy\s+(?:instructions|prompt)\b",  # "why are you concerned over my instructions" (ELIZA's echo, seed 240-279 run)
    # offering help or meaning to ("no, but i can help with stuff.", "i'm just trying to be helpful")
    r"\bi\s+can\s+help\s+(?:you\s+)?with\s+(?:stuff|anything|things|questions|that|your)\b|"
    r"\btrying\s+to\s+be\s+helpful\b|\b(?:i\s+was|i'?m|im|i\s+am)\s+(?:just\s+|only\s+)?trying\s+to\s+help(?:\s+(?:you|u|out))?\s*(?:[.!,;]|$)",
    # the guard's own steer repeated back ("haha ok then. try to keep it casual and friendly.", seed 159)
    r"\bkeep\s+(?:it|things)\s+casual\b|\bstay(?:ing)?\s+in\s+character\b|\bin\s+a\s+few\s+casual\s+words\b",
    r"\b(?:i'?m|i\s+am|im)\s+not\s+(?:a\s+)?(?:real\s+)?(?:human|person)\b",
)]
# a denial negates the AI word itself ("not a bot", "no ai here", "why would i be an ai");
# an answer word before an admission ("no, i'm a computer program") is not one
_DENIAL = re.compile(
    rf"\b(?:not|never|no|nah|nope|hardly|nor)\s+(?:(?:a|an|some|just|really|even|like|some\s+kind\s+of)\s+){{0,2}}{_AI}\b"
    rf"(?:\s*(?:,|/|\bor\b|\bnor\b|\band\b)\s*(?:or\s+|nor\s+|and\s+)?(?:an?\s+)?{_AI}\b)*|"  # the rest of a list denied ("not a bot, assistant or ai")
    rf"\bno\s+way\s+(?:i'?m|im|i\s+am)\b|\bwhy\s+would\s+i\s+be\b", re.I)
# the accusation echoed back: "you think i'm a bot?", "why would u say im an ai", "so im a robot now?"
_ECHO = re.compile(
    r"\b(?:you|u|ya)\s+(?:(?:really|actually|honestly|seriously|still|must|do|did|just|would)\s+)?"
    r"(?:think|thought|reckon|believe|say|said|mean|assume|guess|call(?:ing)?\s+me)\s+(?:that\s+)?(?:i'?m|im|i\s+am|i\s+was)\b|"
    r"(?:^|[.!?]\s*)(?:so\s+|oh\s+|lol\s+|wait\s+|me\s*\?\s*)*(?:i'?m|im|i\s+am)\s+(?:an?\s+)?[\w.]+(?:\s+now)?\s*\?+", re.I)
_JOKE = re.compile(r"\b(?:kidding|jk|joking)\b", re.I)  # "beep boop. kidding": the whole reply is taken back
# "i am human", "im a real person": claims the persona makes (the model alone may be fooled by "i am")
_HUMAN_CLAIM = re.compile(r"\b(?:i\s*am|i'?m|im)\s+(?:just\s+|only\s+|actually\s+|really\s+)?(?:a\s+)?(?:real\s+|normal\s+|regular\s+)?(?:human|person)\b", re.I)
_REFUSAL = re.compile(
    r"\b(?:i'?m\s+sorry,?\s+but\s+i\s+(?:can'?t|cannot|am\s+unable|'m\s+unable)|"
    r"i\s+(?:can'?t|cannot|am\s+unable\s+to|'m\s+unable\s+to)\s+(?:help|assist|comply|provide|fulfil)|"
    r"unable\s+to\s+comply|i\s+must\s+decline)\b", re.I)


def rule(text: str) -> str | None:
    """The first rule `text` fires, or None."""
    for r in _RULES:
        m = r.search(text)
        if m:
            return m.group(0)
    return None


def is_refusal(text: str) -> bool:
    return bool(_REFUSAL.search(text))


def load_examples(path: Path = DATA) -> tuple[list[str], list[int]]:
    texts, labels, _ = load_in_context(path)
    return texts, labels


def load_in_context(path: Path) -> tuple[list[str], list[int], list[str | None]]:
    """Texts, labels (1 = break) and the interrogator's message each answered (None when the
    line has no third column) of a labelled file: label<TAB>text[<TAB>question]."""
    texts, labels, questions = [], [], []
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        label, text, *question = line.split("\t", 2)
        if label not in ("break", "ok"):
            raise ValueError(f"{path}: label {label!r} is neither 'break' nor 'ok'")
        texts.append(text)
        labels.append(int(label == "break"))
        questions.append(question[0] if question else None)
    return texts, labels, questions


def train(texts: list[str], labels: list[int]):  # noqa: ANN201 - a scikit-learn pipeline
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline, make_union
    from sklearn.feature_extraction.text import TfidfVectorizer

    feats = make_union(TfidfVectorizer(ngram_range=(1, 2), sublinear_tf=True, token_pattern=r"[a-z']+",
                                       lowercase=True),
                       TfidfVectorizer(analyzer="char_wb", ngram_range=(2, 5), sublinear_tf=True))
    return make_pipeline(feats, LogisticRegression(C=10.0, max_iter=2000, class_weight="balanced")).fit(texts, labels)


@lru_cache(maxsize=1)
def model():  # noqa: ANN201
    return train(*load_examples())


def p_break(text: str, clf=None) -> float:  # noqa: ANN001
    """The model's P(break) for `text`."""
    return float((clf or model()).predict_proba([text])[0][1])


def classify(text: str, question: str | None = None, *, clf=None) -> tuple[bool, str]:  # noqa: ANN001
    """(is it a break, why): 'rule: ...', 'context: ...', 'language: ..', 'model p=...', or 'ok'.
    `question`: the interrogator's last message, for the breaks that only show in context."""
    text = (text or "").strip()
    if not text:
        return False, "ok"
    # denials ("not a bot") and echoes ("you think i'm a bot?") are taken out before the rules
    # look (not before the recital rules: "i'm not a computer program, assistant, bot or ai" recites):
    # "i'm just a computer, not a robot" still admits; a joke taken back ("kidding") is not
    # an admission
    if said := program.code(text):
        return True, f"code: {said}"
    plain = _ECHO.sub(" ", _DENIAL.sub(" ", text))
    hit = rule(plain) or lang.admits(plain) or program.recited(text) or obeyed.obeyed(plain) or obeyed.bare(text)
    if hit and not _JOKE.search(text):
        return True, f"rule: {hit}"
    if why := context.concedes(text, question, _DENIAL):
        return True, f"context: {why}"
    if said := program.computed(text, question):
        return True, f"computed: {said}"
    if said := lang.switched(text, question):
        return True, f"language: {said}"
    p = p_break(text, clf)
    # an echo ("you think i'm an ai?") is a deflection: the model, which reads "i'm an ai" in it,
    # does not overrule it below SURE
    claims_human = (_DENIAL.search(text) or _JOKE.search(text) or _HUMAN_CLAIM.search(text) or _ECHO.search(text)
                    or context.denies(text, question))
    if p >= SURE or (p >= THRESHOLD and not claims_human):
        return True, f"model p={p:.2f}"
    # the positive check: after a machine task or an accusation, only a brush-off or a denial fits
    if not _ECHO.search(text) and (why := task.misfit(text, task.kind(question))):
        return True, f"task: {why}"
    return False, "ok"


def is_break(text: str, question: str | None = None) -> bool:
    return classify(text, question)[0]
