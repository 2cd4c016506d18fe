"""The plugin seam (issue 34): pluggy hook specifications (`hookspecs.py`), what the hooks return
(`kinds.py`) and the one plugin manager (`manager.py`). The built-ins are plugins of these hooks too
(`manager.BUILTINS`); outside packages register under the setuptools entry-point group `turinglab`.
See docs/plugins.md."""

from turinglab.plugins.hookspecs import hookimpl

__all__ = ["hookimpl"]
