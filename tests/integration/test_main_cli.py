"""main.py end to end on tiny configs: local and Ray backends, plugins, exit codes, run directory."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import yaml

from light_league import envs
from light_league.cli import main

ROOT = Path(__file__).resolve().parents[2]
RPS = str(ROOT / "expr_configs" / "rps_tiny.yaml")
QUICK = ["stop.max_generations=2", "scheduler.steps_per_generation=1024", "evaluation.episodes_per_pair=64"]


def run_rps(run_dir: Path, *overrides: str) -> int:
    """``main.py --config rps_tiny.yaml --run-dir RUN_DIR overrides...`` in this process."""
    return main(["--config", RPS, "--run-dir", str(run_dir), *overrides])


def generations(run_dir: Path) -> list[dict]:
    return [json.loads(line) for line in (run_dir / "generations.jsonl").read_text().splitlines()]


def test_local_run_through_the_real_cli_writes_the_run_directory(tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    proc = subprocess.run(
        [sys.executable, "main.py", "--config", RPS, "--run-dir", str(run_dir), *QUICK],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    gens = generations(run_dir)
    assert [g["generation"] for g in gens] == [0, 1]
    for g in gens:
        assert set(g) >= {
            "generation",
            "wall_s",
            "env_steps",
            "population",
            "meta_solver",
            "meta_strategy",
            "meta_entropy",
            "rating",
            "elo_sequential",
            "diversity",
            "tasks",
        }
        assert abs(sum(g["meta_strategy"].values()) - 1.0) < 1e-6
        assert not {"nash", "nash_entropy"} & set(g)  # one name for the meta-strategy
        assert {t["weighting"] for t in g["tasks"]}  # every task records its weighting
    resolved = yaml.safe_load((run_dir / "config.yaml").read_text())
    assert resolved["stop"]["max_generations"] == 2  # the override is in the resolved config
    manifest = json.loads((run_dir / "manifest.json").read_text())
    assert manifest["config_hash"] and manifest["packages"]["torch"].startswith("2.13")
    assert (run_dir / "payoff" / "gen_0001.json").exists()
    assert (run_dir / "checkpoint" / "latest.json").exists()


def test_local_runs_are_deterministic_under_a_seed(tmp_path: Path) -> None:
    outs = []
    for name in ("a", "b"):
        assert run_rps(tmp_path / name, *QUICK) == 0
        outs.append(
            [(g["meta_strategy"], g["rating"], g["elo_sequential"]) for g in generations(tmp_path / name)]
        )
    assert outs[0] == outs[1]


def test_fresh_run_dir_is_timestamped_under_runs_root(tmp_path: Path) -> None:
    assert (
        main(
            [
                "--config",
                RPS,
                f"experiment.runs_root={tmp_path}",
                *QUICK[:1],
                "stop.max_generations=1",
                "scheduler.steps_per_generation=256",
                "evaluation.episodes_per_pair=8",
            ]
        )
        == 0
    )
    made = list(tmp_path.iterdir())
    assert len(made) == 1 and made[0].name.startswith("rps_tiny-")
    assert (made[0] / "config.yaml").exists()


def test_plugin_scheduler_runs_through_main(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    monkeypatch.syspath_prepend(str(ROOT))
    run_dir = tmp_path / "plugin"
    code = run_rps(
        run_dir,
        "scheduler={name: 'light_league.examples.my_scheduler:HardestFirstScheduler'}",
        "stop.max_generations=2",
        "evaluation.episodes_per_pair=16",
    )
    assert code == 0
    gens = generations(run_dir)
    assert len(gens) == 2 and len(gens[-1]["population"]) >= 2


def test_psro_with_exact_best_responses_reaches_kuhn_nash(tmp_path: Path) -> None:
    pytest.importorskip("pyspiel")
    run_dir = tmp_path / "psro"
    assert main(["--config", str(ROOT / "expr_configs" / "psro_kuhn.yaml"), "--run-dir", str(run_dir)]) == 0
    curve = [g["meta_nash_conv"] for g in generations(run_dir)]
    assert curve[0] == pytest.approx(0.833333, abs=1e-5)  # one best response to uniform
    assert curve[-1] <= 1e-9 and len(curve) <= 12


def test_rps_league_nash_mixture_plays_the_known_equilibrium(tmp_path: Path) -> None:
    """The Nash mixture of the learned population plays rock-paper-scissors near-uniformly."""
    from light_league.algorithms.mappo.serialization import load_policy

    run_dir = tmp_path / "rps"
    code = run_rps(
        run_dir, "scheduler={name: psro}", "stop.max_generations=6", "evaluation.episodes_per_pair=400"
    )
    assert code == 0
    last = generations(run_dir)[-1]
    obs = np.zeros((1, envs.make_batched("rps", 1).spec.obs_dim), dtype=np.float32)
    mix = np.zeros(3)
    for pid, weight in last["meta_strategy"].items():
        if weight > 0:
            pol = load_policy(run_dir / "policies" / pid)
            mix += weight * np.exp(
                pol.log_probs(obs, np.ones((1, 3), dtype=bool), np.zeros(1, dtype=np.int64))[0]
            )
    assert np.abs(mix - 1 / 3).max() < 0.12, mix


@pytest.mark.ray
def test_ray_backend_runs_the_same_experiment(tmp_path: Path, ray_session: None) -> None:
    run_dir = tmp_path / "ray"
    assert run_rps(run_dir, "execution.backend=ray", "execution.num_workers=2", *QUICK) == 0
    gens = generations(run_dir)
    assert [g["generation"] for g in gens] == [0, 1]
    assert gens[-1]["env_steps"] > 0


@pytest.mark.ray
def test_a_recurrent_league_on_recall_runs_on_ray(tmp_path: Path, ray_session: None) -> None:
    """Recurrent MAPPO (hidden states in the Ray workers' loops, SampleBatch.hidden through the
    EpisodeServer actor) on the memory game; the policies written are recurrent."""
    run_dir = tmp_path / "recall"
    config = str(ROOT / "expr_configs" / "league_recall.yaml")
    overrides = [
        "execution.backend=ray",
        "execution.num_workers=2",
        "scheduler.main_exploiters=0",  # one learner actor: the test is about recurrence on Ray
        "scheduler.league_exploiters=0",
        "execution.envs_per_worker=32",
        "execution.steps_per_call=8",
        "scheduler.steps_per_generation=1024",
        "scheduler.main_agent.checkpoint_min_steps=1024",
        "scheduler.main_agent.checkpoint_max_steps=1024",
        "evaluation.episodes_per_pair=64",
        "stop.max_generations=2",
        "logging.console=quiet",
    ]
    assert main(["--config", config, "--run-dir", str(run_dir), *overrides]) == 0
    gens = generations(run_dir)
    assert [g["generation"] for g in gens] == [0, 1] and gens[-1]["env_steps"] > 0
    metas = [json.loads(f.read_text()) for f in (run_dir / "policies").glob("*.json")]
    assert len(metas) >= 2 and all(m["architecture"]["recurrent_cell"] == "gru" for m in metas)


def test_plugin_learner_runs_through_main(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    monkeypatch.syspath_prepend(str(ROOT))
    run_dir = tmp_path / "learner_plugin"
    code = run_rps(
        run_dir,
        "learner.kind=light_league.examples.my_learner:AnnealedEntropyLearner",
        "learner.options={entropy_decay: 0.5, hidden_size: 16}",
        *QUICK,
    )
    assert code == 0
    assert len(generations(run_dir)) == 2
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    acc = EventAccumulator(str(run_dir / "tensorboard"))
    acc.Reload()
    coefs = [e.value for e in acc.Scalars("train/main_agent_0/entropy_coef")]
    assert coefs[-1] < 0.01  # the plugin's own schedule ran
