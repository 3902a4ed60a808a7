"""Every measured figure in the user pages (docs/) equals its rendering from the files under
docs/data/; the lab notebooks' figures (notes/) are frozen text, checked by nothing."""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _tool() -> ModuleType:
    spec = importlib.util.spec_from_file_location("regenerate_docs", ROOT / "tools" / "regenerate_docs.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["regenerate_docs"] = module
    spec.loader.exec_module(module)
    return module


TOOL = _tool()


@pytest.mark.parametrize("figure", TOOL.FIGURES, ids=lambda f: f.name)
def test_figure_in_the_docs_equals_its_data(figure: object) -> None:
    assert TOOL.current(figure) == TOOL.rendered(figure), (
        f"docs/{figure.doc} figure {figure.name} is stale: run python tools/regenerate_docs.py --only {figure.name}"  # type: ignore[attr-defined]
    )


def test_each_figure_names_its_machine_and_library_versions() -> None:
    for figure in TOOL.FIGURES:
        body = TOOL.rendered(figure)
        assert "CPUs" in body and "torch" in body and "Command: `" in body, figure.name


def test_a_changed_number_in_the_data_makes_the_figure_stale(tmp_path: Path) -> None:
    docs, data = tmp_path / "docs", tmp_path / "docs" / "data"
    shutil.copytree(ROOT / "docs", docs)
    figure = next(f for f in TOOL.FIGURES if f.name == "league_run_table")
    records = (data / "league_run" / "generations.jsonl").read_text().splitlines()
    first = json.loads(records[0])
    first["wall_s"] += 100.0
    (data / "league_run" / "generations.jsonl").write_text(
        "\n".join([json.dumps(first), *records[1:]]) + "\n"
    )
    assert TOOL.current(figure, docs) != TOOL.rendered(figure, data)
    assert TOOL.write(figure, docs, data)
    assert TOOL.current(figure, docs) == TOOL.rendered(figure, data)
    assert f"| 0 | {first['wall_s']:.0f} |" in (docs / "league.md").read_text()


@pytest.mark.integration
def test_a_bench_out_file_renders_with_its_command_machine_and_versions(tmp_path: Path) -> None:
    out = tmp_path / "meta_stability.txt"
    command = [
        sys.executable,
        "bench/meta_stability.py",
        "--solvers",
        "nash",
        "--sizes",
        "10",
        "--draws",
        "3",
    ]
    done = subprocess.run(
        [*command, "--out", str(out)],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    body = TOOL.render_bench_text(out)
    assert body.startswith(
        "Command: `python bench/meta_stability.py --solvers nash --sizes 10 --draws 3`, "
    ), body
    assert "--out" not in body and "CPUs" in body and "torch" in body and "load average" in body
    assert done.stdout.strip() in body  # everything the bench printed, as printed
