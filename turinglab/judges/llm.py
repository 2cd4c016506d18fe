"""Zero-shot LLM judge: any OpenAI-compatible model (the embedded local model by default) reads the
stimulus and the response, or a transcript, and answers a verdict and a confidence.

The instructions are Jinja templates (prompts/*.j2, or your own file with --prompt), like the
witness personas. Answers are parsed leniently (JSON, 'verdict: ...' lines, a leading word);
an answer we cannot read becomes the verdict 'unparsed': counted in n and as wrong, kept with its
raw text. Answers are cached on disk by item content + model + prompt + settings, so a re-run
asks nothing again.
"""

from __future__ import annotations

import hashlib
import json
import re
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Protocol

import pandas as pd
from jinja2 import Environment, FileSystemLoader, StrictUndefined, TemplateError

from turinglab.judges.vectors import cache_dir

PROMPTS = Path(__file__).parent / "prompts"
TASK_LABELS = {"caption": "image captioning (describe the picture in one sentence)",
               "object": "object naming (list the objects in a picture)",
               "color": "colour naming (name the colour at a point in a picture)",
               "conversation": "conversation"}
CONVERSATIONS = ("transcript", "conversation")  # items whose response is a whole chat
_MACHINE = r"(?:machine|ai|a\.i\.|computer|bot|model|artificial)"
_HUMAN = r"(?:human|person|people)"


class LLMJudgeError(RuntimeError):
    pass


@dataclass(frozen=True)
class Parsed:
    verdict: str  # human | machine | unparsed
    confidence: float | None  # 0-100 as stated

    @property
    def score(self) -> float:
        """P(machine) implied by the answer: confidence on the stated side; 0.5 if unparsed."""
        if self.verdict == "unparsed":
            return 0.5
        c = 1.0 if self.confidence is None else min(max(self.confidence, 0.0), 100.0) / 100
        c = max(c, 0.5)  # a 'confidence' below 50 still leans to the stated side
        return c if self.verdict == "machine" else 1.0 - c


def _side(word: str) -> str | None:
    w = word.strip().strip("\"'*.:,").lower()
    if re.fullmatch(_HUMAN, w):
        return "human"
    if re.fullmatch(_MACHINE, w) or w in ("ai-generated", "machine-generated"):
        return "machine"
    return None


def parse(text: str | None) -> Parsed:
    """Read a verdict and confidence from a model's answer; 'unparsed' if there is no clear verdict."""
    if not text or not text.strip():
        return Parsed("unparsed", None)
    t = text.strip()
    verdict = None
    conf = None
    m = re.search(r"\{.*?\}", t, re.S)
    if m:
        try:
            obj = json.loads(m.group(0))
            if isinstance(obj, dict):
                verdict = _side(str(obj.get("verdict", "")))
                c = obj.get("confidence")
                conf = float(c) if isinstance(c, (int, float)) else None
        except ValueError:
            pass
    if verdict is None:
        m = re.search(r"verdict\s*[:=\-]\s*\**\s*([A-Za-z.\-]+)", t, re.I)
        if m:
            verdict = _side(m.group(1))
    if verdict is None:  # a bare leading word: "Machine." / "Human, 80"
        m = re.match(r"\W*([A-Za-z.\-]+)", t)
        if m:
            verdict = _side(m.group(1))
    if verdict is None:  # one side named and not the other, with no negation
        hum = re.search(rf"\b{_HUMAN}\b", t, re.I)
        mac = re.search(rf"\b{_MACHINE}\b", t, re.I)
        if bool(hum) != bool(mac) and not re.search(r"\b(not|n't|unsure|cannot|can't)\b", t, re.I):
            verdict = "human" if hum else "machine"
    if conf is None:
        m = re.search(r"confidence\s*[:=\-]?\s*(\d{1,3}(?:\.\d+)?)\s*%?", t, re.I) or re.search(r"(\d{1,3})\s*%", t)
        if m:
            conf = float(m.group(1))
    if conf is not None and not 0 <= conf <= 100:
        conf = None
    return Parsed(verdict or "unparsed", conf)


def render_system(task: str, prompt_file: str | Path | None = None) -> str:
    if prompt_file:
        p = Path(prompt_file)
        if not p.is_file():
            raise LLMJudgeError(f"prompt template {p} not found")
        env, name = Environment(loader=FileSystemLoader(str(p.parent)), undefined=StrictUndefined), p.name
    else:
        name = "word.j2" if task == "word" else "transcript.j2" if task in CONVERSATIONS else "text.j2"
        env = Environment(loader=FileSystemLoader(str(PROMPTS)), undefined=StrictUndefined)
    try:
        return env.get_template(name).render(task=task, task_label=TASK_LABELS.get(task, task)).strip()
    except TemplateError as exc:
        raise LLMJudgeError(f"prompt template {name}: {exc}") from None


def user_message(task: str, stimulus: str, response: str) -> str:
    if task == "word":
        return f"Cue word: {stimulus}\nAnswer: {response}"
    if task in CONVERSATIONS:
        return f"Conversation:\n{response}"
    return f"Picture: {stimulus}\nAnswer: {response}"


class Chat(Protocol):
    def __call__(self, messages: list[dict[str, str]]) -> str: ...


@dataclass
class ModelSpec:
    model: str = "local"  # 'local' = the embedded model; else a model name at base_url
    base_url: str | None = None
    api_key_env: str = "OPENAI_API_KEY"
    temperature: float = 0.0
    max_tokens: int = 24
    seed: int = 42
    timeout_s: float = 120.0

    def key(self) -> dict[str, Any]:
        return {"model": self.model, "base_url": self.base_url, "temperature": self.temperature,
                "max_tokens": self.max_tokens, "seed": self.seed}


def openai_chat(spec: ModelSpec) -> Chat:
    """A blocking chat function over the OpenAI-compatible API (starts the local server if needed)."""
    import os

    from openai import OpenAI

    if spec.model == "local":
        from turinglab.witnesses.local.server import MODEL_ALIAS, shared_server

        base_url, key, model = shared_server().start(), "local", MODEL_ALIAS
    else:
        base_url, model = spec.base_url, spec.model
        key = os.environ.get(spec.api_key_env)
        if not key:
            raise LLMJudgeError(f"model {spec.model!r} needs an API key in ${spec.api_key_env}")
    client = OpenAI(base_url=base_url, api_key=key, timeout=spec.timeout_s, max_retries=2)

    def chat(messages: list[dict[str, str]]) -> str:
        r = client.chat.completions.create(model=model, messages=messages, temperature=spec.temperature,
                                           max_tokens=spec.max_tokens, seed=spec.seed)
        return r.choices[0].message.content or ""

    return chat


def _cache_path(key: dict[str, Any]) -> Path:
    h = hashlib.sha256(json.dumps(key, sort_keys=True).encode()).hexdigest()
    return cache_dir() / "judges" / "llm" / h[:2] / f"{h}.json"


def judge_items(
    items: pd.DataFrame,
    spec: ModelSpec,
    *,
    chat: Chat | None = None,
    prompt_file: str | Path | None = None,
    on_item: Callable[[], None] | None = None,
    use_cache: bool = True,
) -> pd.DataFrame:
    """One LLM verdict per item: item_id, verdict, confidence, score, raw, error, cached, seconds.
    A call that fails is recorded as 'unparsed' with its error (and not cached)."""
    systems: dict[str, str] = {}
    out = []
    for row in items.itertuples(index=False):
        task = row.task
        if task not in systems:
            systems[task] = render_system(task, prompt_file)
        system = systems[task]
        messages = [{"role": "system", "content": system},
                    {"role": "user", "content": user_message(task, row.stimulus, row.response)}]
        key = {"messages": messages, **spec.key()}
        path = _cache_path(key)
        raw, err, cached, secs = None, None, False, 0.0
        if use_cache and path.is_file():
            try:
                raw, cached = json.loads(path.read_text())["raw"], True
            except (OSError, ValueError, KeyError):
                raw = None
        if raw is None:
            if chat is None:
                chat = openai_chat(spec)
            t0 = time.monotonic()
            try:
                raw = chat(messages)
            except Exception as exc:  # a failed call is a counted, unparsed verdict
                err = f"{type(exc).__name__}: {exc}"[:300]
            secs = time.monotonic() - t0
            if err is None and use_cache:
                path.parent.mkdir(parents=True, exist_ok=True)
                tmp = path.with_suffix(".tmp")
                tmp.write_text(json.dumps({"raw": raw, **spec.key()}))
                tmp.replace(path)
        p = parse(raw)
        out.append({"item_id": row.item_id, "verdict": p.verdict, "confidence": p.confidence, "score": p.score,
                    "raw": raw if raw is not None else "", "error": err, "cached": cached, "seconds": secs})
        if on_item is not None:
            on_item()
    return pd.DataFrame(out, columns=["item_id", "verdict", "confidence", "score", "raw", "error", "cached",
                                      "seconds"])
