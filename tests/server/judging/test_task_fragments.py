"""The judge page's item part comes from the task plugin: each built-in task's fragment renders
its item, user text escaped; a task registered by a plugin is shown by its own fragment."""

from __future__ import annotations

from turinglab.plugins import hookimpl
from turinglab.plugins.kinds import StaticTask
from turinglab.plugins.manager import plugin_manager
from turinglab.server.judging.pages import public_item, task_fragment
from turinglab.store.static import ItemInfo

EVIL = "<img src=x onerror=alert(1)>"


def item(text: str, payload: dict | None = None, cue: str | None = "cat") -> ItemInfo:
    return ItemInfo(id=1, key="k", text=text, payload=payload or {}, truth="human", agent="human", control=False,
                    stimulus_id=1, stimulus_key="s", stimulus_text=cue, stimulus_image=None, stimulus_fields={})


def render(task: str, it: ItemInfo) -> str:
    return task_fragment(task).render(item=public_item(it, task, "j:0"), n=0, root="", token="t")


def test_builtin_fragments_show_the_item_and_escape_it():
    word = render("word", item(EVIL))
    assert 'id="cue">cat<' in word and "&lt;img" in word and EVIL not in word
    obj = render("object", item(f"dog, {EVIL}"))
    assert "<li>dog</li>" in obj and EVIL not in obj and "picture for this item is not available" in obj
    conv = render("conversation", item(f"A: hi\nB: {EVIL}"))
    assert conv.count("<li") == 2 and EVIL not in conv
    assert "2 fixations" in render("fv", item("", {"scanpath": [[1, 2], [3, 4]]}))


class Limerick:
    @hookimpl
    def turinglab_static_tasks(self):
        return [StaticTask("limerick", "a five-line comic poem", "Human or machine?",
                           '<pre id="response">{{ item.text }} ({{ item.rhymes }} rhymes)</pre>',
                           show=lambda payload, text: {"rhymes": payload.get("rhymes", 0)})]


def test_a_plugin_task_is_shown_by_its_own_fragment():
    pm = plugin_manager()
    plugin = Limerick()
    pm.register(plugin, name="test-limerick")
    try:
        html = render("limerick", item(f"there once was {EVIL}", {"rhymes": 5}))
        assert html.startswith('<pre id="response">there once was &lt;img') and "(5 rhymes)" in html
    finally:
        pm.unregister(plugin)
        task_fragment.cache_clear()
