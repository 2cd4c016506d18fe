"""`turinglab chat` with the real ELIZA witness, stored in a real database; `turinglab db`."""

from __future__ import annotations

import asyncio
import io
import json
import os
import pty
import select
import subprocess
import sys
import time

import pytest
from typer.testing import CliRunner, Result

from turinglab.cli import app
from turinglab.game.study_file import load_preset, parse_study
from turinglab.cli.chat_terminal import LineReader, run_chat
from turinglab.witnesses.postprocess import sentence_case
from turinglab.store import Store
from turinglab.witnesses.eliza.engine import Eliza, doctor_script

CLI = [sys.executable, "-m", "turinglab"]


def cli(*args: str, stdin: str = "") -> subprocess.CompletedProcess:
    """The real command line in a subprocess."""
    return subprocess.run(CLI + list(args), input=stdin, capture_output=True, text=True, timeout=120,
                          env={**os.environ, "COLUMNS": "200"})


def run(*args: str, stdin: str = "") -> Result:
    """The same command line in-process (faster; stdin is not a terminal)."""
    return CliRunner().invoke(app, list(args), input=stdin, env={"COLUMNS": "200"})


def test_script_mode_prints_only_replies_and_stores_the_game(sqlite_url):
    lines = ["Men are all alike.", "", "x" * 301, "They're always bugging us about something or other."]
    r = cli("chat", "--witness", "eliza", "--no-delay", "--seed", "3", "--db", sqlite_url,
            stdin="\n".join(lines) + "\n")
    assert r.returncode == 0, r.stderr
    # an independent ELIZA fed the accepted lines gives the same replies, in sentence case
    eliza = Eliza(doctor_script())
    expected = [sentence_case(eliza.respond(lines[0])), sentence_case(eliza.respond(lines[3]))]
    assert expected[0] == "In what way"
    assert r.stdout.splitlines() == expected
    game_id = r.stderr.strip().splitlines()[-1]
    assert "refused (empty)" in r.stderr and "refused (too_long)" in r.stderr
    with Store(sqlite_url) as store:
        info = store.game(game_id)
        assert (info.status, info.end_reason, info.verdict) == ("ended", "stdin_closed", None)
        assert info.seats["A"].kind == "ai" and info.seats["A"].witness == "ELIZA"
        assert store.get_participant(info.interrogator_id).label == "terminal user"
        types = [e.type for e in store.events(game_id)]
        assert types == ["game_started", "message", "message", "refused", "refused", "message", "message",
                         "game_ended"]
        assert store.get_study(info.study_id).name == "jones-bergen-2023"

    shown = run("db", "show", game_id, "--db", sqlite_url)
    # the table wraps long cells at the terminal's width: the text is checked word by word
    assert shown.exit_code == 0 and "stdin_closed" in shown.stdout and all(w in shown.stdout for w in ("Men", "alike."))
    data = json.loads(run("db", "show", game_id, "--db", sqlite_url, "--json").stdout)
    assert data["game"]["id"] == game_id and len(data["events"]) == 8
    assert data["events"][1]["payload"]["text"] == "Men are all alike."
    assert data["events"][1]["identity"]["A"]["witness"] == "ELIZA"
    listed = run("db", "games", "--db", sqlite_url)
    assert game_id in listed.stdout


def test_script_verdict_and_second_game_reuses_participant(sqlite_url):
    r = run("chat", "--no-delay", "--db", sqlite_url, stdin="hello\n/verdict ai 85 canned replies\n")
    r2 = run("chat", "--no-delay", "--db", sqlite_url, stdin="hello\n")
    with Store(sqlite_url) as store:
        g1 = store.game(r.stderr.split()[-1])
        g2 = store.game(r2.stderr.split()[-1])
        assert (g1.verdict.choice, g1.verdict.confidence, g1.verdict.reason) == ("ai", 85, "canned replies")
        assert g1.verdict.correct is True and g1.end_reason == "verdict"
        assert g1.interrogator_id == g2.interrogator_id and g1.study_id == g2.study_id


def test_bad_input_exits_2_with_a_clear_message(sqlite_url, tmp_path):
    r = run("chat", "--witness", "nobody", "--no-delay", "--db", sqlite_url, stdin="hi\n")
    assert r.exit_code == 2 and "unknown witness 'nobody'" in r.stderr and "eliza" in r.stderr
    bad = tmp_path / "bad.yaml"
    bad.write_text("preset: jones-bergen-2023\nrules:\n  max_chars: 0\n")
    r = run("chat", "--study", str(bad), "--no-delay", "--db", sqlite_url, stdin="hi\n")
    assert r.exit_code == 2 and "rules.max_chars (line 3)" in r.stderr
    three = tmp_path / "three.yaml"
    three.write_text("preset: jones-bergen-2025\n")
    r = run("chat", "--study", str(three), "--no-delay", "--db", sqlite_url, stdin="hi\n")
    assert r.exit_code == 2 and "two-player" in r.stderr
    assert run("db", "upgrade", "--db", sqlite_url).exit_code == 0  # none of the above created the database
    r = run("db", "show", "g-missing", "--db", sqlite_url)
    assert r.exit_code == 2 and "no game with id 'g-missing'" in r.stderr


def test_changed_study_is_refused_once_it_has_games(sqlite_url, tmp_path):
    f = tmp_path / "s.yaml"
    f.write_text("preset: jones-bergen-2023\nname: frozen\nrules: {time_limit_s: 200}\n")
    assert run("chat", "--study", str(f), "--no-delay", "--db", sqlite_url, stdin="hi\n").exit_code == 0
    f.write_text("preset: jones-bergen-2023\nname: frozen\nrules: {time_limit_s: 100}\n")
    r = run("chat", "--study", str(f), "--no-delay", "--db", sqlite_url, stdin="hi\n")
    assert r.exit_code == 2 and "already has 1 game" in r.stderr and "version" in r.stderr
    r = run("chat", "--study", str(f), "--no-delay", "--new-version", "--db", sqlite_url, stdin="hi\n")
    assert r.exit_code == 0
    with Store(sqlite_url) as store:
        versions = sorted((s.version, s.study.rules.time_limit_s) for s in store.studies())
    assert versions == [(1, 200), (2, 100)]


def test_interactive_verdict_flow_and_reveal(sqlite_url):
    answers = "hello there\n/verdict\nmaybe\nai\nlots\nai\n80\nno typos at all\n"
    out = io.StringIO()
    gid = run_chat("eliza", load_preset("jones-bergen-2023"), sqlite_url, delay=False, seed=1, script=False,
                   inp=io.StringIO(answers), out=out, err=io.StringIO())
    text = out.getvalue()
    assert "witness> " in text
    assert "Please answer 'human' or 'ai'" in text and "not 'lots'" in text
    assert "The witness was an AI: ELIZA" in text and "correct." in text
    with Store(sqlite_url) as store:
        v = store.game(gid).verdict
        assert (v.choice, v.confidence, v.reason, v.forced) == ("ai", 80, "no typos at all", False)


def test_interactive_too_long_message_is_explained(sqlite_url):
    study = parse_study("preset: jones-bergen-2023\nname: short\nrules: {max_chars: 10}\n")
    out = io.StringIO()
    gid = run_chat("eliza", study, sqlite_url, delay=False, seed=1, script=False,
                   inp=io.StringIO("this is far too long\nok\n/quit\n"), out=out)
    assert "has 20 characters; the limit is 10" in out.getvalue() and "shorten it" in out.getvalue()
    with Store(sqlite_url) as store:
        assert store.game(gid).end_reason == "interrogator_left"


def test_reply_is_held_for_the_designed_delay(sqlite_url):
    study = parse_study(
        "preset: jones-bergen-2023\nname: fast\n"
        "rules: {typing_min_s: 0.1, typing_jitter_s: 0}\n"
        "witnesses:\n  - codename: ELIZA\n    kind: eliza\n"
        "    timing: {base_s: 0.5, s_per_char: 0.002, gamma_shape: 1, gamma_scale: 0.01}\n"
    )
    out = io.StringIO()
    gid = run_chat("eliza", study, sqlite_url, delay=True, seed=2, script=False,
                   inp=io.StringIO("hello\n/quit\n"), out=out)
    assert "(typing…)" in out.getvalue()
    with Store(sqlite_url) as store:
        ev = store.events(gid)
    q = next(e for e in ev if e.type == "message" and e.actor == "interrogator")
    typing = next(e for e in ev if e.type == "typing")
    a = next(e for e in ev if e.type == "message" and e.actor == "A")
    assert typing.t_ms - q.t_ms >= 100
    assert a.t_ms - q.t_ms >= 500 + 2 * len(a.payload["text"])  # base + s_per_char * n, at least


class Terminal:
    """`turinglab chat` running on a real pseudo-terminal."""

    def __init__(self, *args: str) -> None:
        self.master, slave = pty.openpty()
        self.proc = subprocess.Popen(CLI + ["chat", *args], stdin=slave, stdout=slave, stderr=slave, close_fds=True)
        os.close(slave)
        self.seen = b""

    def wait_for(self, marker: bytes, timeout: float = 30) -> None:
        end = time.monotonic() + timeout
        while marker not in self.seen and time.monotonic() < end:
            if select.select([self.master], [], [], 0.2)[0]:
                try:
                    self.seen += os.read(self.master, 4096)
                except OSError:
                    break
        assert marker in self.seen, self.seen.decode(errors="replace")

    def type(self, text: str) -> None:
        os.write(self.master, text.encode())

    def __enter__(self) -> "Terminal":
        return self

    def __exit__(self, *exc: object) -> None:
        assert self.close() == 0  # the game ended and chat exited cleanly

    def close(self) -> int:
        try:
            return self.proc.wait(timeout=30)
        finally:
            if self.proc.poll() is None:
                self.proc.kill()
            os.close(self.master)


def test_time_runs_out_in_a_real_terminal(sqlite_url, tmp_path):
    f = tmp_path / "s.yaml"
    f.write_text("preset: jones-bergen-2023\nname: tiny\nrules: {time_limit_s: 1.5}\n")
    with Terminal("--study", str(f), "--db", sqlite_url, "--no-delay") as term:
        term.wait_for(b"you> ")
        term.wait_for(b"Time is up")  # nobody typed: the timer closes the chat
        term.wait_for(b"[human/ai]")
        term.type("human\n")
        term.wait_for(b"(0-100)")
        term.type("30\n")
        term.wait_for(b"optional")
        term.type("\n")
        term.wait_for(b"db show")
    with Store(sqlite_url) as store:
        (g,) = store.games()
        assert g.verdict.forced and g.verdict.choice == "human" and g.verdict.correct is False
        assert [e.type for e in store.events(g.id)][:2] == ["game_started", "time_up"]


def test_lines_typed_ahead_in_a_terminal_are_all_read(sqlite_url):
    with Terminal("--db", sqlite_url, "--no-delay") as term:
        term.wait_for(b"you> ")
        term.type("Men are all alike.\nThey're always bugging us about something or other.\n/quit\n")
        term.wait_for(b"You left the game")
    with Store(sqlite_url) as store:
        (g,) = store.games()
        texts = [e.payload["text"] for e in store.events(g.id) if e.type == "message"]
    assert texts[0] == "Men are all alike." and texts[2].startswith("They're always") and len(texts) == 4
    assert g.end_reason == "interrogator_left"


def test_line_reader_sees_lines_that_arrived_together():
    r, w = os.pipe()
    os.write(w, "one\ntwo\nthré".encode())  # the writer stays open: no end of input
    with os.fdopen(r, encoding="utf-8") as stream:
        reader = LineReader(stream)
        assert reader.readline(0.5) == "one\n"
        assert reader.readline(0.5) == "two\n"  # already read from the pipe: must not wait
        t = time.monotonic()
        assert reader.readline(0.3) is None  # an unfinished line: times out
        assert time.monotonic() - t >= 0.29
        os.write(w, b"\n")
        assert reader.readline(0.5) == "thr\u00e9\n"
        os.close(w)
        assert reader.readline(0.5) == ""  # end of input


def test_db_upgrade_command(sqlite_url):
    r = run("db", "upgrade", "--db", sqlite_url)
    assert r.exit_code == 0 and "database at head" in r.stderr
    with Store(sqlite_url, upgrade=False) as store:
        assert store.games() == []  # the tables exist
    r = run("db", "upgrade", "--db", "postgresql+psycopg://nobody@127.0.0.1:1/none")
    assert r.exit_code == 2 and "cannot use the database" in r.stderr and "--db" in r.stderr
    r = run("db", "upgrade", "--db", "mysql://x@y/z")
    assert r.exit_code == 2 and "unsupported database" in r.stderr


def _dead_llm_study(tmp_path, fallback: str = "null"):
    f = tmp_path / "dead.yaml"
    f.write_text("preset: jones-bergen-2023\nname: dead-llm\nwitnesses:\n"
                 "  - {codename: Dead, kind: llm, model: m, base_url: 'http://127.0.0.1:1/v1', "
                 f"timeout_s: 2, retries: 0, fallback: {fallback}}}\n")
    return f


def test_failing_witness_is_answered_by_eliza_and_the_game_ends(sqlite_url, tmp_path):
    # a study witness without a fallback against a dead server: ELIZA answers (no traceback)
    f = _dead_llm_study(tmp_path)
    r = run("chat", "--study", str(f), "--witness", "Dead", "--no-delay", "--db", sqlite_url,
            stdin="Men are all alike.\n")
    assert r.exit_code == 0, r.output
    assert r.stdout.splitlines() == [Eliza(doctor_script()).respond("Men are all alike.").lower()]
    with Store(sqlite_url) as store:
        (g,) = store.games()
        assert (g.status, g.end_reason) == ("ended", "stdin_closed")


def test_witness_config_errors_exit_2_with_one_line(sqlite_url, tmp_path, monkeypatch):
    monkeypatch.delenv("NO_SUCH_KEY", raising=False)
    f = tmp_path / "nokey.yaml"
    f.write_text("preset: jones-bergen-2023\nname: nokey\nwitnesses:\n"
                 "  - {codename: Keyless, kind: llm, model: m, api_key_env: NO_SUCH_KEY}\n")
    r = run("chat", "--study", str(f), "--witness", "Keyless", "--no-delay", "--db", sqlite_url, stdin="hi\n")
    assert r.exit_code == 2 and "no API key" in r.stderr and "Traceback" not in r.output, r.output
    f.write_text("preset: jones-bergen-2023\nname: badprompt\nwitnesses:\n"
                 "  - {codename: Nobody, kind: llm, model: m, base_url: 'http://127.0.0.1:1/v1', prompt: nosuch}\n")
    r = run("chat", "--study", str(f), "--witness", "Nobody", "--no-delay", "--db", sqlite_url, stdin="hi\n")
    assert r.exit_code == 2 and "unknown prompt 'nosuch'" in r.stderr, r.output
    assert r.exception is None or isinstance(r.exception, SystemExit)


class _BrokenInput(io.StringIO):
    """Input that fails after its first line (a read error mid-game)."""

    def __next__(self) -> str:
        if self.tell() > 0:
            raise OSError("input device gone")
        return super().__next__()


def test_a_game_interrupted_by_an_error_still_ends(sqlite_url):
    with pytest.raises(OSError):
        run_chat("eliza", load_preset("jones-bergen-2023"), sqlite_url, delay=False, seed=1, script=True,
                 inp=_BrokenInput("hello\nmore\n"), out=io.StringIO(), err=io.StringIO())
    with Store(sqlite_url) as store:
        (g,) = store.games()
        assert (g.status, g.end_reason) == ("ended", "aborted")


def test_read_only_db_commands_do_not_create_a_database(tmp_path):
    typo = tmp_path / "typo.db"
    url = f"sqlite:///{typo}"
    for args in (["db", "games"], ["db", "show", "g-x"]):
        r = run(*args, "--db", url)
        assert r.exit_code == 2, r.output
        assert f"no database at {typo}" in r.stderr and "turinglab db upgrade --db" in r.stderr
    assert not typo.exists()
    r = run("db", "games", "--db", "postgresql+psycopg://nobody@127.0.0.1:1/none")
    assert r.exit_code == 2 and "cannot read the database" in r.stderr, r.output


async def test_waiting_for_input_leaves_the_event_loop_running():
    r, w = os.pipe()
    ticks = 0

    async def ticker() -> None:  # stands in for the local model's prefill while the user types
        nonlocal ticks
        while True:
            await asyncio.sleep(0.01)
            ticks += 1

    with os.fdopen(r, encoding="utf-8") as stream:
        reader = LineReader(stream)
        task = asyncio.create_task(ticker())
        asyncio.get_running_loop().call_later(0.4, os.write, w, b"hello\n")
        t = time.monotonic()
        assert await reader.areadline(5) == "hello\n"
        assert 0.35 < time.monotonic() - t < 3
        assert ticks >= 10  # the loop ran while the read waited
        assert await reader.areadline(0.3) is None  # times out
        os.close(w)
        assert await reader.areadline() == ""  # end of input, without a timeout
        task.cancel()


def test_db_games_piped_is_one_tab_separated_line_per_game(sqlite_url):
    """Issue 27: in a pipe (not a terminal) `db games` gave an 80-column table that split every cell."""
    ids = [run("chat", "--no-delay", "--db", sqlite_url, stdin="hello there, how are you doing today?\n").stderr.split()[-1]
           for _ in range(2)]
    out = run("db", "games", "--db", sqlite_url).stdout.splitlines()
    assert out[0].split("\t") == ["game", "study", "format", "started (UTC)", "status", "end", "seats", "verdict", "flags"]
    rows = [line.split("\t") for line in out[1:]]
    assert len(rows) == 2 and all(len(r) == 9 for r in rows)
    assert sorted(r[0] for r in rows) == sorted(ids)  # whole ids, never folded
    assert all(r[5] == "stdin_closed" and r[6] == "A:ELIZA" for r in rows)


def test_chat_draws_the_studys_persona_and_stores_it(sqlite_url, tmp_path):
    # jones-bergen-2023 draws a persona per game (persona_draw: true): the terminal game does it too
    from turinglab.witnesses import persona_draw

    f = _dead_llm_study(tmp_path)
    stored = []
    for seed in ("5", "6"):
        r = run("chat", "--study", str(f), "--witness", "Dead", "--no-delay", "--seed", seed, "--db", sqlite_url,
                stdin="hi\n")
        assert r.exit_code == 0, r.output
        with Store(sqlite_url) as store:
            (start,) = [e for e in store.events(r.stderr.split()[-1]) if e.type == "game_started"]
        stored.append(start.payload["personas"]["A"])
    year = time.gmtime().tm_year
    assert stored == [persona_draw.draw(5, year=year), persona_draw.draw(6, year=year)]
    assert stored[0] != stored[1] and all(p["name"] != "Jamie" and p["country"] == "the US" for p in stored)
    # ELIZA's study draws nothing
    r = run("chat", "--witness", "eliza", "--no-delay", "--seed", "5", "--db", sqlite_url, stdin="hi\n")
    with Store(sqlite_url) as store:
        (start,) = [e for e in store.events(r.stderr.split()[-1]) if e.type == "game_started"]
    assert "personas" not in start.payload
