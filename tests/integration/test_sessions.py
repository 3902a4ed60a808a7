"""What a finished run directory holds, and what each --resume session stores and says."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from light_league.cli import main

ROOT = Path(__file__).resolve().parents[2]
RPS = str(ROOT / "expr_configs" / "rps_tiny.yaml")
KUHN = str(ROOT / "expr_configs" / "psro_kuhn.yaml")
FAST = ["scheduler.steps_per_generation=512", "evaluation.episodes_per_pair=8", "logging.tensorboard=false"]


def _generations(run_dir: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in (run_dir / "generations.jsonl").read_text().splitlines()]


def test_resume_overrides_are_stored_and_a_finished_run_says_so(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run_dir = tmp_path / "run"
    assert main(["--config", RPS, "--run-dir", str(run_dir), "--quiet", "stop.max_generations=1", *FAST]) == 0
    assert not (run_dir / ".lock").exists()
    assert sorted(p.name for p in (run_dir / "checkpoint").iterdir()) == ["gen_0000", "latest.json"]

    assert main(["--resume", str(run_dir), "stop.max_generations=2"]) == 0
    assert yaml.safe_load((run_dir / "config.yaml").read_text())["stop"]["max_generations"] == 2
    sessions = json.loads((run_dir / "manifest.json").read_text())["sessions"]
    assert len(sessions) == 2 and sessions[1]["argv"][-1] == "stop.max_generations=2"
    assert sessions[1]["overrides"] == ["stop.max_generations=2"]
    assert "stop.max_generations=1" in sessions[0]["overrides"]
    assert [g["generation"] for g in _generations(run_dir)] == [0, 1]
    tasks = _generations(run_dir)[1]["tasks"]
    assert {t["learner"] for t in tasks} == {"main_agent_0", "main_exploiter_0", "league_exploiter_0"}  # type: ignore[union-attr]
    for task in tasks:  # type: ignore[union-attr]
        # docs/league.md: recorded per task (meta_mass and excluded where a branch has them)
        assert (
            {"branches", "fallbacks"}
            <= set(task["info"])
            <= {"branches", "fallbacks", "meta_mass", "excluded"}
        )
    assert sorted(p.name for p in (run_dir / "checkpoint").iterdir()) == ["gen_0001", "latest.json"]
    capsys.readouterr()

    assert main(["--resume", str(run_dir)]) == 0  # keeps max_generations=2: nothing left to do
    err = capsys.readouterr().err
    assert "nothing to do: the run has already stopped (stop.max_generations=2) after 2 generations" in err
    assert len(_generations(run_dir)) == 2 and not (run_dir / ".lock").exists()


def test_target_nash_conv_zero_stops_an_exact_equilibrium(tmp_path: Path) -> None:
    run_dir = tmp_path / "kuhn"
    args = ["--config", KUHN, "--run-dir", str(run_dir), "--quiet", "logging.tensorboard=false"]
    assert main([*args, "stop.target_nash_conv=0.0", "stop.max_generations=40"]) == 0
    records = _generations(run_dir)
    assert len(records) < 40
    assert 0.0 <= float(records[-1]["meta_nash_conv"]) <= 1e-9  # type: ignore[arg-type]


def test_a_local_ray_run_does_not_open_with_rays_token_notice(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k != "RAY_AUTH_MODE"}  # Ray's own default
    command = [sys.executable, "main.py", "--config", RPS, "--run-dir", str(tmp_path / "ray"), "--quiet"]
    command += ["execution.backend=ray", "stop.max_generations=1", *FAST]
    # one learner: each Ray actor is a process start, and the notice is Ray's, not the roles'
    command += ["scheduler.main_exploiters=0", "scheduler.league_exploiters=0"]
    done = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert "Token authentication" not in done.stderr
    assert done.stderr.splitlines()[0].startswith("run directory ")  # the run's own first line, then its
    assert done.stderr.splitlines()[1].startswith("generation 0 · ")


@pytest.fixture(scope="module")
def finished_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    run_dir = tmp_path_factory.mktemp("finished") / "run"
    argv = ["--config", RPS, "--run-dir", str(run_dir), "--quiet", "stop.max_generations=1", *FAST]
    assert main([*argv, "evaluation.baselines=[random]"]) == 0
    return run_dir


def _copy(run_dir: Path, tmp_path: Path) -> Path:
    copy = tmp_path / "run"
    shutil.copytree(run_dir, copy)
    return copy


def _files(run_dir: Path) -> dict[str, bytes]:
    return {str(p.relative_to(run_dir)): p.read_bytes() for p in sorted(run_dir.rglob("*")) if p.is_file()}


@pytest.mark.parametrize(
    ("override", "line"),
    [
        ("env.name=biased_rps", "env.name cannot change on resume (run: rps, now: biased_rps)"),
        (
            "scheduler.league_exploiters=0",
            "scheduler.league_exploiters cannot change on resume (run: 1, now: 0)",
        ),
        ("scheduler.main_exploiters=2", "scheduler.main_exploiters cannot change on resume (run: 1, now: 2)"),
        ("experiment.seed=7", "experiment.seed cannot change on resume (run: 0, now: 7)"),
        (
            "learner.mappo.hidden_size=32",
            "learner.mappo.hidden_size cannot change on resume (run: 16, now: 32)",
        ),
        ("scheduler.name=psro", "scheduler.name cannot change on resume (run: league, now: psro)"),
        (
            "evaluation.baselines=[nash]",
            'evaluation.baselines cannot change on resume (run: ["random"], now: ["nash"])',
        ),
    ],
    ids=["env", "role_removed", "role_added", "seed", "architecture", "scheduler", "baseline_removed"],
)
def test_a_resume_that_changes_what_the_run_computes_is_refused_by_key(
    override: str, line: str, finished_run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run_dir = _copy(finished_run, tmp_path)
    before = _files(run_dir)
    capsys.readouterr()
    assert main(["--resume", str(run_dir), "stop.max_generations=2", override]) == 2
    err = [x for x in capsys.readouterr().err.splitlines() if x.strip()]
    assert len(err) == 1 and line in err[0], err
    assert _files(run_dir) == before


def test_a_baseline_added_on_resume_joins_the_population_and_is_evaluated(
    finished_run: Path, tmp_path: Path
) -> None:
    run_dir = _copy(finished_run, tmp_path)
    assert (
        main(
            [
                "--resume",
                str(run_dir),
                "--quiet",
                "stop.max_generations=2",
                "evaluation.baselines=[random, nash]",
            ]
        )
        == 0
    )
    last = _generations(run_dir)[-1]
    assert {m["id"]: m["role"] for m in last["population"]}["nash"] == "baseline"  # type: ignore[index, union-attr]
    assert yaml.safe_load((run_dir / "config.yaml").read_text())["evaluation"]["baselines"] == [
        "random",
        "nash",
    ]
    payoff = json.loads((run_dir / "payoff" / "gen_0001.json").read_text())
    nash = payoff["agent_ids"].index("nash")
    assert all(games > 0 for i, games in enumerate(payoff["games"][nash]) if i != nash)
