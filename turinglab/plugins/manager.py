"""The one plugin manager: the built-in plugins, then the setuptools entry points of group
`turinglab`. Built-ins are named here, not imported, so the core depends on the hook
specifications only (as pytest's and Datasette's defaults do)."""

from __future__ import annotations

import importlib
import os
from functools import lru_cache

import pluggy

from turinglab.plugins import hookspecs

BUILTINS: tuple[str, ...] = (
    "turinglab.witnesses.plugin",
    "turinglab.statictests.plugin",
    "turinglab.judges.plugin",
    "turinglab.analysis.report.sections",
)


class PluginError(ValueError):
    """A name no registered plugin provides."""


def make_manager(builtins: tuple[str, ...] = BUILTINS, entry_points: bool = True) -> pluggy.PluginManager:
    """A fresh manager with `builtins` (module names) and, if asked, the installed plugins.
    `TURINGLAB_DISABLE_PLUGINS` (comma-separated plugin names) leaves plugins out."""
    pm = pluggy.PluginManager(hookspecs.PROJECT)
    pm.add_hookspecs(hookspecs)
    for name in os.environ.get("TURINGLAB_DISABLE_PLUGINS", "").split(","):
        if name.strip():
            pm.set_blocked(name.strip())
    for name in builtins:
        if not pm.is_blocked(name):
            pm.register(importlib.import_module(name), name=name)
    if entry_points:
        pm.load_setuptools_entrypoints(hookspecs.PROJECT)
    pm.check_pending()
    return pm


@lru_cache(maxsize=1)
def plugin_manager() -> pluggy.PluginManager:
    return make_manager()


def collect(hook: str, pm: pluggy.PluginManager | None = None) -> dict:
    """{name: description} of one hook over every plugin; a name given twice is an error naming both."""
    pm = pm or plugin_manager()
    out: dict = {}
    owner: dict[str, str] = {}
    impls = getattr(pm.hook, hook).get_hookimpls()
    for impl in impls:  # in registration order: the built-ins first
        for thing in impl.function() or ():
            if thing.name in out:
                raise PluginError(f"{hook}: {thing.name!r} is given by both {owner[thing.name]} and "
                                         f"{impl.plugin_name}; uninstall or disable one (TURINGLAB_DISABLE_PLUGINS)")
            out[thing.name] = thing
            owner[thing.name] = impl.plugin_name
    return out


def lookup(hook: str, name: str, what: str) -> object:
    """The description called `name`, or `PluginError` listing the names there are."""
    things = collect(hook)
    if name not in things:
        raise PluginError(f"unknown {what} {name!r}; use one of {', '.join(things) or '(none registered)'}")
    return things[name]


def plugin_of(hook: str, name: str, pm: pluggy.PluginManager | None = None) -> str:
    """The name of the plugin giving `name` through `hook` ("" if none)."""
    pm = pm or plugin_manager()
    for impl in getattr(pm.hook, hook).get_hookimpls():
        if any(t.name == name for t in impl.function() or ()):
            return impl.plugin_name
    return ""


def witness_kinds() -> dict:
    return collect("turinglab_witness_kinds")


def static_tasks() -> dict:
    return collect("turinglab_static_tasks")


def importers() -> dict:
    return collect("turinglab_importers")


def ai_judges() -> dict:
    return collect("turinglab_ai_judges")


def content_filters() -> dict:
    return collect("turinglab_content_filters")


def report_sections() -> dict:
    return collect("turinglab_report_sections")


def listing(pm: pluggy.PluginManager | None = None) -> list[dict]:
    """Each plugin with the hooks it implements and the names each gives (`turinglab plugins`)."""
    pm = pm or plugin_manager()
    dist = {id(p): d for p, d in pm.list_plugin_distinfo()}
    rows = []
    for name, plugin in pm.list_name_plugin():
        if plugin is None:
            continue
        hooks = {}
        for caller in pm.get_hookcallers(plugin) or ():
            for impl in caller.get_hookimpls():
                if impl.plugin is plugin:
                    hooks[caller.name] = [t.name for t in impl.function() or ()]
        d = dist.get(id(plugin))
        rows.append({"plugin": name, "package": f"{d.project_name} {d.version}" if d else "turinglab (built-in)",
                     "hooks": hooks})
    return rows
