"""Every built-in comes through the plugin hooks, and no second registry is left in the package."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from turinglab.plugins import hookimpl
from turinglab.plugins.kinds import ContentFilterKind
from turinglab.plugins.manager import (
    BUILTINS, PluginError, collect, listing, make_manager, plugin_manager, static_tasks, witness_kinds,
)

ROOT = Path(__file__).resolve().parents[2]
EXPECTED = {
    "turinglab_witness_kinds": {"eliza", "llm", "local"},
    "turinglab_static_tasks": {"word", "caption", "object", "color", "fv", "conversation"},
    "turinglab_importers": {"zhang", "plain", "psiturk", "jspsych"},
    "turinglab_ai_judges": {"svm", "linear-svm", "rbf-svc", "rf", "tfidf-lr", "conversation", "llm"},
    "turinglab_content_filters": {"word-list"},
    "turinglab_report_sections": {"reply-sources", "blinding-audit"},
}


def test_every_builtin_comes_through_the_hooks():
    pm = make_manager(entry_points=False)
    given: dict[str, set[str]] = {}
    for row in listing(pm):
        assert row["package"] == "turinglab (built-in)" and row["plugin"] in BUILTINS
        for hook, names in row["hooks"].items():
            given.setdefault(hook, set()).update(names)
    assert given == EXPECTED
    for hook, names in EXPECTED.items():
        assert set(collect(hook, pm)) == names


# the registries the hooks replaced: a tuple or dict of names written out in the package
OLD = [
    r'^TASKS\s*(:[^=]*)?=\s*\(\s*"word"', r'IMAGE_TASKS\s*=', r'JUDGES\s*=\s*\(\s*"svm"', r'ALL_JUDGES\s*=',
    r'PAPER_RULES\s*[:=]', r'TASK_INTRO\s*=', r'^QUESTION\s*=', r'_PERSONAS[^\n]*=.*\n(?s:.*)_PERSONAS[^\n]*=',
    r'Literal\["word", "caption"', r'Literal\["eliza", "llm", "local"\]', r'FORMATS\s*=\s*\("zhang"',
    r'if spec\.kind == "eliza":\s*\n\s*from turinglab\.witnesses\.eliza',
]


def test_no_old_registry_is_left():
    found = []
    for path in sorted((ROOT / "turinglab").rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        found += [f"{path.relative_to(ROOT)}: {pat}" for pat in OLD if re.search(pat, text, re.M)]
    assert found == []


def test_a_disabled_builtin_is_gone_everywhere(tmp_path):
    def run(*a, off="turinglab.statictests.plugin"):
        env = {"TURINGLAB_DISABLE_PLUGINS": off, "PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT)}
        return subprocess.run([sys.executable, "-m", "turinglab", *a], capture_output=True, text=True, env=env,
                               cwd=tmp_path, timeout=120)

    tasks = run("static", "tasks", "--json")
    assert tasks.returncode == 0, tasks.stderr
    assert tasks.stdout.strip() == "[]"
    imp = run("static", "import", "--task", "word", "--study", "w", "--responses", "x.csv", "--format", "plain",
              "--db", f"sqlite:///{tmp_path / 'x.db'}")
    assert imp.returncode != 0 and "--task must be one of" in imp.stderr
    (tmp_path / "word.json").write_text('{"cat": [{"groundtruth": "human", "response": "dog"}, '
                                          '{"groundtruth": "machine", "machine_groundtruth": "gpt2", "response": "cow"}]}')
    judge = run("judges", "evaluate", "--judge", "svm", "--responses", "word.json", off="turinglab.judges.plugin")
    assert judge.returncode != 0 and "--judge must be one of" in judge.stderr and "svm" not in judge.stderr.split(
        "got")[0]
    kinds = run("witness", "list", "--kinds", "--json", off="turinglab.witnesses.plugin")
    assert kinds.returncode == 0 and kinds.stdout.strip() == "[]"
    plugins = run("plugins", "--json")
    assert "statictests" not in plugins.stdout and "turinglab.witnesses.plugin" in plugins.stdout


def test_unknown_kind_and_task_are_one_clear_line():
    from turinglab.game.config import WitnessSpec
    from turinglab.game.static_config import StaticStudy

    with pytest.raises(ValueError, match=r"unknown kind 'robot'; use one of eliza, local, llm"):
        WitnessSpec(codename="R", kind="robot")
    with pytest.raises(ValueError, match=r"unknown task 'music'; use one of word, caption"):
        StaticStudy(name="m", task="music")
    with pytest.raises(ValueError, match="takes no 'options'"):
        WitnessSpec(codename="E", kind="eliza", options={"x": 1})
    assert set(witness_kinds()) >= EXPECTED["turinglab_witness_kinds"]
    assert set(static_tasks()) >= EXPECTED["turinglab_static_tasks"]


class _Strict:
    """A plugin object with a second content filter: no message may mention 'pineapple'."""

    @hookimpl
    def turinglab_content_filters(self):
        class NoFruit:
            def check(self, text):
                return "no-fruit: pineapple" if "pineapple" in text.shown.lower() else None

        return [ContentFilterKind("no-fruit", lambda words, use_default: NoFruit())]


async def test_content_filters_compose_and_the_strictest_wins():
    from turinglab.witnesses.filters import ComposedFilter

    pm = plugin_manager()
    plugin = _Strict()
    pm.register(plugin, name="test-no-fruit")
    try:
        flt = ComposedFilter(["zebra"])
        assert [n for n, _ in flt.filters] == ["word-list", "no-fruit"]
        assert await flt.check("I like PINEAPPLE on pizza") == "no-fruit: pineapple"
        assert (await flt.check("a z.e.b.r.a here")).startswith("word list")
        assert await flt.check("hello there") is None
    finally:
        pm.unregister(plugin)
    assert await ComposedFilter().check("pineapple") is None


def test_masking_filters_compose_and_masking_is_never_off():
    """A plugin's mask runs after the built-in one; with every masking filter gone the shipped rules
    still mask (no wrapper turns personal-data masking off)."""
    from turinglab.witnesses.filters import ComposedFilter

    class Names:
        def check(self, text):
            return None

        def mask(self, text):
            return text.replace("Gertrude", "[name hidden]") if "Gertrude" in text else None

    class NamesPlugin:
        @hookimpl
        def turinglab_content_filters(self):
            return [ContentFilterKind("names", lambda words, use_default: Names())]

    pm = plugin_manager()
    plugin = NamesPlugin()
    pm.register(plugin, name="test-names")
    try:
        out = ComposedFilter().mask("I'm Gertrude, mail me at gertie@example.org")
        assert "Gertrude" not in out and "gertie@example.org" not in out and "[name hidden]" in out
        assert ComposedFilter().mask("nothing personal here") is None
    finally:
        pm.unregister(plugin)
    bare = ComposedFilter()
    bare.filters = []
    assert "gertie@example.org" not in bare.mask("write to gertie@example.org")


def test_a_name_given_twice_is_an_error_naming_both():
    pm = make_manager(entry_points=False)

    class Twice:
        @hookimpl
        def turinglab_ai_judges(self):
            from turinglab.plugins.kinds import AIJudge

            return [AIJudge("svm", None)]

    pm.register(Twice(), name="twice")
    with pytest.raises(PluginError, match=r"'svm' is given by both turinglab.judges.plugin and twice"):
        collect("turinglab_ai_judges", pm)
