"""Layering rules: only the Ray executor imports ray; light_league/envs/ imports nothing else of the package;
importing the package does not start or import Ray."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

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


def _framework(module: str) -> bool:
    """A module of light_league outside its envs (the package itself included)."""
    return module.split(".")[0] == "light_league" and not module.startswith("light_league.envs")


def test_envs_import_nothing_from_the_framework() -> None:
    offenders = [
        str(p.relative_to(ROOT))
        for p in sorted((ROOT / "light_league" / "envs").rglob("*.py"))
        if any(_framework(m) for m in imported_modules(p))
    ]
    assert offenders == []


def test_game_theory_imports_numpy_and_scipy_only() -> None:
    """The math floor: the standard library, numpy, scipy and its own modules; nothing of the
    framework (errors, configs, files) and no other package."""
    allowed = {"numpy", "scipy", "__future__", *sys.stdlib_module_names}
    offenders = [
        f"{p.relative_to(ROOT)}: {m}"
        for p in sorted((ROOT / "light_league" / "game_theory").rglob("*.py"))
        for m in sorted(imported_modules(p))
        if m.split(".")[0] not in allowed and not m.startswith("light_league.game_theory")
    ]
    assert offenders == []


@pytest.mark.integration
def test_the_local_path_never_loads_ray() -> None:
    code = (
        "import sys, light_league.runner, light_league.build, light_league.cli, light_league.envs; "
        "print('ray' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True)
    assert out.stdout.strip() == "False"


@pytest.mark.integration
def test_reading_a_config_or_the_help_loads_neither_torch_nor_matplotlib() -> None:
    """A typo in a config is answered in well under a second: checking it imports no learner or
    chart code (torch alone costs 2-3 s to import on a 2-core machine)."""
    code = (
        "import sys; from light_league.config import load_config; from light_league import cli; "
        "load_config('expr_configs/league.yaml', ['learner.mappo.lr=1e-4']); "
        "import light_league.algorithms.mappo; "
        "print(sorted(m for m in ('torch', 'matplotlib') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True)
    assert out.stdout.strip() == "[]"
    help_text = subprocess.run(
        [sys.executable, "-X", "importtime", "main.py", "--help"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        check=True,
    )
    imported = {line.rsplit("|", 1)[-1].strip() for line in help_text.stderr.splitlines() if "|" in line}
    assert "usage" in help_text.stdout and not imported & {"torch", "matplotlib"}


def test_the_lazy_names_of_the_mappo_package_resolve() -> None:
    import light_league.algorithms.mappo as mappo

    for name in mappo.__all__:
        assert getattr(mappo, name).__name__ == name
    with pytest.raises(AttributeError, match="no attribute 'MAPPOLeaner'"):
        _ = mappo.MAPPOLeaner  # type: ignore[attr-defined]
