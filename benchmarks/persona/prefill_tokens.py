"""How much of a new game's prompt the local model reads again (issue 40): llama.cpp's own count.

    PYTHONPATH=. python benchmarks/persona/prefill_tokens.py

One model server with one slot; the prompt a server's warm-up reads, then three games with
personas drawn from seeds 1-3, each sent with the interrogator's "hey" and max_tokens=1. For each:
`prompt_n` (tokens read), `cache_n` (tokens reused from the slot's cache), `prompt_ms`, the wall
time and the 1-minute load average. Run it on two checkouts to compare prompt layouts.
"""
import asyncio
import json
import os
import time
from datetime import datetime, timezone
from turinglab.witnesses import persona_draw
from turinglab.witnesses.base import GameContext
from turinglab.witnesses.llm import LLMWitness, to_messages
from turinglab.witnesses.local.server import LocalServer
from turinglab.witnesses.registry import resolve

async def main():
    server = LocalServer(threads=1, slots=1)
    base = await server.astart()
    from openai import AsyncOpenAI
    client = AsyncOpenAI(base_url=base, api_key="local", timeout=900)
    now = datetime.now(timezone.utc)
    ctx = GameContext(game_id="p", started_at=now, now=now, time_limit_s=300, max_chars=300)
    spec = resolve("local")
    out = []
    # what the server's warm-up reads: a drawn persona (this version) or the witness's own (before issue 40)
    warm = persona_draw.draw(0) if "age" in persona_draw.draw(0) else {}
    for k, p in enumerate([warm] + [persona_draw.draw(s) for s in (1, 2, 3)]):
        w = LLMWitness(spec.model_copy(update={"persona": {**spec.persona, **p}}), local_server=server)
        w._fill(ctx)
        msgs = to_messages(w._system, [], w._shots, w._after) + [{"role": "user", "content": "hey"}]
        t0 = time.monotonic()
        r = await client.chat.completions.create(model="local", messages=msgs, max_tokens=1, temperature=0,
                                                 extra_body={"id_slot": 0})
        tm = (r.model_extra or {}).get("timings") or {}
        out.append({"game": "warm-up" if k == 0 else k, "name": p.get("name", "Jamie"), "prompt_n": tm.get("prompt_n"),
                    "cache_n": tm.get("cache_n"), "prompt_ms": round(tm.get("prompt_ms") or 0), "wall_s": round(time.monotonic() - t0, 1),
                    "load": round(os.getloadavg()[0], 1)})
        print(json.dumps(out[-1]), flush=True)
    server.stop()

asyncio.run(main())
