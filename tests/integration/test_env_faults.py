"""A plugin env that goes wrong mid-run (issue 31): non-finite rewards or observations stop the run
with one line naming the env, agent and step before any checkpoint holds non-finite weights
(the learners' own checks: tests/unit/test_mappo_policy.py); an env step that never returns is
named while it runs and stopped at ``execution.call_timeout_s``, on both backends."""

from __future__ import annotations

import json
import time
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

#: the plugin env (tests/integration/faulty_env_plugin.py), imported from the repository root
FAULTY_ENV = "pettingzoo:tests.integration.faulty_env_plugin:FaultyRPS"


def plugin_env(monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.syspath_prepend(str(ROOT))
    return FAULTY_ENV


def one_line_exit_2(argv: list[str], capfd: pytest.CaptureFixture[str], *expected: str) -> str:
    capfd.readouterr()
    code = main(argv)
    err = [
        line
        for line in capfd.readouterr().err.splitlines()
        if line.strip() and "generation" not in line[:11] and not line.startswith("run directory ")
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
        # player_0 must act (a simultaneous game) with every action masked: it was sent action 0
        ("no_legal_action", ("gave agent 'player_0' no legal action", "on reset of game", "action mask")),
    ],
)
def test_a_non_finite_env_output_after_the_first_checkpoint_stops_the_run_before_it_trains(
    fault: str,
    expected: tuple[str, ...],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capfd: pytest.CaptureFixture[str],
) -> None:
    env = plugin_env(monkeypatch)
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


@pytest.mark.parametrize("backend", ["local", pytest.param("ray", marks=pytest.mark.ray)])
def test_an_env_s_own_exception_is_the_error_line_on_both_backends(
    backend: str,
    request: pytest.FixtureRequest,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capfd: pytest.CaptureFixture[str],
) -> None:
    """On Ray the line was Ray's header and the actor's traceback, cut off before the env's words."""
    from tests.integration.faulty_env_plugin import ENV_OWN_WORDS

    if backend == "ray":
        request.getfixturevalue("ray_session")
    env = plugin_env(monkeypatch)
    marker = tmp_path / "go_bad"
    marker.touch()
    run_dir = tmp_path / "run"
    options = f"env.options={{fault: raise, marker: '{marker}'}}"
    ray = ["execution.num_workers=1", "execution.worker_cpus=0.25"] if backend == "ray" else []
    argv = ["--config", RPS, "--run-dir", str(run_dir), "--quiet", *TINY, f"env.name={env}", options]
    capfd.readouterr()
    assert main([*argv, f"execution.backend={backend}", *ray, "stop.max_generations=1"]) == 1
    err = [line for line in capfd.readouterr().err.splitlines() if line.startswith("error")]
    assert len(err) == 1, err
    assert f"(RuntimeError: FaultyRPS could not step: {ENV_OWN_WORDS})" in err[0], err[0]
    assert err[0].endswith(f"--resume {run_dir}") and "ray::" not in err[0]
    assert ENV_OWN_WORDS in (run_dir / "error.log").read_text()


@pytest.mark.ray
@pytest.mark.slow
def test_on_ray_a_non_finite_env_output_is_the_same_one_line(
    ray_session: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]
) -> None:
    """The worker actor's error reaches the user as its own line, not wrapped in Ray's traceback."""
    env = plugin_env(monkeypatch)
    marker = tmp_path / "go_bad"
    marker.touch()
    run_dir = tmp_path / "run"
    options = f"env.options={{fault: inf_reward, marker: '{marker}'}}"
    ray = ["execution.backend=ray", "execution.num_workers=1", "execution.worker_cpus=0.25"]
    argv = ["--config", RPS, "--run-dir", str(run_dir), "--quiet", *TINY, *ray, f"env.name={env}", options]
    one_line_exit_2(
        [*argv, "stop.max_generations=1"], capfd, env, "non-finite reward (inf)", "agent 'player_1'"
    )
    assert checkpointed_weights_are_finite(run_dir) > 0


def test_sample_actions_refuses_nan_log_probabilities() -> None:
    from light_league.errors import NonFiniteError
    from light_league.rollout.episode import sample_actions

    logp = np.log(np.full((3, 3), 1 / 3))
    logp[1, 2] = np.nan
    with pytest.raises(NonFiniteError, match="row 1"):
        sample_actions(logp, np.random.default_rng(0))


@pytest.mark.parametrize("backend", ["local", pytest.param("ray", marks=[pytest.mark.ray, pytest.mark.slow])])
def test_a_hung_env_step_is_named_while_it_runs_and_stopped_at_the_call_timeout(
    backend: str,
    request: pytest.FixtureRequest,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capfd: pytest.CaptureFixture[str],
) -> None:
    if backend == "ray":
        request.getfixturevalue("ray_session")
    env = plugin_env(monkeypatch)
    marker = tmp_path / "go_bad"
    marker.touch()
    run_dir = tmp_path / "run"
    options = f"env.options={{fault: hang, marker: '{marker}'}}"
    watch = ["execution.stall_notice_s=0.5", "execution.call_timeout_s=2", f"execution.backend={backend}"]
    ray = ["execution.num_workers=1", "execution.worker_cpus=0.25"] if backend == "ray" else []
    argv = ["--config", RPS, "--run-dir", str(run_dir), "--quiet", *TINY, f"env.name={env}", options]
    capfd.readouterr()
    start = time.monotonic()
    assert main([*argv, *watch, *ray, "stop.max_generations=1"]) == 1
    assert time.monotonic() - start < 60
    err = [
        line
        for line in capfd.readouterr().err.splitlines()
        if line.strip() and "Token authentication" not in line
    ]
    notices = [line for line in err if line.startswith("no progress for")]  # Ray: actor starts too
    stuck = [line for line in notices if "rollout_worker_0.run is still running" in line]
    assert stuck and "execution.call_timeout_s=2" in stuck[0], err
    (final,) = [line for line in err if not line.startswith(("no progress for", "run directory "))]
    for text in ("CallTimeout", "rollout_worker_0.run", "execution.call_timeout_s=2", f"--resume {run_dir}"):
        assert text in final, (text, final)
