"""Machine responses to a static study's stimuli (`turinglab static generate`, issue 26).

A witness-style model (the embedded local model by default, or any OpenAI-compatible model: the
same client as the LLM witnesses, `witnesses.llm.shared_client`) is asked, through a Jinja prompt
template (prompts/word.j2, or your own), for one response per stimulus. Word association wants one
word; an answer that is empty, refused, not one word or the cue itself is *unusable*: counted, asked again (up to
`retries` more times, with the next seed, at `retry_temperature` when the temperature is 0) and,
when every attempt fails, reported with each raw answer. Nothing is dropped silently.

Each usable answer is stored as an item (truth machine, agent = the model's name) with the prompt,
the settings, the raw output and the unusable attempts before it in its payload. Every model call
is cached on disk by (prompt, model configuration, attempt), and stimuli that already hold an item
of this agent are skipped, so an interrupted run resumes where it stopped. Pictures (caption, object
labels, colour) for a vision model: vision.py, on the same retry loop (`ask_until_usable`) and cache.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import re
from collections import Counter
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from jinja2 import Environment, FileSystemLoader, StrictUndefined, TemplateError

PROMPTS = Path(__file__).parent / "prompts"
TEXT_TASKS = ("word",)
VISION_TASKS = ("caption", "object", "color")
REFUSAL = re.compile(r"\b(i'?m sorry|i cannot|i can'?t|as an ai|language model|i am unable|i'?m unable|"
                     r"i won'?t|not able to)\b", re.I)
# what may wrap one word: quotes, markdown, a final full stop
_WRAP = "\"'`*_.,!?:;()[]{}<>\u201c\u201d\u2018\u2019"


class GenerateError(ValueError):
    """A request that cannot run as given; the message says what to change."""


@dataclass(frozen=True)
class ModelConfig:
    """The model and its settings; `key()` is what the cache and the stored items remember."""

    model: str = "local"  # "local" = the embedded model; else a model name at base_url
    base_url: str | None = None
    api_key_env: str = "OPENAI_API_KEY"
    temperature: float = 0.7
    retry_temperature: float = 0.7  # used for retries when `temperature` is 0 (else a retry repeats)
    max_tokens: int = 8
    seed: int = 42
    timeout_s: float = 120.0
    takes_images: bool = False  # the model accepts OpenAI-style image input

    def key(self) -> dict[str, Any]:
        d = asdict(self)
        d.pop("timeout_s")
        d.pop("api_key_env")
        return d


def agent_name(cfg: ModelConfig) -> str:
    """The agent the items are stored under: the model's name (the local model: its weights file)."""
    if cfg.model == "local":
        from turinglab.witnesses.local.weights import DEFAULT_MODEL

        return DEFAULT_MODEL.name.removesuffix(".gguf")
    return cfg.model


def check_task(task: str, cfg: ModelConfig) -> None:
    """Refuse what cannot run: a task generate does not make, or an image task for a text-only model."""
    if task in VISION_TASKS:
        if cfg.model == "local":
            raise GenerateError(f"--task {task} shows the model each picture, but the embedded local model reads text "
                                "only. Give --model NAME --base-url URL of an OpenAI-compatible vision model "
                                "(e.g. a llava or qwen2-vl model served by vLLM, llama.cpp or Ollama) and --vision")
        if not cfg.takes_images:
            raise GenerateError(f"--task {task} shows the model each picture: add --vision if model {cfg.model!r} "
                                "takes image input (OpenAI image_url content parts); a model that reads text only "
                                "cannot do this task")
        return
    if task not in TEXT_TASKS:
        raise GenerateError(f"--task {task}: generate makes responses for --task word, caption, object and color "
                            "(conversations: `turinglab static conversations`)")


def render_prompt(task: str, prompt_file: str | Path | None, **values: Any) -> str:
    if prompt_file:
        p = Path(prompt_file)
        if not p.is_file():
            raise GenerateError(f"--prompt {p}: no such file; give a Jinja template (see {PROMPTS / (task + '.j2')})")
        env, name = Environment(loader=FileSystemLoader(str(p.parent)), undefined=StrictUndefined), p.name
    else:
        env, name = Environment(loader=FileSystemLoader(str(PROMPTS)), undefined=StrictUndefined), f"{task}.j2"
    try:
        return env.get_template(name).render(**values).strip()
    except TemplateError as exc:
        raise GenerateError(f"prompt template {name}: {exc}; the word template gets the variable 'cue', the "
                            "picture templates (caption, object, color) get 'n_labels'") from None


def check_word(raw: str | None, cue: str | None = None) -> tuple[str | None, str | None]:
    """(the word in lower case, as all 1 500 of Zhang's are; the raw answer is kept beside the item),
    or (None, reason): empty | refused | not one word | repeats the cue (the cue itself, any case)."""
    text = (raw or "").strip()
    if not text:
        return None, "empty"
    if REFUSAL.search(text):
        return None, "refused"
    words = [w.strip(_WRAP) for w in text.split()]
    words = [w for w in words if w]
    if len(words) != 1 or not any(c.isalpha() for c in words[0]) or not words[0].isprintable():
        return None, "not one word"
    if cue is not None and words[0].lower() == cue.strip().lower():
        return None, "repeats the cue"
    return words[0].lower(), None


# --- the model ---

Chat = Callable[[list[dict[str, Any]], dict[str, Any]], Any]  # async (messages, settings) -> raw text


def openai_chat(cfg: ModelConfig) -> Chat:
    """An async chat call over the witnesses' OpenAI client (starting the local model if needed)."""
    from turinglab.witnesses.llm import shared_client

    async def chat(messages: list[dict[str, Any]], settings: dict[str, Any]) -> str:
        if cfg.model == "local":
            from turinglab.witnesses.local.server import MODEL_ALIAS, shared_server

            base_url, key, model = await shared_server().astart(), "local", MODEL_ALIAS
        else:
            base_url, model = cfg.base_url, cfg.model
            key = os.environ.get(cfg.api_key_env) or ("none" if cfg.base_url else "")
            if not key:
                raise GenerateError(f"model {cfg.model!r} needs an API key in ${cfg.api_key_env} "
                                    "or --base-url of an OpenAI-compatible server")
        client = shared_client(base_url, key, cfg.timeout_s, 2)
        r = await client.chat.completions.create(model=model, messages=messages, **settings)
        return r.choices[0].message.content or "" if r.choices else ""

    return chat


def cache_dir() -> Path:
    return Path(os.environ.get("TURINGLAB_CACHE_DIR") or Path.home() / ".cache" / "turinglab") / "generate"


def cached_call(chat: Chat, messages: list[dict[str, Any]], settings: dict[str, Any], model_key: dict[str, Any],
                use_cache: bool = True) -> Any:
    """An awaitable (raw text, cached?) for one call, read from / written to the disk cache."""
    key = json.dumps({"messages": messages, "settings": settings, "model": model_key}, sort_keys=True)
    path = cache_dir() / hashlib.sha256(key.encode()).hexdigest()[:40]

    async def run() -> tuple[str, bool]:
        if use_cache and path.is_file():
            return json.loads(path.read_text(encoding="utf-8"))["raw"], True
        raw = await chat(messages, settings)
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(".tmp")
        tmp.write_text(json.dumps({"raw": raw}), encoding="utf-8")
        tmp.replace(path)
        return raw, False

    return run()


# --- a run ---

@dataclass
class Outcome:
    stimulus_key: str
    cue: str
    word: str | None
    raw: str
    attempts: list[dict[str, Any]]  # every attempt: raw, reason (None = usable), settings
    prompt: list[dict[str, Any]]

    @property
    def usable(self) -> bool:
        return self.word is not None


@dataclass
class Report:
    agent: str
    asked: int = 0  # stimuli asked about in this run
    skipped: int = 0  # stimuli that already had an item of this agent (resumed)
    stored: int = 0
    calls: int = 0
    cached_calls: int = 0
    unusable: Counter = field(default_factory=Counter)  # reason -> unusable answers (all attempts)
    failed: list[dict[str, Any]] = field(default_factory=list)  # stimuli with no usable answer
    seconds: float = 0.0

    def as_dict(self) -> dict[str, Any]:
        return {"agent": self.agent, "asked": self.asked, "skipped_already_stored": self.skipped,
                "stored": self.stored, "model_calls": self.calls, "cached_calls": self.cached_calls,
                "unusable_answers": dict(self.unusable), "failed_stimuli": self.failed,
                "seconds": round(self.seconds, 2),
                "responses_per_second": round(self.stored / self.seconds, 3) if self.seconds else None}


Check = Callable[[str], tuple[Any, str | None]]  # raw answer -> (the usable answer, None) or (None, reason)


async def ask_until_usable(chat: Chat, cfg: ModelConfig, messages: list[dict[str, Any]], check: Check, retries: int,
                           report: Report, use_cache: bool = True) -> tuple[Any, list[dict[str, Any]]]:
    """Ask until `check` accepts an answer or `retries` retries are spent: (the answer or None,
    every attempt: raw, reason (None = usable), settings). Unusable answers are counted in `report`."""
    attempts: list[dict[str, Any]] = []
    for n in range(retries + 1):
        temp = cfg.temperature if n == 0 or cfg.temperature > 0 else cfg.retry_temperature
        settings = {"temperature": temp, "max_tokens": cfg.max_tokens, "seed": cfg.seed + n}
        raw, hit = await cached_call(chat, messages, settings, cfg.key(), use_cache)
        report.calls += 1
        report.cached_calls += hit
        answer, reason = check(raw)
        attempts.append({"raw": raw, "reason": reason, "settings": settings})
        if answer is not None:
            return answer, attempts
        report.unusable[reason] += 1
    return None, attempts


async def ask_word(chat: Chat, cfg: ModelConfig, cue: str, key: str, prompt_file: str | Path | None,
                   retries: int, report: Report, use_cache: bool = True) -> Outcome:
    """One cue: ask until a usable word or `retries` retries are spent."""
    messages = [{"role": "user", "content": render_prompt("word", prompt_file, cue=cue)}]
    word, attempts = await ask_until_usable(chat, cfg, messages, lambda raw: check_word(raw, cue), retries, report,
                                            use_cache)
    return Outcome(key, cue, word, attempts[-1]["raw"], attempts, messages)


def response_in(o: Outcome, agent: str, cfg: ModelConfig, prompt_file: str | Path | None) -> Any:
    from turinglab.statictests.zhang import _slug
    from turinglab.store.static import ResponseIn

    last = o.attempts[-1]
    return ResponseIn(
        f"{o.stimulus_key}_gen_{_slug(agent)}_0", o.stimulus_key, o.word, "machine", agent,
        payload={"generated": True, "prompt": o.prompt, "prompt_template": str(prompt_file or "word.j2"),
                 "settings": {**cfg.key(), **last["settings"]}, "raw": o.raw,
                 "unusable_attempts": [a for a in o.attempts if a["reason"]]})


def word_stimuli(store: Any, study_id: int) -> list[tuple[str, str, set[str]]]:
    """(stimulus key, cue, agents with an item on it) in the study's order."""
    seen: dict[str, tuple[str, set[str], int]] = {}
    for it in store.items(study_id):
        cue = it.stimulus_text or it.stimulus_key
        _, agents, idx = seen.setdefault(it.stimulus_key, (cue, set(), int(it.stimulus_fields.get("index", 10**9))))
        agents.add(it.agent.lower())
    order = sorted(seen.items(), key=lambda kv: (kv[1][2], kv[0]))
    return [(k, cue, agents) for k, (cue, agents, _) in order]


def plan(study_name: str, stims: list[tuple[str, Any, set[str]]], cfg: ModelConfig, agent: str | None,
         limit: int | None, what: str) -> tuple[str, Report, list[tuple[str, Any]]]:
    """The agent's name, a new report and the stimuli (key, cue or picture) still to ask: the
    first `limit`, less those the agent already has an item for (a run resumes)."""
    agent = agent or agent_name(cfg)
    if not stims:
        raise GenerateError(f"static study {study_name!r} has no stimuli; import its {what} first")
    stims = stims[:limit] if limit else stims
    report = Report(agent)
    todo = [(k, stim) for k, stim, agents in stims if agent.lower() not in agents]
    report.skipped = len(stims) - len(todo)
    return agent, report, todo


def ask_all(todo: list[tuple[str, Any]], ask: Callable[[str, Any], Any], report: Report,
            progress: Callable[[int, int], None] | None) -> Report:
    """`await ask(key, stimulus)` for each stimulus in turn (it stores or reports), counted and
    timed in `report`."""
    import time

    t0 = time.monotonic()

    async def run() -> None:
        for n, (key, stim) in enumerate(todo):
            report.asked += 1
            await ask(key, stim)
            if progress:
                progress(n + 1, len(todo))

    asyncio.run(run())
    report.seconds = time.monotonic() - t0
    return report


def generate_words(store: Any, study_id: int, cfg: ModelConfig, *, limit: int | None = None,
                   retries: int = 3, prompt_file: str | Path | None = None, agent: str | None = None,
                   chat: Chat | None = None, progress: Callable[[int, int], None] | None = None,
                   use_cache: bool = True) -> Report:
    """Ask the model about each cue of the word study `study_id` (the first `limit`), store the
    usable words as items of `agent`, and return the report. Items are stored as they come
    (one transaction per cue), so an interrupted run keeps what it made."""
    info = store.static_study(study_id)
    if info.task != "word":
        raise GenerateError(f"static study {info.name!r} is a {info.task} study; --task word needs a word study "
                            "(import one first: turinglab static import --task word --responses word.json)")
    agent, report, todo = plan(info.name, word_stimuli(store, study_id), cfg, agent, limit, "cues")
    chat = chat or openai_chat(cfg)

    async def ask(key: str, cue: str) -> None:
        o = await ask_word(chat, cfg, cue, key, prompt_file, retries, report, use_cache)
        if o.usable:
            store.add_items(study_id, [], [response_in(o, agent, cfg, prompt_file)])
            report.stored += 1
        else:
            report.failed.append({"stimulus": key, "cue": cue, "attempts": o.attempts})

    return ask_all(todo, ask, report, progress)
