"""No import circles in turinglab/: every import at any level (module top, inside functions,
under TYPE_CHECKING, relative or absolute) is an edge of the module graph; a cycle fails the test."""
from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = "turinglab"


def module_names(root: Path = ROOT) -> dict[str, Path]:
    """turinglab module name -> file (packages under their own name, from __init__.py)."""
    names = {}
    for path in sorted((root / PACKAGE).rglob("*.py")):
        parts = list(path.relative_to(root).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        names[".".join(parts)] = path
    return names


def _resolve(name: str, known: dict[str, Path]) -> str | None:
    """The longest known module that `name` is or lies in (a.b.c.func -> a.b.c)."""
    while name:
        if name in known:
            return name
        name = name.rpartition(".")[0]
    return None


def imports_of(module: str, path: Path, known: dict[str, Path]) -> set[str]:
    """The turinglab modules `module` imports, anywhere in its source."""
    is_package = path.name == "__init__.py"
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if (hit := _resolve(alias.name, known)) is not None:
                    out.add(hit)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = module.split(".") if is_package else module.split(".")[:-1]
                base = base[: len(base) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            for alias in node.names:  # `from pkg import mod` imports the submodule pkg.mod,
                name = f"{target}.{alias.name}"  # `from pkg import thing` the package itself
                if (hit := _resolve(name if name in known else target, known)) is not None:
                    out.add(hit)
    out.discard(module)
    return out


def import_graph(root: Path = ROOT) -> dict[str, set[str]]:
    known = module_names(root)
    return {name: imports_of(name, path, known) for name, path in known.items()}


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import cycle as [a, b, ..., a], or None."""
    state: dict[str, int] = {}  # 1 on the stack, 2 done
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                return stack[stack.index(nxt):] + [nxt]
            if nxt not in state and (found := visit(nxt)) is not None:
                return found
        stack.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state and (found := visit(node)) is not None:
            return found
    return None


def test_no_import_cycle_in_turinglab():
    graph = import_graph()
    assert len(graph) > 100, "the scan found too few modules; is ROOT right?"
    cycle = find_cycle(graph)
    assert cycle is None, "import cycle: " + " -> ".join(cycle)


def test_the_graph_sees_function_local_and_relative_imports(tmp_path):
    pkg = tmp_path / PACKAGE
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "sub" / "__init__.py").write_text("from . import b\n")
    (pkg / "sub" / "a.py").write_text("def f():\n    from turinglab.sub.b import g\n    return g\n")
    (pkg / "sub" / "b.py").write_text("from .a import f\n\ndef g():\n    return f\n")
    (pkg / "c.py").write_text("from turinglab.sub import a\n")
    graph = import_graph(tmp_path)
    assert graph["turinglab.sub.a"] == {"turinglab.sub.b"}
    assert graph["turinglab.sub.b"] == {"turinglab.sub.a"}
    assert graph["turinglab.c"] == {"turinglab.sub.a"}
    assert graph["turinglab.sub"] == {"turinglab.sub.b"}
    cycle = find_cycle(graph)
    assert cycle is not None and set(cycle) == {"turinglab.sub.a", "turinglab.sub.b"}
    (pkg / "sub" / "a.py").write_text("def f():\n    return 1\n")
    assert find_cycle(import_graph(tmp_path)) is None
    (pkg / "sub" / "d.py").write_text("from turinglab.sub import b\nfrom turinglab.sub import VALUE\n")
    (pkg / "sub" / "__init__.py").write_text("VALUE = 1\nfrom .d import b\n")
    graph = import_graph(tmp_path)
    assert graph["turinglab.sub.d"] == {"turinglab.sub", "turinglab.sub.b"}
    assert set(find_cycle(graph)) == {"turinglab.sub", "turinglab.sub.d"}


# Layers, lowest first: a module may import its own layer and those below it, never one above.
# Inside analysis/ the subpackages are layers too (live games first, the export and demos last).
LAYERS: list[tuple[str, ...]] = [
    ("turinglab", "turinglab.textnorm", "turinglab.stats", "turinglab.i18n"),
    ("turinglab.plugins",),  # the hook contracts and the manager; it loads the built-ins by module name only
    ("turinglab.game",),
    ("turinglab.witnesses", "turinglab.matchmaking"),
    ("turinglab.store",),
    ("turinglab.statictests",),
    ("turinglab.judges",),
    ("turinglab.analysis", "turinglab.analysis.live"),
    ("turinglab.analysis.audit",),
    ("turinglab.analysis.report",),
    ("turinglab.analysis.static",),
    ("turinglab.analysis.export",),
    ("turinglab.analysis.demo",),
    ("turinglab.server",),
    ("turinglab.bots",),
    ("turinglab.cli", "turinglab.__main__"),
]
# (importer, imported): an upward import allowed, with the reason. Keep this short.
EXCEPTIONS: dict[tuple[str, str], str] = {}


def layer_of(module: str) -> int:
    """The index in LAYERS of the longest prefix that `module` is or lies in."""
    best, rank = -1, None
    for i, prefixes in enumerate(LAYERS):
        for p in prefixes:
            if (module == p or module.startswith(p + ".")) and len(p) > best:
                best, rank = len(p), i
    assert rank is not None, f"{module} is in no layer of LAYERS: add its package there"
    return rank


def upward_imports(graph: dict[str, set[str]]) -> list[str]:
    return sorted(f"{a} -> {b}" for a, targets in graph.items() for b in targets
                  if layer_of(b) > layer_of(a) and (a, b) not in EXCEPTIONS)


def test_imports_point_down_the_layers():
    """Issue 34: data flows one way (config -> game -> store -> analysis -> report), and so do imports."""
    graph = import_graph()
    up = upward_imports(graph)
    assert not up, "imports from a lower layer into a higher one (move the code down, or pass plain values):\n" + "\n".join(up)
    stale = [pair for pair in EXCEPTIONS if pair[1] not in graph.get(pair[0], set())]
    assert not stale, f"exceptions that no longer happen (remove them): {stale}"


def test_the_layer_check_catches_an_upward_import():
    graph = {"turinglab.store.api": {"turinglab.game.events"}, "turinglab.game.events": set()}
    assert upward_imports(graph) == []
    graph["turinglab.game.events"] = {"turinglab.store.api"}
    assert upward_imports(graph) == ["turinglab.game.events -> turinglab.store.api"]
    assert layer_of("turinglab.analysis.report.figures") > layer_of("turinglab.analysis.live.core")
    assert layer_of("turinglab.analysis") == layer_of("turinglab.analysis.live.core")
