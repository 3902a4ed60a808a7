"""bench/league_quality.py reading a finished poker run at chosen clock marks (``--marks``)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import league_quality  # bench/ is on pytest's pythonpath
import pytest

from light_league.cli import main

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.integration
def test_marks_read_each_output_at_the_given_seconds(tmp_path: Path) -> None:
    run_dir = tmp_path / "kuhn"
    overrides = ["stop.max_generations=2", "stop.max_wall_s=null", "logging.tensorboard=false"]
    overrides += ["scheduler.main_agent.steps_per_generation=4096", "evaluation.shared_games=20000"]
    overrides += [
        f"scheduler.{role}.steps_per_generation=2048" for role in ("main_exploiter", "league_exploiter")
    ]
    config = str(ROOT / "expr_configs" / "league_kuhn.yaml")
    assert main(["--config", config, "--run-dir", str(run_dir), "--quiet", *overrides]) == 0

    def tables(*marks: str) -> str:
        proc = subprocess.run(
            [sys.executable, "bench/league_quality.py", "--from-runs", str(run_dir), *marks],
            cwd=ROOT,
            env={**os.environ, "PYTHONPATH": f"{ROOT}{os.pathsep}{ROOT / 'bench'}"},
            capture_output=True,
            text=True,
            check=True,
        )
        return proc.stdout

    default = tables()
    assert "The newest main agent:" in default
    assert "The average policy:" not in default  # the default output is unchanged
    # marks from the run's own clock (the bench's: wall time less the NashConv computations), so
    # that the verdict does not depend on how fast the machine made the run: half its clock, all
    # of it, and a mark far past it
    clock = league_quality.read_run(run_dir, "kuhn").nash_conv[-1][0]
    half, whole, past = (f"{s:g}" for s in (clock / 2, clock, 10 * clock + 1000))
    chosen = tables("--marks", half, whole, past)
    header = next(line for line in chosen.splitlines() if line.startswith("seed"))
    # a mark the run did not get near (less than 80% of it run) is left out, as by default
    assert f"NashConv @{half}s" in header and f"NashConv @{whole}s" in header and f"@{past}s" not in header
    # the Nash mixture, the newest main agent and the average policy, each with a row for the run
    for title in ("The Nash mixture:", "The newest main agent:", "The average policy:"):
        table = chosen.split(title, 1)[1].splitlines()
        assert table[2].startswith("kuhn ") and len(table[2].split()) == 5, table[:4]  # 2 marks
