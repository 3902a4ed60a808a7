"""bench/rllib_comparison.py without RLlib: our side runs, the RLlib side is skipped with one line."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def rllib_importable() -> bool:
    try:
        return (
            importlib.util.find_spec("tree") is not None and importlib.util.find_spec("ray.rllib") is not None
        )
    except (ImportError, ValueError):
        return False


@pytest.mark.skipif(rllib_importable(), reason="RLlib is installed: the skip path is not taken")
def test_without_rllib_ours_is_measured_and_rllib_is_skipped_in_one_line() -> None:
    done = subprocess.run(
        [sys.executable, "bench/rllib_comparison.py", "--seconds", "1"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert done.returncode == 0, done.stderr[-2000:]
    lines = done.stdout.splitlines()
    assert any(line.startswith("ours ") and "env steps/s" in line for line in lines)
    skipped = [line for line in lines if line.startswith("RLlib")]
    assert (
        len(skipped) == 1
        and "skipped, not installed" in skipped[0]
        and "pip install -e .[rllib]" in skipped[0]
    )
