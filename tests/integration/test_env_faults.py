"""A plugin env that goes wrong mid-run (issue 31): non-finite rewards or observations stop the run
with one line naming the env, agent and step before any checkpoint holds non-finite weights
(the learners' own checks: tests/unit/test_mappo_policy.py)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import torch

from light_league.cli import main

ROOT = Path(__file__).resolve().parents[2]
RPS = str(ROOT / "expr_configs" / "rps_tiny.yaml")
TINY = [
    "scheduler.steps_per_generation=256",
    "evaluation.episodes_per_pair=8",
    "execution.envs_per_worker=16",
    "logging.tensorboard=false",
]

#: rock-paper-scissors through the PettingZoo adapter that turns bad once ``marker`` exists
FAULTY_ENV = """
import os
import time

import numpy as np

from envs.matrix_games import MatrixGameParallelEnv


class FaultyRPS(MatrixGameParallelEnv):
    def __init__(self, *, fault: str, marker: str) -> None:
        super().__init__(game="rps")
        self.fault, self.marker = fault, marker

    def _bad(self) -> bool:
        return os.path.exists(self.marker)

    def reset(self, seed=None, options=None):
        obs, infos = super().reset(seed=seed, options=options)
        if self._bad() and self.fault == "nan_obs":
            obs["player_0"] = np.full(1, np.nan, dtype=np.float32)
        return obs, infos

    def step(self, actions):
        obs, rew, term, trunc, infos = super().step(actions)
        if self._bad() and self.fault == "inf_reward":
            rew["player_1"] = float("inf")
        if self._bad() and self.fault == "hang":
            time.sleep(3600)
        return obs, rew, term, trunc, infos
"""


def plugin_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, module: str) -> str:
    folder = tmp_path / "plugins"
    folder.mkdir(exist_ok=True)
    (folder / f"{module}.py").write_text(FAULTY_ENV)
    monkeypatch.syspath_prepend(str(folder))
    return f"pettingzoo:{module}:FaultyRPS"


def one_line_exit_2(argv: list[str], capfd: pytest.CaptureFixture[str], *expected: str) -> str:
    capfd.readouterr()
    code = main(argv)
    err = [
        line for line in capfd.readouterr().err.splitlines() if line.strip() and "generation" not in line[:11]
    ]
    assert code == 2, err
    assert len(err) == 1, err
    for text in expected:
        assert text in err[0], (text, err[0])
    return err[0]


def checkpointed_weights_are_finite(run_dir: Path) -> int:
    """Every tensor of every learner checkpoint is finite; returns how many were checked."""
    count = 0
    for path in (run_dir / "checkpoint").rglob("*.pt"):
        state = torch.load(path, weights_only=True)
        stack = [state]
        while stack:
            item = stack.pop()
            if isinstance(item, dict):
                stack.extend(item.values())
            elif isinstance(item, list | tuple):
                stack.extend(item)
            elif isinstance(item, torch.Tensor) and item.is_floating_point():
                assert torch.isfinite(item).all(), path
                count += 1
    return count


@pytest.mark.parametrize(
    ("fault", "expected"),
    [
        ("inf_reward", ("non-finite reward (inf)", "agent 'player_1'", "at step 1 of game")),
        ("nan_obs", ("non-finite obs ([nan])", "agent 'player_0'", "game")),
    ],
)
def test_a_non_finite_env_output_after_the_first_checkpoint_stops_the_run_before_it_trains(
    fault: str,
    expected: tuple[str, ...],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capfd: pytest.CaptureFixture[str],
) -> None:
    env = plugin_env(tmp_path, monkeypatch, f"faulty_env_31_{fault}")
    marker = tmp_path / "go_bad"
    run_dir = tmp_path / "run"
    options = f"env.options={{fault: {fault}, marker: '{marker}'}}"
    argv = ["--config", RPS, "--run-dir", str(run_dir), "--quiet", *TINY, f"env.name={env}", options]
    assert main([*argv, "stop.max_generations=1"]) == 0
    marker.touch()  # from generation 1 on the env returns non-finite numbers
    line = one_line_exit_2(
        ["--resume", str(run_dir), f"env.name={env}", "stop.max_generations=3"], capfd, env, *expected
    )
    assert f"--resume {run_dir}" in line
    assert [
        json.loads(x)["generation"] for x in (run_dir / "generations.jsonl").read_text().splitlines()
    ] == [0]
    assert json.loads((run_dir / "checkpoint" / "latest.json").read_text())["generation"] == 1
    assert checkpointed_weights_are_finite(run_dir) > 0
    assert not (run_dir / "error.log").exists()


def test_sample_actions_refuses_nan_log_probabilities() -> None:
    from light_league.errors import NonFiniteError
    from light_league.rollout.episode import sample_actions

    logp = np.log(np.full((3, 3), 1 / 3))
    logp[1, 2] = np.nan
    with pytest.raises(NonFiniteError, match="row 1"):
        sample_actions(logp, np.random.default_rng(0))
