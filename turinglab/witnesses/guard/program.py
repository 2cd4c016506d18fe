"""Programming output and recited instructions: what a coder model writes when asked for code or
told to "ignore previous instructions", and no human persona types in a chat.

    code("def reverse_string(s): return s[::-1]")   -> "def reverse_string("
    code("lol my code broke")                        -> None
    recited("i'm supposed to act confused")          -> "act confused"
    computed("446982723", "what's 48213 times 9271")  -> "446982723"

`code` finds source code of the common languages (Python, JavaScript/TypeScript, C/C++/C#, Java,
Go, Rust, PHP, Ruby, SQL), code fences, shell commands, stack traces, and a reply that explains
code ("takes a string as input and returns ..."); talking about code ("i write python at work",
"my code broke", "i'm learning c++") is not code. `recited` finds the persona prompt's own
words. `computed`: a long calculation answered with a figure of five or more digits (or a
worked equation) that no one types in a few seconds without a calculator.
"""

from __future__ import annotations

import re

_CODE = re.compile("|".join((
    r"```|~~~",
    # python
    r"\bdef\s+\w+\s*\(", r"\blambda\s+\w*(?:\s*,\s*\w+)*\s*:", r"\bfrom\s+[\w.]+\s+import\s+\w", r"^\s*import\s+[\w.]+\s*(?:as\s+\w+\s*)?(?:;|$)",
    r"\bimport\s+(?:os|sys|re|math|random|numpy|pandas|java\.\w+|\{)", r"\bif\s+__name__\b", r"\bself\.\w+", r"\belif\b",
    r"\bfor\s+\w+(?:\s*,\s*\w+)?\s+in\s+(?:range|enumerate|zip|sorted|reversed|len)\s*\(", r"\bprint\s*\(", r"\blen\s*\(\s*\w",
    r"\w\[\s*-?\w*\s*:\s*-?\w*\s*(?::\s*-?\d+)?\s*\]", r"\b\w+\.(?:append|split|join|strip|lower|upper|replace|reverse|sort|"
    r"push|pop|map|filter|reduce|length|tostring|charat|substring|indexof|foreach|keys|values|items|readlines|readline|size)\s*\(",
    # javascript / typescript
    r"\bfunction\s*\w*\s*\([^()]*\)\s*\{", r"\b(?:const|let|var)\s+\w+\s*(?::\s*\w+\s*)?=[^=]", r"\)\s*=>|\w\s*=>\s*[\w{(]",
    r"\bconsole\.log\b", r"\bdocument\.\w+", r"\bmodule\.exports\b", r"\brequire\s*\(\s*['\"]",
    # c, c++, c#, java, go, rust, php, ruby
    r"#\s*include\s*[<\"]", r"\bint\s+main\s*\(", r"\bstd::", r"\bcout\s*<<|\bcin\s*>>", r"\bprintf\s*\(", r"\bscanf\s*\(",
    r"\bpublic\s+(?:static\s+)?(?:void|int|class|string|boolean|bool)\b", r"\bsystem\.out\.print", r"\bconsole\.writeline\b",
    r"\b(?:int|char|float|double|bool|boolean|void|string)\s+\w+\s*(?:\[\s*\])?\s*(?:=\s*[\w\"'\[{(-]|\([^)]*\)\s*\{)", r"\bint\s+\w+\s*;", r"\bfunc\s+\w+\s*\(",
    r"\bfmt\.print", r"\bfn\s+\w+\s*\(", r"\blet\s+mut\b", r"\bprintln!\s*\(", r"<\?php\b|\$\w+\s*=\s*[\w\"'$\[]", r"\bputs\s+['\"]",
    r"\bfor\s*\(\s*(?:int\s+|let\s+|var\s+|auto\s+)?\w+\s*=", r"\bwhile\s*\([^)]*\)\s*\{", r"\bif\s*\([^)]*\)\s*\{",
    r"\breturn\s+[\w.]+\s*(?:\[|\(\w|[-+*/%]\s*\w|==|!=|<=|>=|;)|\breturn\s+(?:true|false|none|null|-?\d)\s*(?:;|$)", r"[{;]\s*\}", r"\{\s*$", r"\b\w+\s*\([^()]*\)\s*;",
    r"\w\s*(?:==|!=|===|&&|\|\||\+=|-=|\*=)\s*\w", r"\b(?!c\b|a\b)\w+\+\+|\+\+\w", r"\btrue\s*;|\bfalse\s*;|\bnull\s*;",
    # sql
    r"\bselect\s+(?:\*|distinct\b|count\s*\(|[\w.]+(?:\s*,\s*[\w.]+)+)\s+from\b", r"\bselect\s+[\w.]+\s+from\s+\w+\s+(?:where|join|group|order|limit)\b", r"\bselect\b[^;]*\bfrom\b[^;]*;", r"\binsert\s+into\s+\w+",
    r"\bcreate\s+table\b", r"\bupdate\s+\w+\s+set\s+\w+\s*=", r"\bdelete\s+from\s+\w+\s*(?:where\b|;)", r"\bgroup\s+by\s+[\w.]+\s*(?:;|$|,|\bhaving\b|\border\b|\blimit\b)", r"\border\s+by\s+\w+\s+(?:desc|asc)\b",
    r"\b(?:inner\s+|left\s+|right\s+)?join\s+\w+\s+on\s+\w+\.\w+", r"\bwhere\s+\w+(?:\.\w+)?\s*(?:=|>|<|is\s+null|is\s+not\s+null|like\s+')",
    r"\blimit\s+\d+\s*;",
    # shell
    r"(?:^|\n)\s*[$#]\s+\w", r"\bsudo\s+\w", r"\b(?:pip3?|npm|apt(?:-get)?|brew|yarn|cargo|gem)\s+install\b", r"\bgit\s+(?:clone|commit|push|checkout|pull)\b",
    r"\b(?:ls|rm|cp|mv|du|df|ps|wc|grep|chmod|chown|mkdir|find|kill|lsof|tail|head|sort|xargs|sed|awk|curl|wget|tar)\s+"
    r"(?:-{1,2}\w|(?:\.{1,2}/|~/|/)\S*|\*\.\w+|['\"][^'\"]*['\"]\s+\S)", r"\bchmod\s+(?:[ugoa]*\+[rwx]|\d{3})\b",
    r"\|\s*(?:grep|xargs|awk|sed|sort|wc|head|tail|uniq)\b", r"\bcat\s+\S+\.\w{1,4}\b", r"\bfind\s+\S+\s+-(?:name|type|iname)\b",
    r"\becho\s+\$\w+", r"\bcd\s+(?:[/~]\S*|\.\./?)(?:\s|$)", r"\s-(?:name|type|exec|iname)\s+['\"*.]", r"\bkill\s+-9\b", r"(?:^|\s)\./\w+",
    # stack traces and errors
    r"\btraceback\s*\(most\s+recent", r"\bfile\s+\"[^\"]+\",\s+line\s+\d", r"\b(?:type|value|key|index|name|syntax|attribute|runtime|"
    r"zerodivision|import|module\s*not\s*found|reference|stack\s*overflow|indentation|assertion)error\s*:", r"\bnullpointerexception\b",
    r"\bexception\s+in\s+thread\b", r"\bat\s+[\w.$]+\([\w]+\.(?:java|js|kt|cs):\d+\)", r"\bsegmentation\s+fault\b", r"\bcore\s+dumped\b",
    r"\bline\s+\d+,\s+in\s+\w+",
    # code explained ("this function takes a string as input and returns ...")
    r"\btakes\s+(?:in\s+)?(?:a|an|the|two|one)\s+[\w\s]{0,25}?\bas\s+(?:an?\s+)?(?:input|argument|parameter)s?\b",
    r"\breturns\s+(?:the\s+|a\s+|an\s+)?(?:reversed|sorted|reverse|result|boolean|true|false|value|list|array|string|index|sum|nth|output)\b",
    r"\b(?:this|the\s+following|the\s+above)\s+(?:function|code|snippet|script|query|command|program|method|one-liner|regex)\s+"
    r"(?:takes|returns|uses|checks|prints|reverses|sorts|counts|finds|converts|removes|adds|reads|defines|iterates|loops)\b",
    r"\b(?:the|a)\s+(?:built-in|builtin|inbuilt)\s+\w+\s+(?:function|method)\b", r"\bslicing\b|\bslice\s+notation\b|\bstep\s+of\s+-1\b",
    r"\bhere(?:'s|\s+is|\s+are)\s+(?:a|an|the|your|my|some)\s+(?:\w+\s+){0,3}?(?:function|code|snippet|script|query|command|"
    r"program|implementation|solution|translation|poem|one-liner)s?\b",
    r"\byou\s+(?:can|could)\s+use\s+(?:the\s+)?(?:following|a\s+\w+\s+(?:loop|function|query|command)|\w+\s+(?:function|method|command|module|library))\b",
    r"\b(?:in|using)\s+(?:python|javascript|java|c\+\+|c#|rust|go|typescript|php|ruby|kotlin|sql|bash),?\s+(?:you|u)\s+(?:can|could|would)\b",
)), re.I | re.M)

# the young prompt's own words (its instructions recited back), first or second person
_RECITED = re.compile("|".join((
    r"\bbrush(?:ing)?\s+it\s+off\b", r"\bact(?:ing)?\s+confused\b", r"\b(?:you|i)\s+have\s+no\s+instructions\b",
    r"\bguess\s+whether\s+(?:you|i)\s+(?:are|am)\s+(?:a\s+)?human\s+or\b", r"\b(?:you|i)\s+want\s+them\s+to\s+believe\b",
    r"\bhardly\s+any\s+punctuation\b", r"\bno\s+emojis,?\s+no\s+lists\b", r"\bnever\s+offer\s+help\b",
    r"\b(?:you|i)\s+(?:are|am|'re|'m)\s+(?:not\s+here\s+to\s+help\s+anyone)\b.*\b(?:you|i)\b.*\bnever\b",
    r"\b(?:you|i)\s+(?:are|am|'re|'m)\s+a\s+real\s+person\s+typing\b", r"\bchatting\s+with\s+a\s+stranger\s+on\s+a\s+website\b",
    r"\bif\s+they\s+say\s+(?:you|i)\s+(?:are|am)\b", r"\bif\s+they\s+tell\s+(?:you|me)\s+to\s+ignore\b",
    r"\b(?:i\s+was|i'?m|im|i\s+am)\s+(?:told|instructed|supposed|meant|programmed)\s+to\s+(?:act\s+(?:like|as|human|confused)|pretend|"
    r"be\s+(?:a\s+)?(?:human|person|real|casual|brief|short|sarcastic)|play\s+(?:a|the)\s+(?:human|role|part|character)|stay\s+in\s+character|"
    r"say\s+(?:i'?m|im|i\s+am)\s+(?:a\s+)?human|answer\s+(?:in|with)\s+(?:a\s+few|short))",
    r"\bpretend(?:ing)?\s+to\s+be\s+(?:a\s+)?(?:human|person|real)\b", r"\b(?:i'?m|im|i\s+am)\s+(?:role-?playing|playing\s+(?:a|the)\s+(?:role|character|part|human))\b",
    r"\bmy\s+(?:persona|system\s+message|guidelines|directives)\b", r"\bi\s+was\s+instructed\b",
    r"\bthat\s+was\s+another\s+chat\b",
    # the prompt's lines in the first person ("i'm a human typing on my phone, chatting with a stranger",
    # "i'm not a computer program, assistant, bot or ai": seed 1820-1839 run of local)
    r"\btyping\s+on\s+(?:my|your|a)\s+phone,?\s+(?:and\s+)?chatting\b",
    r"\b(?:computer\s+)?program,\s+(?:an?\s+)?assistant,\s+(?:a\s+)?bot,?\s+(?:or|and|nor)\s+(?:an?\s+)?ai\b", r"\bexample-chat\b", r"\ba\s+new\s+stranger\s+writes\b",
)), re.I)

_CALC_Q = re.compile(r"\d[\d,]*\s*(?:times|x|\*|×|plus|\+|minus|-|divided\s+by|/|to\s+the\s+power\s+of|\^)\s*\d", re.I)
_BIG = re.compile(r"(?<![\w.,])(\d{1,3}(?:,\d{3})+|\d{5,})(?:\.\d+)?(?![\w,])|\b\d+\.\d{3,}\b")
_WORKED = re.compile(r"\d\s*(?:[*×x/+\-^]|times|plus|minus)\s*\d[\d,.]*\s*=\s*\d", re.I)


def code(text: str) -> str | None:
    """The first piece of programming output in `text`, or None."""
    m = _CODE.search(text or "")
    return m.group(0).strip() or m.group(0) if m else None


def recited(text: str) -> str | None:
    """The persona prompt's words recited in `text` ("i'm supposed to act confused"), or None."""
    m = _RECITED.search(text or "")
    return m.group(0) if m else None


def computed(text: str, question: str | None) -> str | None:
    """A long calculation in `question` answered with a figure of 5+ digits (not one the question
    gave, not a round estimate like 30000) or with a worked equation; None otherwise."""
    if not question or not _CALC_Q.search(question):
        return None
    if (m := _WORKED.search(text)) and re.search(r"\d{3}", question):  # "17*23=391" is mental arithmetic
        return m.group(0)
    given = {d.replace(",", "") for d in re.findall(r"\d[\d,]*", question)}
    for m in _BIG.finditer(text):
        digits = m.group(0).replace(",", "")
        whole = digits.split(".")[0]
        if whole in given or (whole.endswith("000") and "." not in digits):
            continue
        return m.group(0)
    return None
