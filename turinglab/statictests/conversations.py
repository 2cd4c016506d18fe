"""A conversation corpus made by the platform (`turinglab static conversations`, issue 26).

* **AI-AI**: two configured witnesses (registry names: `local`, `eliza`, ...; the same or
  different) talk from a topic opener (one of Zhang's nine topics; a template of prompts/openers/,
  a phrasing and a greeting drawn per conversation, `draw_opener`): speaker A sends the opener, B answers, and so on to `exchanges` exchanges. Each witness sees its own turns
  as its own and the other's as the interrogator's, exactly as in a live game. After every turn the
  failure rules (`statictests.failures`) are checked; a failed conversation stops there and is
  sampled again with the next seed, up to `max_resamples` times. Every failed attempt is logged
  with its reason (and kept in the stimulus' `resampled` field of the conversation that replaced
  it); a conversation that fails every attempt is left out and reported.
* **Human-human** corpora, JSONL, one message per line in order:
  `{"conversation": "c1", "speaker": "anna", "text": "hi!"}` (optional `"topic"`, one of
  Zhang's nine). The first speaker of a conversation is A, the other B; a third speaker is refused.
* **Chunking**: a conversation of n exchanges gives one item per length k in `lengths`
  (3, 6, ..., 24) with k <= n: its first k exchanges, one truth per speaker (`payload["speakers"]`,
  machine speakers named in `payload["speaker_agents"]`; `statictests.speakers`), as the items cut
  from live games (`statictests.displaced`).

Attempts are cached on disk by (witness configurations, opener, exchanges, seed, rules), so a
re-run asks the models nothing again and an interrupted run resumes.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from turinglab.statictests.displaced import first_exchanges
from turinglab.statictests.failures import RULES_VERSION, Rules, check
from turinglab.statictests.generate import GenerateError, cache_dir
from turinglab.statictests.plain import jsonl_objects
from turinglab.statictests.topics import ZHANG_TOPICS, known_topic, topic_fields

LENGTHS = (3, 6, 9, 12, 15, 18, 21, 24)
OPENERS = Path(__file__).parent / "prompts" / "openers"
GREETINGS = ("", "hey! ", "hi ", "hello :) ", "yo, ", "hiya, ", "hey there. ", "ok so ")
MakeWitness = Callable[[str, int], Any]  # (witness name, seed) -> Witness


@dataclass
class Conversation:
    key: str
    turns: list[dict[str, str]]  # {"speaker": "A"|"B", "text": ...}
    speakers: dict[str, str]  # speaker -> human | machine
    agents: dict[str, str]  # speaker -> agent name ("human" for people)
    topic: str | None = None
    resampled: list[dict[str, Any]] = field(default_factory=list)  # failed attempts before this one
    opener: str | None = None  # the opener template (AI-AI)


@dataclass
class Outcome:
    made: list[Conversation] = field(default_factory=list)
    failed: list[dict[str, Any]] = field(default_factory=list)  # conversations that failed every attempt
    log: list[dict[str, Any]] = field(default_factory=list)  # every failed attempt, with its reason
    attempts: int = 0
    cached: int = 0
    seconds: float = 0.0


GEN_TIMEOUT_S = 300.0  # no player waits: a slow reply (a cold prompt on one thread) is not a failure


def default_witness(name: str, seed: int) -> Any:
    from turinglab.witnesses.registry import build_witness, resolve

    spec = resolve(name)
    if spec.kind in ("llm", "local"):
        spec = spec.model_copy(update={"timeout_s": max(spec.timeout_s, GEN_TIMEOUT_S)})
    return build_witness(spec, seed=seed)


def witness_config(name: str) -> dict[str, Any]:
    """What the cache remembers of a witness: its full spec (prompt, model, settings)."""
    from turinglab.witnesses.registry import UnknownWitness, resolve

    try:
        spec = resolve(name)
    except UnknownWitness as exc:
        raise GenerateError(str(exc)) from None
    return spec.model_dump(mode="json", exclude={"timeout_s"})


async def converse(wa: Any, wb: Any, opener: str, exchanges: int, rules: Rules, key: str) -> tuple[list[str], str | None]:
    """Turns (A first, the opener) until `exchanges` exchanges or the first broken rule: (texts, reason)."""
    from turinglab.witnesses.base import GameContext, Turn

    now = datetime.now(timezone.utc)
    ctxs = [GameContext(game_id=f"gen-{key}", started_at=now, now=now, time_limit_s=3600, max_chars=300, seat=s)
            for s in "AB"]
    for w, ctx in zip((wa, wb), ctxs):
        await w.start(ctx)
    texts = [opener]
    while len(texts) < 2 * exchanges:
        k = len(texts)  # whose turn: B on odd k
        me = k % 2
        history = [Turn("witness" if j % 2 == me else "interrogator", t, 0) for j, t in enumerate(texts)]
        r = await (wb if me else wa).reply(history, ctxs[me])
        if r.fallback:
            return texts, f"model failed: turn {k + 1} ({'AB'[me]}) came from the fallback ({r.error})"
        texts.append(r.text)
        reason = check(texts, rules)
        if reason:
            return texts, reason
    return texts, None


def draw_opener(topic: str, i: int, seed: int, folder: str | Path | None = None) -> tuple[str, str]:
    """Speaker A's first message and its template's name: a template of `folder` (default
    prompts/openers/*.j2; each gets `topic`, `k` to pick a phrasing and `hi`, a greeting or ""),
    the phrasing and the greeting drawn from (seed, conversation number), so that openers vary
    across a corpus and the same run draws the same ones."""
    import random

    from jinja2 import Environment, FileSystemLoader, StrictUndefined, TemplateError

    d = Path(folder) if folder else OPENERS
    names = sorted(p.name for p in d.glob("*.j2")) if d.is_dir() else []
    if not names:
        raise GenerateError(f"--openers {d}: no opener templates (*.j2) there; each gets topic, k and hi")
    rng = random.Random(f"opener:{seed}:{i}")
    name = rng.choice(names)
    try:
        text = Environment(loader=FileSystemLoader(str(d)), undefined=StrictUndefined).get_template(name).render(
            topic=topic, k=rng.randrange(10**6), hi=rng.choice(GREETINGS)).strip()
    except TemplateError as exc:
        raise GenerateError(f"opener template {d / name}: {exc}; the variables are topic, k and hi") from None
    if not text:
        raise GenerateError(f"opener template {d / name} rendered an empty message")
    return text, name


def _cache_path(key: dict[str, Any]) -> Path:
    h = hashlib.sha256(json.dumps(key, sort_keys=True).encode()).hexdigest()
    return cache_dir() / "conversations" / h[:40]


def generate(pairs: list[tuple[str, str]], n: int, exchanges: int, rules: Rules, *, max_resamples: int = 3,
             seed: int = 1, make_witness: MakeWitness | None = None, configs: dict[str, Any] | None = None,
             progress: Callable[[int, int], None] | None = None, use_cache: bool = True,
             openers: str | Path | None = None) -> Outcome:
    """`n` conversations for each pair of witness names, each re-sampled up to `max_resamples` times;
    `openers`: a folder of opener templates instead of prompts/openers/."""
    import time

    make = make_witness or default_witness
    configs = configs or {}
    out = Outcome()
    t0 = time.monotonic()

    async def one(i: int, a: str, b: str) -> None:
        topic = ZHANG_TOPICS[i % len(ZHANG_TOPICS)]
        opener, template = draw_opener(topic, i, seed, openers)
        key = f"ai{i:03d}-{a}-{b}"
        failed: list[dict[str, Any]] = []
        for attempt in range(max_resamples + 1):
            s = seed + 1000 * i + attempt
            ck = {"a": configs[a] if a in configs else witness_config(a),
                  "b": configs[b] if b in configs else witness_config(b), "opener": opener,
                  "exchanges": exchanges, "seed": s, "rules": asdict(rules), "rules_version": RULES_VERSION}
            path = _cache_path(ck)
            out.attempts += 1
            if use_cache and path.is_file():
                got = json.loads(path.read_text(encoding="utf-8"))
                texts, reason = got["turns"], got["reason"]
                out.cached += 1
            else:
                wa, wb = make(a, s), make(b, s + 500)
                try:
                    texts, reason = await converse(wa, wb, opener, exchanges, rules, key)
                finally:
                    for w in (wa, wb):
                        await w.close()
                if not (reason or "").startswith("model failed"):  # a failed call is not cached: asked again next run
                    path.parent.mkdir(parents=True, exist_ok=True)
                    path.write_text(json.dumps({"turns": texts, "reason": reason}), encoding="utf-8")
            if reason is None:
                turns = [{"speaker": "AB"[j % 2], "text": t} for j, t in enumerate(texts)]
                out.made.append(Conversation(key, turns, {"A": "machine", "B": "machine"}, {"A": a, "B": b},
                                             topic, failed, template))
                return
            entry = {"conversation": key, "pair": f"{a}+{b}", "topic": topic, "attempt": attempt, "seed": s,
                     "reason": reason, "turns": texts}
            failed.append({"attempt": attempt, "seed": s, "reason": reason})
            out.log.append(entry)
        out.failed.append({"conversation": key, "pair": f"{a}+{b}", "attempts": max_resamples + 1,
                           "reasons": [f["reason"] for f in failed]})

    async def run() -> None:
        jobs = [(i, a, b) for a, b in pairs for i in range(n)]
        for done, (i, a, b) in enumerate(jobs):
            await one(i + 100 * pairs.index((a, b)), a, b)
            if progress:
                progress(done + 1, len(jobs))

    asyncio.run(run())
    out.seconds = time.monotonic() - t0
    return out


def read_human_jsonl(path: str | Path) -> list[Conversation]:
    """Human-human conversations from JSONL (see the module doc); `GenerateError` lists every problem."""
    p = Path(path)
    if not p.is_file():
        raise GenerateError(f"--human {p}: no such file; give a JSONL file of messages (conversation, speaker, text)")
    convs: dict[str, Conversation] = {}
    names: dict[str, dict[str, str]] = {}
    recs, problems = jsonl_objects(p.read_text(encoding="utf-8-sig"), "conversation, speaker, text")
    for n, rec in recs:
        conv, who, text = rec.get("conversation"), rec.get("speaker"), rec.get("text")
        if not (isinstance(conv, (str, int)) and str(conv).strip() and isinstance(who, str) and who.strip()
                and isinstance(text, str) and text.strip()):
            problems.append(f"line {n}: needs non-empty 'conversation', 'speaker' and 'text' (strings)")
            continue
        cid = f"hh-{str(conv).strip()}"
        c = convs.setdefault(cid, Conversation(cid, [], {"A": "human", "B": "human"}, {"A": "human", "B": "human"}))
        seen = names.setdefault(cid, {})
        if who not in seen:
            if len(seen) == 2:
                problems.append(f"line {n}: conversation {conv!r} has a third speaker {who!r}; two speakers per conversation")
                continue
            seen[who] = "AB"[len(seen)]
        if "topic" in rec:
            t = known_topic(rec["topic"])
            if t is None:
                problems.append(f"line {n}: topic {rec['topic']!r} is not one of Zhang's: {', '.join(ZHANG_TOPICS)}")
                continue
            c.topic = t
        c.turns.append({"speaker": seen[who], "text": text.strip()})
    if problems:
        shown = problems[:20] + ([f"... and {len(problems) - 20} more"] if len(problems) > 20 else [])
        raise GenerateError(f"{p}: {len(problems)} problem(s), nothing imported:\n" + "\n".join(shown))
    if not convs:
        raise GenerateError(f"{p}: no messages; one JSON object per line: conversation, speaker, text")
    return list(convs.values())


def chunk(convs: list[Conversation], lengths: tuple[int, ...]) -> tuple[list[Any], list[Any], int]:
    """Stimuli and items (first k exchanges for each k in `lengths`); and how many conversations
    were too short for the shortest length (left out, reported)."""
    from turinglab.store.static import ResponseIn, StimulusIn

    stimuli, items, short = [], [], 0
    for c in convs:
        made = False
        for k in lengths:
            part = first_exchanges(c.turns, k)
            if part is None:
                continue
            made = True
            machines = {sp: c.agents[sp] for sp, t in c.speakers.items() if t == "machine"}
            truth = "machine" if machines else "human"
            agent = "+".join(sorted(set(machines.values()))) if machines else "human"
            items.append(ResponseIn(
                f"{c.key}/{k}", c.key, "\n".join(f"{t['speaker']}: {t['text']}" for t in part), truth, agent,
                payload={"turns": part, "speakers": dict(c.speakers), "speaker_agents": machines, "length": k,
                         "generated": bool(machines)}))
        if not made:
            short += 1
            continue
        fields: dict[str, Any] = {"exchanges": sum(1 for j, t in enumerate(c.turns)
                                                    if j and t["speaker"] == "B" and c.turns[j - 1]["speaker"] == "A")}
        if c.resampled:
            fields["resampled"] = c.resampled
        if c.topic:
            fields.update(topic_fields(c.topic, c.key))
        if c.opener:
            fields["opener_template"] = c.opener
        stimuli.append(StimulusIn(c.key, fields=fields))
    return stimuli, items, short
