"""Layering rules: only the Ray executor imports ray; envs/ import nothing from the framework;
importing the package does not start or import Ray."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def imported_modules(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(), filename=str(path))
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
    return names


def test_only_the_ray_executor_imports_ray() -> None:
    offenders = []
    for path in sorted((ROOT / "light_league").rglob("*.py")):
        uses_ray = any(m == "ray" or m.startswith("ray.") for m in imported_modules(path))
        if uses_ray and path.relative_to(ROOT).as_posix() != "light_league/execution/ray_executor.py":
            offenders.append(str(path.relative_to(ROOT)))
    assert offenders == []


def test_envs_import_nothing_from_the_framework() -> None:
    offenders = [
        str(p.relative_to(ROOT))
        for p in sorted((ROOT / "envs").rglob("*.py"))
        if any(m.split(".")[0] == "light_league" for m in imported_modules(p))
    ]
    assert offenders == []


def test_the_local_path_never_loads_ray() -> None:
    code = (
        "import sys, light_league.runner, light_league.build, light_league.cli, envs; "
        "print('ray' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True)
    assert out.stdout.strip() == "False"
