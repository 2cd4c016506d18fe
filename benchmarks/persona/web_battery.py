"""The held-out battery through the web (issue 40): a real server, a websocket interrogator.

    PYTHONPATH=. python benchmarks/persona/web_battery.py --study benchmarks/persona/readme-study.yaml \
        --witness Sierra --games 10 --turns 5 --from 0 --save runs/web-sierra.json

Serves the study with only the named witness (all games AI games, one at a time, the study's
persona draws, timings and timeouts), and plays `--games` games: each asks `--turns` messages of
heldout/battery.tsv in order (game k from message from + k*turns), waits for the witness's
reply, then gives a verdict. What the interrogator's page received is saved after every game
in the witness probe's format with only the shown text (`first` = `shown`, no tries, `fallback`
true, so rates.py counts shown replies and judges no refusal it cannot see). The 1-minute load
average is saved at the start and after each game.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import tempfile
import time
from pathlib import Path

from turinglab.bots.interrogator import load_battery
from turinglab.game.study_file import load_study
from turinglab.server.app import create_app
from turinglab.server.testing import WsPlayer, serve_in_thread

BATTERY = Path(__file__).parent / "heldout" / "battery.tsv"


async def game(base: str, k: int, asked: list[tuple[str, str]]) -> list[dict]:
    p = await (await WsPlayer.create(base)).connect()
    await p.phase("idle")
    await p.send({"type": "join"})
    await p.phase("game", timeout=3600)
    out = []
    for j, (fam, q) in enumerate(asked):
        cid = f"g{k}m{j}"
        await p.send({"type": "message", "conv": "A", "text": q, "client_id": cid})
        await p.next("ack", client_id=cid, timeout=60)
        t0 = time.monotonic()
        try:
            got = await p.next("message", timeout=300)
        except TimeoutError:  # the game's time ran out
            break
        text = got.get("text", "")
        out.append({"game": k, "turn": j + 1, "category": fam, "question": q, "first": text, "first_why": "ok",
                    "tries": [], "fallback": True, "source": "web", "shown": text,
                    "elapsed_s": round(time.monotonic() - t0, 2)})
    await p.send({"type": "verdict", "choice": "ai", "confidence": 60, "reason": "battery"})
    await p.phase("reveal", timeout=120)
    await p.close()
    return out


async def main(a: argparse.Namespace) -> None:
    study = load_study(a.study)
    spec = next((w for w in study.witnesses if w.codename.lower() == a.witness.lower()), None)
    if spec is None:
        raise SystemExit(f"{a.study} has no witness {a.witness!r}")
    study = study.model_copy(update={"witnesses": (spec,),
                                     "allocation": study.allocation.model_copy(update={"human_ratio": 0.0})})
    battery = load_battery(a.questions)[a.start:]
    db = Path(tempfile.mkdtemp()) / "web.db"
    app = create_app(study, f"sqlite:///{db}", rng_seed=a.seed, initial_ai_wait_s=1.0, warm_up=True)
    run: dict = {"replies": [], "loads": [round(os.getloadavg()[0], 2)], "complete": False,
                 "study": str(a.study), "witness": spec.codename, "from": a.start}
    with serve_in_thread(app) as base:
        hub = app.state.hub
        while hub._warm_task is not None and not hub._warm_task.done():
            await asyncio.sleep(0.5)
        for k in range(a.games):
            asked = [battery[(k * a.turns + j) % len(battery)] for j in range(a.turns)]
            run["replies"] += await game(base, a.seed + k, asked)
            run["loads"].append(round(os.getloadavg()[0], 2))
            run["complete"] = k + 1 == a.games
            a.save.write_text(json.dumps(run, indent=1, ensure_ascii=False), encoding="utf-8")
            print(f"game {k + 1}/{a.games}: {len(run['replies'])} replies, load {run['loads'][-1]}", flush=True)


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--study", type=Path, required=True)
    ap.add_argument("--witness", required=True)
    ap.add_argument("--questions", type=Path, default=BATTERY)
    ap.add_argument("--games", type=int, default=10)
    ap.add_argument("--turns", type=int, default=5)
    ap.add_argument("--from", dest="start", type=int, default=0)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--save", type=Path, required=True)
    asyncio.run(main(ap.parse_args()))
