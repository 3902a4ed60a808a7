"""Imports inside light_league/ (its envs and examples included): no circle, and no arrow from a
lower layer up to a higher one.

Every ``import`` and ``from ... import`` in the package counts, at module level or inside a
function (a function-level import hides a circle from Python, not from the design). A name
imported from a package counts as an edge to the package's module, or to its submodule when it
is one (``from light_league.tracking import report``).
"""

from __future__ import annotations

import ast
from pathlib import Path

from light_league import layers

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = "light_league"

#: the layers, lowest first, from the package's map (light_league/layers.py, from which
#: docs/architecture.md's layer table and module map are generated): a module may import from its
#: own layer and the ones below it, and belongs to the layer of the longest prefix that names it
LAYERS: list[tuple[str, tuple[str, ...]]] = [(layer.name, tuple(layer.modules)) for layer in layers.LAYERS]
SIDEWAYS_ALLOWED = layers.SIDEWAYS_ALLOWED
COMPONENTS = layers.COMPONENTS


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def package_modules(package: str = PACKAGE) -> dict[str, Path]:
    return {module_name(p): p for p in sorted((ROOT / package).rglob("*.py"))}


def imports_of(name: str, path: Path, modules: dict[str, Path]) -> set[str]:
    """The package's modules that ``name`` imports (anywhere in the file)."""
    tree = ast.parse(path.read_text(), filename=str(path))
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
                base = base[: len(base) - (node.level - 1)]
                source = ".".join([*base, *([node.module] if node.module else [])])
            else:
                source = node.module or ""
            submodules = [f"{source}.{alias.name}" for alias in node.names]
            targets = [m for m in submodules if m in modules] or [source]
        else:
            continue
        found.update(t for t in targets if t in modules and t != name)
    return found


def import_graph(package: str = PACKAGE) -> dict[str, set[str]]:
    modules = package_modules(package)
    return {name: imports_of(name, path, modules) for name, path in modules.items()}


def layer_of(module: str) -> int:
    """Index of ``module``'s layer (the longest matching prefix)."""
    rel = module.removeprefix(PACKAGE).removeprefix(".")
    best, best_len = None, -1
    for index, (_, prefixes) in enumerate(LAYERS):
        for prefix in prefixes:
            matches = (
                rel == prefix or (prefix and rel.startswith(prefix + ".")) or (prefix == "" and rel == "")
            )
            if matches and len(prefix) > best_len:
                best, best_len = index, len(prefix)
    assert best is not None, f"{module} is in no layer: add it to LAYERS in {layers.__file__}"
    return best


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def test_every_module_has_a_layer() -> None:
    for module in package_modules():
        layer_of(module)


def test_every_prefix_of_the_map_names_a_module() -> None:
    """The map names no module that is gone, and each prefix once."""
    modules = {m.removeprefix(PACKAGE).removeprefix(".") for m in package_modules()}
    prefixes = [prefix for _, names in LAYERS for prefix in names]
    assert sorted(p for p in prefixes if p not in modules) == []
    assert len(prefixes) == len(set(prefixes))


def test_no_import_circle() -> None:
    graph = import_graph()
    circles = cycles(graph)
    detail = [
        f"{' / '.join(c)}: " + "; ".join(f"{a} -> {sorted(graph[a] & set(c))}" for a in c) for c in circles
    ]
    assert circles == [], detail


def test_no_import_from_a_lower_layer_up() -> None:
    up = [
        f"{a} ({LAYERS[layer_of(a)][0]}) imports {b} ({LAYERS[layer_of(b)][0]})"
        for a, targets in sorted(import_graph().items())
        for b in sorted(targets)
        if layer_of(b) > layer_of(a)
    ]
    assert up == []


def test_components_do_not_reach_sideways() -> None:
    def package(module: str) -> str:
        return module.removeprefix(PACKAGE + ".").split(".")[0]

    sideways = [
        f"{a} imports {b}"
        for a, targets in sorted(import_graph().items())
        for b in sorted(targets)
        if package(a) in COMPONENTS
        and package(b) in COMPONENTS
        and package(a) != package(b)
        and layer_of(a) == layer_of(b)
        and (package(a), package(b)) not in SIDEWAYS_ALLOWED
    ]
    assert sideways == []


def test_the_checks_see_function_level_imports_and_circles(tmp_path: Path) -> None:
    """The reader finds an import inside a function, and a two-module circle is reported."""
    path = tmp_path / "m.py"
    path.write_text("def f():\n    from light_league.runner import Runner\n    return Runner\n")
    modules = {"light_league.build": path, "light_league.runner": path}
    assert imports_of("light_league.build", path, modules) == {"light_league.runner"}
    assert cycles({"a": {"b"}, "b": {"a"}, "c": {"a"}}) == [["a", "b"]]
    assert layer_of("light_league.tracking.config") < layer_of("light_league.tracking.logger")
