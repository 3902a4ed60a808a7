"""One name per thing: no two public classes of light_league/ share a name.

A public class is any class whose name does not start with ``_``, at module level or nested. Two
of them with one name (two ``MetaGame`` s: the AgentManager's part and the evaluation's protocol
of a solved meta-game, now ``SolvedMetaGame``) make a reader, a traceback and an import guess
which one is meant. A former name kept for old imports is an alias (``Old = New``), not a class.
"""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def public_classes(source: str, where: str) -> list[tuple[str, str]]:
    """``(name, where:line)`` of every public class in ``source``."""
    return [
        (node.name, f"{where}:{node.lineno}")
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.ClassDef) and not node.name.startswith("_")
    ]


def shared_names(classes: list[tuple[str, str]]) -> dict[str, list[str]]:
    found: dict[str, list[str]] = defaultdict(list)
    for name, where in classes:
        found[name].append(where)
    return {name: places for name, places in sorted(found.items()) if len(places) > 1}


def test_no_two_public_classes_share_a_name() -> None:
    classes = [
        c
        for path in sorted((ROOT / "light_league").rglob("*.py"))
        for c in public_classes(path.read_text(), path.relative_to(ROOT).as_posix())
    ]
    assert shared_names(classes) == {}


def test_the_check_sees_nested_classes_and_passes_private_ones_and_aliases() -> None:
    a = public_classes("class MetaGame:\n    class Config: ...\nclass _Hidden: ...\nOld = MetaGame\n", "a.py")
    b = public_classes("class MetaGame: ...\nclass _Hidden: ...\n", "b.py")
    assert shared_names(a + b) == {"MetaGame": ["a.py:1", "b.py:1"]}
    assert [name for name, _ in a] == ["MetaGame", "Config"]
