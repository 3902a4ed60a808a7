"""Where a league's worth shows, at a CI budget: the disc game, league against plain self-play.

The issue's battalion bar allows a game where a league can show its worth when battalion cannot
(docs/results.md, "Where a league's worth shows: a cyclic game"). This is the small version of
that bench (``bench/cyclic_worth.py``): ``rps_tiny.yaml``'s settings on the 7-point disc game
(``env.name=disc``), with the main agent's entropy bonus at 0.1 (the Leduc config's value) in
both runs, ``GENERATIONS`` generations with the league scheduler and as many with
``scheduler.name=self_play``. Everything is read exactly: the game is a matrix, no games are
played to measure it.

What must hold, averaged over the last quarter of each run (seeds 6 / 7 / 8, none tuned on,
2026-11-28: the league's main agent 0.454 / 0.264 / 0.504 against self-play's 1.950 on all three;
the league's meta-strategy 0.031 / 0.029 / 0.014; about two minutes a seed on one core):

* the league's newest main agent stays mixed: its NashConv is at most ``MAIN_BAR``, and at
  least 0.5 below the self-play agent's (which settles on one point: 1.950, the largest a
  strategy of this game has);
* the league's meta-strategy (the Nash mixture of its played payoff table) is near the
  equilibrium: at most ``META_BAR``.

A league whose main agent stops training against the population, or whose meta-solver stops
mixing it, fails them. Run as a script to measure seeds:
``python tests/learning/test_cyclic_league_worth.py WORK 6 7 8``.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

import cyclic_worth as bench  # bench/ is on pytest's pythonpath
import numpy as np
import pytest

from light_league.envs.matrix_games import payoff_matrix

GENERATIONS = 40
SEED = 7
MAIN_BAR, META_BAR = 1.2, 0.1


def measure(work: Path, seed: int) -> dict[str, Any]:
    """Both runs of one seed (``bench/cyclic_worth.py``'s): each output's NashConv averaged over
    the last quarter of the run, and the head-to-head scores at the end."""
    args = argparse.Namespace(
        work=work,
        env="disc",
        num_points=7,
        set=["learner.by_role.main_agent.entropy_coef=0.1", "logging.tensorboard=false"],
        max_generations=GENERATIONS,
        wall=3600.0,
    )
    payoff = np.array(payoff_matrix("disc", 7))
    result = bench.measure(seed, str(bench.ROOT / "expr_configs" / "rps_tiny.yaml"), payoff, args)
    reading: dict[str, Any] = {"seed": seed}
    for side in bench.SIDES:
        reading[side] = {
            name: round(bench.window_mean(result[side]["curves"][name]), 3) for name in bench.OUTPUTS
        }
        reading[side]["generations"] = result[side]["generations"]
    reading["main_vs_main"] = round(result["main_vs_main"], 3)
    return reading


@pytest.mark.slow
def test_the_league_main_agent_stays_mixed_where_self_play_collapses(tmp_path: Path) -> None:
    reading = measure(tmp_path, SEED)
    shown = json.dumps(reading)
    league, self_play = reading["league"], reading["self_play"]
    assert league["generations"] == self_play["generations"] == GENERATIONS, shown
    assert league["main"] <= MAIN_BAR and league["main"] <= self_play["main"] - 0.5, shown
    assert league["meta"] <= META_BAR, shown


if __name__ == "__main__":
    out = Path(sys.argv[1])
    for s in sys.argv[2:]:
        print(json.dumps(measure(out / f"s{s}", int(s))), flush=True)
