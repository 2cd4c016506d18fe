"""`turinglab chat`: play a two-player game in the terminal as the interrogator.

The terminal front end of the game (I/O: terminal, clock, database); the pure engine in
`turinglab.game` never imports it. Every action goes through the engine and every event is stored as it
happens, so a game interrupted at any point is still in the database.

Two modes:
- interactive (a terminal): timer in the prompt, "typing…", human-like delays, the verdict
  at the end (or earlier with /verdict), then the reveal;
- script (`--no-delay` and stdin not a terminal): interrogator lines from stdin, each
  witness reply on its own stdout line and nothing else; notes and the game id on stderr.
"""

from __future__ import annotations

import asyncio
import codecs
import contextlib
import logging
import os
import random
import select
import sys
import time
import unicodedata
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import IO, Any

from turinglab.game.config import Study, WitnessSpec
from turinglab.game.engine import End, Game, GiveVerdict, Leave, Outcome, Send, Tick, Typing
from turinglab.game.events import INTERROGATOR, MESSAGE

log = logging.getLogger(__name__)

TERMINAL_USER = "terminal user"
HELP = "commands: /verdict (decide now), /time (time left), /quit (leave without a verdict)"


class ChatError(ValueError):
    """Bad input for `turinglab chat` (exit code 2)."""


def now_ms() -> int:
    return time.time_ns() // 1_000_000


def clean(text: str) -> str:
    """Untrusted text made safe for a terminal: control characters (escape codes) removed."""
    return "".join(ch for ch in text if ch in "\n\t" or unicodedata.category(ch)[0] != "C")


def pick_witness(name: str, study: Study) -> WitnessSpec:
    """The study's witness with this codename, else a named witness from the registry."""
    for spec in study.witnesses:
        if spec.codename.lower() == name.strip().lower():
            return spec
    from turinglab.witnesses.registry import UnknownWitness, resolve

    try:
        return resolve(name)
    except UnknownWitness as exc:
        in_study = ", ".join(w.codename for w in study.witnesses)
        raise ChatError(f"{exc}" + (f"; in study {study.name!r}: {in_study}" if in_study else "")) from None


@dataclass
class ChatGame:
    """One terminal game: the engine, the witness, and the store, kept in step."""

    study: Study
    spec: WitnessSpec
    store: Any  # turinglab.store.Store
    study_id: int
    delay: bool
    seed: int | None
    out: IO[str] = field(default_factory=lambda: sys.stdout)
    err: IO[str] = field(default_factory=lambda: sys.stderr)

    def __post_init__(self) -> None:
        from turinglab.witnesses.llm import WitnessConfigError
        from turinglab.witnesses.persona import PersonaError
        from turinglab.witnesses.registry import UnknownWitness, build_witness

        self.rng = random.Random(self.seed)
        self.persona = None
        if self.study.draws_persona(self.spec):  # the study's per-game persona, drawn as in a server game
            from turinglab.witnesses import persona_draw

            draw_seed = self.seed if self.seed is not None else random.SystemRandom().randrange(2**31)
            self.persona = persona_draw.draw(draw_seed, age=self.spec.persona.get("age"))
            self.spec = self.spec.model_copy(update={"persona": {**self.spec.persona, **self.persona}})
        try:
            self.witness = build_witness(self.spec, seed=self.seed)
        except (WitnessConfigError, PersonaError, UnknownWitness) as exc:
            raise ChatError(str(exc)) from None
        from turinglab.witnesses.ai_seat import AISeat, ElizaFallback
        from turinglab.witnesses.filters import ComposedFilter
        from turinglab.witnesses.eliza.witness import ElizaWitness

        eliza = ElizaFallback(lambda: ElizaWitness(codename=self.spec.codename, seed=self.seed))
        self.seat = AISeat(self.witness, self.spec, content_filter=ComposedFilter(self.study.content_filter),
                           max_chars=self.study.rules.max_chars, fallback=eliza, now=now_ms, seat="A")
        user = self.store.find_participant(label=TERMINAL_USER)
        self.participant = user.id if user else self.store.create_participant(label=TERMINAL_USER)
        t0 = now_ms()
        identity = {"kind": "ai", "witness": self.spec.codename, "selection_prob": 1.0}
        self.game_id: str = self.store.create_game(self.study_id, "two-player", {"A": identity},
                                                   self.participant, t0)
        self.game = Game.start("two-player", self.study.rules, t0, personas={"A": self.persona} if self.persona else None)
        self.seat.game = self.game_id
        self.script = False  # script mode: refused witness replies get a note on stderr
        self.stored = 0
        self._save()

    # --- engine + store in step ---

    def _save(self) -> None:
        self.store.append_events(self.game_id, self.game.log[self.stored:])
        self.stored = len(self.game.log)

    def act(self, action: Any) -> Outcome:
        out = self.game.apply(action, now_ms())
        self._save()
        return out

    def _ctx(self):  # noqa: ANN202 - GameContext
        from turinglab.witnesses.base import GameContext

        start = datetime.fromtimestamp(self.game.started_ms / 1000, tz=timezone.utc)
        return GameContext(game_id=self.game_id, started_at=start, now=datetime.now(timezone.utc),
                           time_limit_s=self.study.rules.time_limit_s, max_chars=self.study.rules.max_chars)

    def _history(self):  # noqa: ANN202 - list[Turn]
        from turinglab.witnesses.base import Turn

        return [Turn("interrogator" if e.actor == INTERROGATOR else "witness", e.payload["text"], e.t_ms)
                for e in self.game.log if e.type == MESSAGE]

    async def witness_turn(self, sent_ms: int, prev_chars: int, show_typing: bool) -> str | None:
        """The witness's reply through the AI seat (witnesses/ai_seat.py, as in a server game:
        content filter, persona guard, steered regeneration, ELIZA fallback; every refused reply
        stored as a `refused` event), held for its human-like delay, sent through the engine."""
        from turinglab.witnesses.timing import hold_for, reply_delay, typing_delay

        history, ctx = self._history(), self._ctx()

        async def record(r: Any) -> None:  # witnesses.ai_seat.Refusal
            self.game.refuse(Send("A", r.text), r.code, r.detail, now_ms())
            self._save()
            if self.script:  # a note on stderr (the interactive player sees nothing)
                print(f"witness reply refused ({r.code}): {r.detail}", file=self.err)

        answer = await self.seat.answer(history, ctx, question=history[-1].text if history else "",
                                        asked_ms=sent_ms, deadline_ms=self.game.deadline_ms, on_refusal=record)
        text = answer.text
        if self.delay:
            designed = reply_delay(len(text), self.spec.timing, self.rng, prev_chars=prev_chars)
            typing_at = typing_delay(self.study.rules, self.rng)
            elapsed = (now_ms() - sent_ms) / 1000
            if show_typing and typing_at < designed:
                await asyncio.sleep(hold_for(typing_at, elapsed))
                self.act(Typing("A"))
                print("  (typing…)", file=self.out, flush=True)
                elapsed = (now_ms() - sent_ms) / 1000
            await asyncio.sleep(hold_for(designed, elapsed))
        out = self.act(Send("A", text, author=answer.author()))
        return text if out.ok else None

    async def close(self) -> None:
        await self.witness.close()

    # --- script mode ---

    async def run_script(self, lines: IO[str]) -> None:
        self.script = True
        await self.witness.start(self._ctx())
        for raw in lines:
            line = raw.rstrip("\r\n")
            if self.game.state == "ended":
                print(f"ignored after the end of the game: {line[:40]!r}", file=self.err)
                continue
            if line.startswith("/verdict"):
                self._script_verdict(line)
                continue
            sent = now_ms()
            out = self.act(Send(INTERROGATOR, line))
            if not out.ok:
                print(f"refused ({out.code}): {out.detail}", file=self.err)
                continue
            text = await self.witness_turn(sent, len(line), show_typing=False)
            if text is None:
                print("the witness's reply came after the time limit", file=self.err)
                continue
            print(clean(text).replace("\n", " "), file=self.out, flush=True)
        if self.game.state != "ended":
            self.act(End("stdin_closed"))

    def _script_verdict(self, line: str) -> None:
        """`/verdict human|ai CONFIDENCE [reason]`."""
        parts = line.split(maxsplit=3)
        try:
            choice, conf = parts[1], int(parts[2])
        except (IndexError, ValueError):
            print("usage: /verdict human|ai CONFIDENCE [reason]", file=self.err)
            return
        out = self.act(GiveVerdict(INTERROGATOR, choice, conf, parts[3] if len(parts) > 3 else None))
        if not out.ok:
            print(f"verdict refused ({out.code}): {out.detail}", file=self.err)

    # --- interactive mode ---

    async def run_interactive(self, inp: LineReader) -> None:
        rules = self.study.rules
        p = self._say
        p(f"Study {self.study.name!r} v{self.study.version}: you are the interrogator. You are chatting with "
          "a human or an AI.")
        p(f"You write first. {rules.max_chars} characters per message; {fmt_time(rules.time_limit_s * 1000)} "
          f"in all; then you decide. {HELP}")
        await self.witness.start(self._ctx())
        while self.game.state == "in_progress":
            left = self.game.time_left_ms(now_ms())
            self.out.write(f"[{fmt_time(left)}] you> ")
            self.out.flush()
            line = await inp.areadline(left / 1000)  # the event loop runs on (e.g. the local model's prefill)
            if line is None:  # the time ran out while waiting for input
                p("\nTime is up.")
                self.act(Tick())  # fires time_up
                break
            if line == "":  # end of input
                self.act(End("stdin_closed"))
                p("\n(input closed: the game ends without a verdict)")
                break
            text = line.rstrip("\r\n")
            cmd = text.strip().lower()
            if cmd in ("/verdict", "/v"):
                break
            if cmd in ("/quit", "/q"):
                self.act(Leave(INTERROGATOR))
                p("You left the game.")
                break
            if cmd == "/time":
                p(f"{fmt_time(self.game.time_left_ms(now_ms()))} left")
                continue
            if cmd in ("/help", "/?"):
                p(HELP)
                continue
            sent = now_ms()
            out = self.act(Send(INTERROGATOR, text))
            if not out.ok:
                p(explain_refusal(out))
                continue
            reply = await self.witness_turn(sent, len(text), show_typing=True)
            if reply is None:
                p("Time is up (the witness's reply came too late).")
                break
            p(f"[{fmt_time(self.game.time_left_ms(now_ms()))}] witness> {clean(reply)}")
        if self.game.state != "ended":
            await self._ask_verdict(inp)
        self._reveal()

    def _say(self, text: str) -> None:
        print(text, file=self.out, flush=True)

    async def _ask_verdict(self, inp: LineReader) -> None:
        p = self._say
        while self.game.state != "ended":
            choice = await ask(inp, self.out, "Was the witness a human or an AI? [human/ai] ")
            if choice is None:
                self.act(End("stdin_closed"))
                return
            choice = {"h": "human", "a": "ai"}.get(choice.strip().lower(), choice.strip().lower())
            if choice not in ("human", "ai"):
                p("Please answer 'human' or 'ai' (or h / a).")
                continue
            conf_text = await ask(inp, self.out, "How confident are you? (0-100) ")
            if conf_text is None:
                self.act(End("stdin_closed"))
                return
            try:
                conf = int(conf_text.strip().rstrip("%"))
            except ValueError:
                p(f"Confidence is a whole number from 0 to 100, not {conf_text.strip()!r}. Let's try again.")
                continue
            reason = (await ask(inp, self.out, "Why? (optional, press Enter to skip) ")) or None
            out = self.act(GiveVerdict(INTERROGATOR, choice, conf, reason.strip() if reason else None))
            if not out.ok:
                p(explain_refusal(out))

    def _reveal(self) -> None:
        v = self.game.verdict
        p = self._say
        p(f"\nThe witness was an AI: {self.spec.codename} ({self.spec.kind}).")
        if v is not None:
            right = v["choice"] == "ai"
            p(f"You said {v['choice']} with confidence {v['confidence']}: "
              + ("correct." if right else "it fooled you."))
        p(f"Game {self.game_id} stored ({len(self.game.log)} events). Inspect it: turinglab db show {self.game_id}")


def explain_refusal(out: Outcome) -> str:
    hints = {
        "too_long": "Nothing was sent: shorten it and send again.",
        "empty": "Type something first.",
        "not_your_turn": "Wait for the witness's reply.",
    }
    return f"Not sent: {out.detail}. {hints.get(out.code or '', '')}".strip()


def fmt_time(ms: float) -> str:
    s = max(0, int(ms // 1000))
    return f"{s // 60}:{s % 60:02d}"


class LineReader:
    """Lines from a stream, with a timeout when the stream is a file descriptor.

    Reads the descriptor itself (not Python's buffer), so lines pasted together are not
    hidden from `select` in a buffer. Streams without a descriptor (tests) read plainly.
    """

    POLL_S = 0.25  # longest slice `areadline` waits in a worker thread

    def __init__(self, stream: IO[str]) -> None:
        self.stream = stream
        try:
            self.fd: int | None = stream.fileno()
        except (AttributeError, OSError, ValueError):
            self.fd = None
        self.buf = ""
        self.eof = False
        self.decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")

    def readline(self, timeout_s: float | None = None) -> str | None:
        """A line (with its newline); '' at end of input; None if `timeout_s` passes first."""
        if self.fd is None:
            return self.stream.readline()
        deadline = None if timeout_s is None else time.monotonic() + max(0.0, timeout_s)
        while "\n" not in self.buf and not self.eof:
            wait = None if deadline is None else deadline - time.monotonic()
            if wait is not None and (wait <= 0 or not select.select([self.fd], [], [], wait)[0]):
                return None
            chunk = os.read(self.fd, 4096)
            self.eof = not chunk
            self.buf += self.decoder.decode(chunk, final=self.eof)
        line, nl, self.buf = self.buf.partition("\n")
        return line + nl

    async def areadline(self, timeout_s: float | None = None) -> str | None:
        """`readline` without blocking the event loop: the descriptor is waited on in a worker
        thread, in slices of at most `POLL_S`, so a cancelled wait (Ctrl-C) leaves no thread
        blocked on the terminal."""
        if self.fd is None:
            return self.stream.readline()
        deadline = None if timeout_s is None else time.monotonic() + max(0.0, timeout_s)
        while True:
            wait = self.POLL_S if deadline is None else min(self.POLL_S, max(0.0, deadline - time.monotonic()))
            line = await asyncio.to_thread(self.readline, wait)
            if line is not None:
                return line
            if deadline is not None and time.monotonic() >= deadline:
                return None


async def ask(inp: LineReader, out: IO[str], prompt: str) -> str | None:
    out.write(prompt)
    out.flush()
    line = await inp.areadline()
    return None if not line else line.rstrip("\r\n")


def run_chat(witness: str, study: Study, db: str | None, *, delay: bool, seed: int | None,
             script: bool, new_version: bool = False, inp: IO[str] | None = None,
             out: IO[str] | None = None, err: IO[str] | None = None) -> str:
    """Play one game; returns the stored game id. Raises ChatError (or StoreError) on bad input.

    `new_version`: if the study's name and version already have games under another config,
    store this config as the next version instead of refusing (see Store.register_study).
    """
    from turinglab.store import Store
    from turinglab.witnesses.llm import WitnessConfigError
    from turinglab.witnesses.persona import PersonaError

    if study.format != "two-player":
        raise ChatError(f"turinglab chat plays two-player games; study {study.name!r} is {study.format} "
                        "(use a two-player study, e.g. --study with preset: jones-bergen-2023)")
    spec = pick_witness(witness, study)
    # the AI seat's log lines (a refused reply, its reason) are not for the player's terminal
    logging.getLogger("turinglab.witnesses.ai_seat").addHandler(logging.NullHandler())
    store = Store(db)
    try:
        study_id = store.register_study(study, new_version=new_version)
        game = ChatGame(study, spec, store, study_id, delay, seed, out or sys.stdout, err or sys.stderr)

        async def main() -> None:
            try:
                if script:
                    await game.run_script(inp or sys.stdin)
                else:
                    await game.run_interactive(LineReader(inp or sys.stdin))
            finally:
                await game.close()

        try:
            asyncio.run(main())
        except KeyboardInterrupt:
            if game.game.state != "ended":
                game.act(Leave(INTERROGATOR))
            raise
        except (WitnessConfigError, PersonaError) as exc:  # e.g. the persona prompt fails when the game starts
            raise ChatError(str(exc)) from None
        finally:
            if game.game.state != "ended":  # any other failure: the stored game still ends
                with contextlib.suppress(Exception):
                    game.act(End("aborted"))
        return game.game_id
    finally:
        store.close()
