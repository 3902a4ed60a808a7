"""bench/cyclic_worth.py: its exact readings against known answers, and a tiny real run."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import cyclic_worth as bench  # bench/ is on pytest's pythonpath
import numpy as np
import pytest

from light_league.envs.matrix_games import nash_strategy, payoff_matrix

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("game", ["rps", "biased_rps", "disc"])
def test_the_documented_nash_has_no_nash_conv_and_a_pure_strategy_has_some(game: str) -> None:
    payoff = np.array(payoff_matrix(game))
    nash = nash_strategy(game)
    assert bench.nash_conv(payoff, nash, nash) == pytest.approx(0.0, abs=1e-9)
    rock = np.eye(len(payoff))[0]
    assert bench.nash_conv(payoff, rock, rock) > 0.5


def test_nash_conv_of_pure_play_is_the_best_replies_gain() -> None:
    disc = np.array(payoff_matrix("disc", 7))
    point = np.eye(7)[2]
    # against one point the best reply is the point two of seven steps ahead, in either seat
    assert bench.nash_conv(disc, point, point) == pytest.approx(2 * np.sin(4 * np.pi / 7), abs=1e-9)


def test_head_to_head_scores() -> None:
    rps = np.array(payoff_matrix("rps"))
    rock, paper = np.eye(3)[0], np.eye(3)[1]
    uniform = np.full(3, 1 / 3)
    assert bench.score(rps, (paper, paper), (rock, rock)) == pytest.approx(1.0)
    assert bench.score(rps, (rock, rock), (paper, paper)) == pytest.approx(0.0)
    assert bench.score(rps, (uniform, uniform), (rock, rock)) == pytest.approx(0.5)


def test_curve_readings() -> None:
    curve = [(1.0, 3.0), (2.0, 2.0), (3.0, 1.0), (4.0, 0.5)]
    assert bench.at_mark(curve, 0.5) is None
    assert bench.at_mark(curve, 2.5) == 2.0
    assert bench.window_mean(curve) == pytest.approx(0.75)  # the generations at t >= 3 s, 3/4 of 4 s


@pytest.mark.integration
def test_a_tiny_run_reads_both_outputs_of_both_runs(tmp_path: Path) -> None:
    out = tmp_path / "cw.txt"
    proc = subprocess.run(
        [sys.executable, "bench/cyclic_worth.py", "--seeds", "0", "--wall", "60", "--max-generations", "2"]
        + ["--marks", "1000", "--set", "learner.by_role.main_agent.entropy_coef=0.1"]
        + ["--work", str(tmp_path / "work"), "--out", str(out)],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    text = out.read_text()
    assert text.startswith("# command: python bench/cyclic_worth.py --seeds 0")
    for title in ("The newest main agent:", "The meta-strategy:", "Head to head at the end"):
        assert title in text
    assert "rps_tiny.yaml's settings, learner.by_role.main_agent.entropy_coef=0.1, 60 s a run" in text
    from light_league.run_reader import RunReader

    for side in ("league", "self_play"):  # the override reached both runs
        config = RunReader(tmp_path / "work" / f"{side}_s0").config
        assert config.learner.by_role["main_agent"]["entropy_coef"] == 0.1
    rows = [
        line.split() for line in text.splitlines() if line.split()[:1] == ["0"] and len(line.split()) == 6
    ]
    assert [r[1] for r in rows] == ["league", "self_play", "league", "self_play"]
    assert all(r[2] == "2" for r in rows)  # two generations each
    assert all(0.0 <= float(v) <= 1.95 for r in rows for v in r[3:])  # 7 points: at most 1.950
    assert {p.name for p in (tmp_path / "work").iterdir()} >= {"league_s0", "self_play_s0"}
