"""bench/ and tools/ use the library, they are not a second one.

A bench or tool reads a run through :class:`light_league.run_reader.RunReader` (or the files'
own readers in ``light_league.tracking.record`` and ``report``), scores one policy against another with
:mod:`light_league.rollout.head_to_head`, and touches nothing private: no ``obj._name`` of an
object it does not define, no ``from module import _name``. No bench script edits ``sys.path``
or imports another script (``bench/bench_output.py`` is their shared helper, found beside the
script as Python runs it); a tool may put the repository root first on ``sys.path`` so that it
imports this checkout.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPTS = sorted((ROOT / "bench").glob("*.py")) + sorted((ROOT / "tools").glob("*.py"))
#: modules under bench/ that scripts may import (helpers, not scripts)
HELPERS = {"bench_output"}
#: a run directory's files, which only the library's readers open
RUN_FILES = {"generations.jsonl", "policies", "payoff", "pool.json", "matches.jsonl"}


def _tree(path: Path) -> ast.Module:
    return ast.parse(path.read_text(encoding="utf-8"), filename=str(path))


def _name(path: Path) -> str:
    return str(path.relative_to(ROOT))


def private_names(tree: ast.Module) -> list[str]:
    """``obj._name`` of anything but ``self`` / ``cls``, and ``from module import _name``."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and node.attr.startswith("_") and not node.attr.startswith("__"):
            if not (isinstance(node.value, ast.Name) and node.value.id in ("self", "cls")):
                found.append(f"line {node.lineno}: {ast.unparse(node)}")
        elif isinstance(node, ast.ImportFrom):
            found += [f"line {node.lineno}: import {a.name}" for a in node.names if a.name.startswith("_")]
    return found


def script_imports(tree: ast.Module, scripts: set[str], *, root_first_allowed: bool) -> list[str]:
    """Imports of another script and ``sys.path`` edits (a tool may put the repository root first)."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [f"line {node.lineno}: import {a.name}" for a in node.names if a.name in scripts]
        elif isinstance(node, ast.ImportFrom) and node.module in scripts:
            found.append(f"line {node.lineno}: from {node.module} import ...")
        elif isinstance(node, ast.Call) and ast.unparse(node.func) in ("sys.path.insert", "sys.path.append"):
            if not (root_first_allowed and ast.unparse(node).startswith("sys.path.insert(0, str(ROOT))")):
                found.append(f"line {node.lineno}: {ast.unparse(node)}")
    return found


def run_files_by_hand(tree: ast.Module) -> list[str]:
    """``run / "generations.jsonl"``, ``run / "policies" / id`` ...: RunReader and RunDir know where they are."""
    return [
        f"line {node.lineno}: {ast.unparse(node)}"
        for node in ast.walk(tree)
        if isinstance(node, ast.BinOp)
        and isinstance(node.op, ast.Div)
        and isinstance(node.right, ast.Constant)
        and node.right.value in RUN_FILES
    ]


@pytest.mark.parametrize("path", SCRIPTS, ids=_name)
def test_no_private_name_of_another_module_or_object(path: Path) -> None:
    assert private_names(_tree(path)) == []


@pytest.mark.parametrize("path", SCRIPTS, ids=_name)
def test_no_script_imports_another_or_edits_sys_path(path: Path) -> None:
    scripts = {p.stem for p in SCRIPTS} - HELPERS
    assert script_imports(_tree(path), scripts, root_first_allowed=path.parent.name == "tools") == []


@pytest.mark.parametrize("path", SCRIPTS, ids=_name)
def test_no_run_file_is_opened_by_hand(path: Path) -> None:
    assert run_files_by_hand(_tree(path)) == []


def test_the_checks_find_what_they_look_for() -> None:
    bad = ast.parse(
        "import sys\nimport league_quality\nsys.path.insert(0, str(ROOT))\nfrom x import _y\n"
        "a = runner._generation()\nb = run / 'policies' / member\nc = self._cache\n"
    )
    assert [f.split(":")[0] for f in private_names(bad)] == ["line 4", "line 5"]
    assert len(script_imports(bad, {"league_quality"}, root_first_allowed=False)) == 2
    assert len(script_imports(bad, {"league_quality"}, root_first_allowed=True)) == 1
    assert run_files_by_hand(bad) == ["line 6: run / 'policies'"]
