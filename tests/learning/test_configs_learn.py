"""The shipped experiment configs learn: short versions of ``league.yaml`` and ``league_leduc.yaml``.

Each test runs ``main.py`` on the shipped YAML file with overrides that shrink the run (local
backend, one worker, fewer generations), then reads what the run wrote to its directory:

* battalion: after two generations (96k environment steps per learner), the main agent's newest
  snapshot scores above 0.5 in its 32 evaluation games against ``scripted_l1`` (a draw counts
  half; its Elo is above the random baseline's), and the league did its bookkeeping: the main
  exploiter was snapshotted, every main-agent snapshot was evaluated against the baselines;
* leduc (``league_leduc.yaml``, a regret main agent, payoffs from played games): within twelve
  generations (384 CFR iterations of the main agent) the exact NashConv of the newest main agent
  (its average-strategy network) falls from above 2 after the first generation's 32 iterations
  (uniform play: 4.747) to below 1.2 in each of the last four generations, and the meta-strategy's
  to below 0.9 in one of them (seed 0: first generation 2.380; over generations 8-11 main
  0.695-0.939, meta 0.475-0.890; the bars leave room for another machine's floating point);
* kuhn (``league_kuhn.yaml``, played payoffs too, the meta-solver reading the shared games of
  ``evaluation.shared_games``): after twelve generations the meta-strategy's NashConv is at most
  0.03 in one of the last four generations (seed 0: 0.018-0.084; 0.053-0.303 when the meta-solver
  read the played table, so a broken shared table fails it), and the main agent (self-play
  with a magnet, snapshots averaged, no input LayerNorm, two thirds of the training) has settled:
  at most 0.03 in one of them and at most 0.045 in all four (seed 0, snapshots averaging about
  260 updates: main 0.011-0.024, meta 0.008-0.020; with 130: main 0.017-0.041, and 0.021-0.031
  in an earlier version; seed 5: main 0.013-0.030. Seed 0's main agent read 0.025-0.057 with a third of the
  training, 0.046-0.071 with the input LayerNorm as well, 0.046-0.089 without the snapshot
  average, and 0.180-0.226 trained against the league before that; uniform play: 0.917).

In the Kuhn test the average policy (the meta-strategy distilled into one network,
``league.average_policy``) must follow the meta-strategy: the median gap over the last four
generations at most 0.03, and its NashConv within the meta-strategy's bar (a broken
distillation, e.g. one that averaged members state by state, misses both).

Both run on one core in a few minutes on a quiet machine (docs/league.md, "Shipped experiments",
has the full-length curves).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from light_league.cli import main

CONFIGS = Path(__file__).resolve().parents[2] / "expr_configs"


def run(tmp_path: Path, config: str, overrides: list[str]) -> list[dict[str, Any]]:
    run_dir = tmp_path / "run"
    status = main(["--config", str(CONFIGS / config), "--run-dir", str(run_dir), "--quiet", *overrides])
    assert status == 0, (run_dir / "error.log").read_text() if (run_dir / "error.log").exists() else status
    lines = (run_dir / "generations.jsonl").read_text().splitlines()
    return [json.loads(line) for line in lines]


def payoff(tmp_path: Path, generation: int) -> tuple[list[str], np.ndarray, np.ndarray]:
    data = json.loads((tmp_path / "run" / "payoff" / f"gen_{generation:04d}.json").read_text())
    return data["agent_ids"], np.asarray(data["win_rates"]), np.asarray(data["games"])


@pytest.mark.slow
def test_league_yaml_main_agent_beats_scripted_level_1(tmp_path: Path) -> None:
    overrides = [
        "execution.backend=local",
        "execution.num_workers=1",
        "evaluation.episodes_per_pair=32",
        "stop.max_generations=2",
        "stop.max_wall_s=null",
    ]
    records = run(tmp_path, "league.yaml", overrides)
    assert [r["generation"] for r in records] == [0, 1]
    last = records[-1]
    ids, rates, games = payoff(tmp_path, last["generation"])
    mains = [i for i in ids if i.startswith("main_agent_0-v")]
    newest = max(mains, key=lambda i: int(i.rsplit("-v", 1)[1]))
    row, l1 = ids.index(newest), ids.index("scripted_l1")
    assert games[row, l1] >= 32
    assert rates[row, l1] > 0.5, f"{newest} vs scripted_l1: {rates[row, l1]:.3f}; rating {last['rating']}"
    assert last["rating"][newest] > last["rating"]["random"]
    assert any(i.startswith("main_exploiter_0-v") for i in ids), "the main exploiter was never snapshotted"
    baselines = [ids.index(b) for b in ("random", "scripted_l1", "scripted_l5")]
    assert all(games[ids.index(m), b] > 0 for m in mains for b in baselines)


@pytest.mark.slow
def test_league_leduc_yaml_lowers_nash_conv(tmp_path: Path) -> None:
    overrides = ["stop.max_generations=12", "stop.max_wall_s=null", "logging.tensorboard=false"]
    records = run(tmp_path, "league_leduc.yaml", overrides)
    main = [r["main_nash_conv"] for r in records]
    meta = [r["meta_nash_conv"] for r in records]
    assert len(records) == 12 and "least_exploitable" not in records[-1]  # nothing exact chooses the output
    shown = f"main {np.round(main, 3).tolist()}, meta {np.round(meta, 3).tolist()}"
    assert main[0] > 2.0 and meta[0] > 2.0, shown
    assert max(main[-4:]) < 1.2 and min(meta[-4:]) < 0.9, shown


@pytest.mark.slow
def test_league_kuhn_yaml_reaches_a_small_nash_conv(tmp_path: Path) -> None:
    overrides = ["stop.max_generations=12", "stop.max_wall_s=null", "logging.tensorboard=false"]
    records = run(tmp_path, "league_kuhn.yaml", overrides)
    main = [r["main_nash_conv"] for r in records]
    meta = [r["meta_nash_conv"] for r in records]
    assert len(records) == 12
    shown = f"main {np.round(main, 4).tolist()}, meta {np.round(meta, 4).tolist()}"
    assert min(meta[-4:]) <= 0.03 and min(main[-4:]) <= 0.03 and max(main[-4:]) <= 0.045, shown
    # the average policy (the meta-strategy distilled into one network) follows the meta-strategy
    average = [r["average_nash_conv"] for r in records]
    gaps = [abs(a - m) for a, m in zip(average[-4:], meta[-4:])]
    assert min(average[-4:]) <= 0.08 and float(np.median(gaps)) <= 0.03, (
        f"{shown}, average {np.round(average, 4).tolist()}"
    )
