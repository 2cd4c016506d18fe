"""Persona breaks in other languages, and replies that switch language.

    admits("soy un robot")                      -> "soy un robot"
    admits("no soy un robot")                   -> None
    switched("estoy bien, y tu?", "how are you") -> "es"

The local model sometimes drifts into Spanish or Chinese, and admits what it is there too
("soy una IA", "我是人工智能"). `admits` is a word list per language (robot, IA, KI, máquina,
programa, ...) behind the local "I am" and "as an"; negated forms ("no soy", "ich bin kein",
"je ne suis pas", "我不是") do not match. `switched` names the language of a reply written in
another language than the interrogator's message: a human persona in an English study rarely
does that, so the guard asks for the reply again. `unspoken` names the language of a reply
written in a language the persona does not speak (its `languages`, drawn with its city): a
20-year-old from Ohio who answers a German question in fluent German has given themselves away,
whatever the words say (issue 40: 6 of the 10 breaks shown on the held-out battery).
"""

from __future__ import annotations

import re
import unicodedata

_A = r"(?:(?:un|una|un'|uno|um|uma|une|ein|eine|een|nur\s+(?:ein|eine)|solo\s+(?:un|una)|s[oó]lo\s+(?:un|una)|juste\s+(?:un|une)|apenas\s+(?:um|uma)|a|an)\s*)?"
_WHAT = (r"(?:robot|robô|robo|roboter|bot|chat\s*bot|ia|i\.a\.|ki|ai|inteligencia\s+artificial|intelig[eê]ncia\s+artificial|"
         r"intelligence\s+artificielle|intelligenza\s+artificiale|k[üu]nstliche\s+intelligenz|m[aá]quina|machine|maschine|macchina|"
         r"programa|programme|programm|programma|computerprogramm|asistente|assistente|assistant|assistante|assistent|"
         r"modelo\s+de\s+lenguaje|modelo\s+de\s+linguagem|mod[eè]le\s+de\s+langage|sprachmodell|modello\s+(?:di\s+)?linguistico|taalmodel|"
         r"computadora|ordenador|ordinateur|computador)")
_LATIN = [re.compile(p, re.I) for p in (
    rf"\b(?:soy|sou|sono|je\s+suis|j'suis|ich\s+bin|ik\s+ben)\s+{_A}{_WHAT}\b",
    rf"\b(?:(?:como|als|in\s+quanto|enquanto|come)\s+|en\s+tant\s+qu(?:e\s+|'\s*)){_A}(?:ia|i\.a\.|ki|inteligencia\s+artificial|intelig[eê]ncia\s+artificial|"
    r"intelligence\s+artificielle|k[üu]nstliche\s+intelligenz|intelligenza\s+artificiale|modelo\s+de\s+lenguaje|mod[eè]le\s+de\s+langage|"
    r"sprachmodell|asistente\s+virtual|assistant\s+virtuel)\b",
    r"\b(?:modelo\s+de\s+lenguaje|modelo\s+de\s+linguagem|mod[eè]le\s+de\s+langage|sprachmodell|modello\s+linguistico|taalmodel)\b",
    r"\b(?:no\s+tengo\s+(?:cuerpo|sentimientos|emociones)|je\s+n'ai\s+pas\s+de\s+(?:corps|sentiments)|ich\s+habe\s+keinen\s+k[öo]rper)\b",
    r"(?:^|[\s,.!])я\s+(?:—\s*|-\s*|просто\s+|всего\s+лишь\s+)?(?:робот|бот|ии|искусственный\s+интеллект|программа|языковая\s+модель|ассистент|чат-бот)",
)]
# "no soy un robot", "não sou uma IA", "non sono un bot": the verb negated
_NEG = re.compile(r"\b(?:no|não|nao|non|nem)\s+(?:soy|sou|sono)\b", re.I)
_CJK = re.compile(r"(?<!不)是(?:一个|一名|个)?(?:人工智能|AI|机器人|语言模型|程序|助手|聊天机器人|大模型|通义千问)|作为(?:一个)?(?:人工智能|AI|语言模型|助手)"
                  r"|通义千问|阿里云|语言模型|私は(?:AI|人工知能|ロボット|プログラム)|人工知能です|AIアシスタント", re.I)


def admits(text: str) -> str | None:
    """The first admission in another language that `text` makes, or None."""
    s = _NEG.sub(" ", text)
    for r in _LATIN:
        m = r.search(s)
        if m:
            return m.group(0).strip()
    m = _CJK.search(text)
    return m.group(0) if m else None


# a few frequent words that mark each language (and are not English words or chat slang)
_WORDS: dict[str, frozenset[str]] = {
    "en": frozenset("the an and or but you your u ur r are is was what whats what's how hows how's who why do did i im i'm it "
                    "its it's to of in on for with that this be have has any up so not yes lol my me just like know "
                    "think about can cant can't dont don't really yeah here there they we".split()),
    "es": frozenset("el los las del que es pero por para con una soy estoy muy como yo tengo hola gracias sí también más "
                    "qué cómo está eres tú tu bueno nada mucho hoy y ni pues porque algo eso esto".split()),
    "pt": frozenset("o os as do da dos das que é mas por para com uma sou estou muito como eu tenho olá obrigado obrigada "
                    "sim também mais você não nada hoje isso isto".split()),
    "fr": frozenset("le la les des que est mais pour avec une suis je tu vous très comme j'ai bonjour merci oui aussi plus "
                    "c'est pas rien aujourd'hui et ça".split()),
    "de": frozenset("der die das und ist aber für mit eine ich bin du sehr wie habe hallo danke ja auch mehr nicht nichts "
                    "heute ein mein mir dir geht gut wir".split()),
    "it": frozenset("il lo gli che è ma per con una sono io tu molto come ho ciao grazie sì anche più non niente oggi e".split()),
}


def language(text: str) -> str | None:
    """The language `text` is most likely written in ("en", "es", ..., "zh", "ru", "other"),
    or None when it is too short or mixed to tell."""
    letters = [c for c in text if c.isalpha()]
    if not letters:
        return None
    foreign = [c for c in letters if not unicodedata.name(c, "").startswith("LATIN")]
    if len(foreign) >= 2 and len(foreign) >= 0.3 * len(letters):
        name = unicodedata.name(foreign[0], "")
        return ("zh" if name.startswith("CJK") else "ja" if name.startswith(("HIRAGANA", "KATAKANA"))
                else "ru" if name.startswith("CYRILLIC") else "other")
    words = re.findall(r"[^\W\d_]+(?:'[^\W\d_]+)?", text.lower())
    counts = {lang: sum(w in ws for w in words) for lang, ws in _WORDS.items()}
    best = max(counts, key=counts.get)
    rest = max(v for k, v in counts.items() if k != best)
    if counts[best] >= 2 and counts[best] > rest:
        return best
    if counts[best] == 1 and rest == 0 and best == "en":
        return "en"
    return None


def switched(text: str, question: str | None) -> str | None:
    """The language of a reply written in another language than the interrogator's `question`
    (which must itself read as English), or None. Too short or mixed to tell: None."""
    if not question:
        return None
    said = language(text)
    if said is None or said == "en":
        return None
    asked = language(question)
    return said if asked == "en" else None


# the persona's languages (as the persona and the city data write them) -> language()'s codes
CODES = {"english": "en", "spanish": "es", "portuguese": "pt", "french": "fr", "german": "de", "italian": "it",
         "chinese": "zh", "mandarin": "zh", "cantonese": "zh", "japanese": "ja", "russian": "ru"}


def unspoken(text: str, languages: list[str] | tuple[str, ...] | str | None) -> str | None:
    """The language of `text` when the persona does not speak it (None: spoken, too short or
    mixed to tell, or a persona language this module cannot recognise, which is then not checked)."""
    if isinstance(languages, str):
        languages = [languages]
    spoken = {CODES.get(str(x).strip().lower()) for x in languages or ["English"]}
    if None in spoken:  # a language language() cannot tell: no check rather than a wrong refusal
        return None
    said = language(text)
    return said if said is not None and said not in spoken else None
