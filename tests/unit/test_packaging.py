"""The package's metadata (pyproject.toml's [project]) installs the whole package and nothing else."""

from __future__ import annotations

import tomllib
from pathlib import Path

import setuptools

import light_league

ROOT = Path(__file__).resolve().parents[2]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())


def test_the_version_is_the_packages() -> None:
    assert PYPROJECT["project"]["version"] == light_league.__version__


def test_every_folder_of_the_package_is_installed_and_nothing_beside_it() -> None:
    """Every folder under light_league/ that holds modules is a package the find rule takes (a
    folder without __init__.py would be left out of the wheel); tests/, bench/ and tools/ are not,
    and no top-level envs or examples package exists to be installed or shadowed."""
    found = setuptools.find_packages(str(ROOT), **PYPROJECT["tool"]["setuptools"]["packages"]["find"])
    folders = {
        ".".join(p.parent.relative_to(ROOT).parts)
        for p in (ROOT / "light_league").rglob("*.py")
        if "__pycache__" not in p.parts
    }
    assert sorted(folders - set(found)) == []
    assert {"light_league.envs", "light_league.examples"} <= set(found)
    assert [p for p in found if not p.startswith("light_league")] == []
    # (a checkout switched from before the move may keep their __pycache__ folders: no modules)
    assert [p for name in ("envs", "examples") for p in (ROOT / name).rglob("*.py")] == []
