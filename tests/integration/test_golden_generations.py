"""Same seed, same ``generations.jsonl``: the fast shipped configs against recorded runs.

The files under ``tests/integration/golden/`` were written by ``main.py`` with the config named
in each test (seed 0). A change meant to preserve behaviour (a refactor) must reproduce them,
wall-time fields aside (``tools/compare_generations.py`` says which fields those are). A change
that means to alter what a run does (a new default, a learner fix) re-records them:

    python main.py --config expr_configs/rps_tiny.yaml --run-dir /tmp/g && \
        cp /tmp/g/generations.jsonl tests/integration/golden/rps_tiny.generations.jsonl
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from light_league.cli import main

ROOT = Path(__file__).resolve().parents[2]
GOLDEN = Path(__file__).resolve().parent / "golden"
sys.path.insert(0, str(ROOT / "tools"))

from compare_generations import differences, load  # noqa: E402


@pytest.mark.parametrize(
    "config",
    ["rps_tiny", pytest.param("psro_kuhn", marks=pytest.mark.openspiel)],
)
def test_same_seed_same_generations(tmp_path: Path, config: str) -> None:
    run_dir = tmp_path / config
    assert main(["--config", str(ROOT / "expr_configs" / f"{config}.yaml"), "--run-dir", str(run_dir)]) == 0
    diffs = differences(load(GOLDEN / f"{config}.generations.jsonl"), load(run_dir / "generations.jsonl"))
    assert diffs == [], (
        f"{config}: the run's generations.jsonl differs from the recorded one ({len(diffs)} differences, "
        f"first: {diffs[:5]}); if the change is meant to alter runs, re-record it (see this file's docstring)"
    )
