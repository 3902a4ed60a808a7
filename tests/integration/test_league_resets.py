"""Exploiter resets through the real components: ``reset_to: main_agent`` restarts an exploiter from
the main agent's current weights (fresh optimisers), ``initial`` from its own initial weights."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch

from light_league.cli import main

CONFIG = Path(__file__).resolve().parents[2] / "expr_configs" / "rps_tiny.yaml"


def learner_state(run_dir: Path, learner: str) -> dict:
    path = run_dir / "checkpoint" / "gen_0000" / "learners" / f"{learner}.pt"
    return torch.load(path, weights_only=True)["learner"]


@pytest.mark.parametrize("reset_to", ["main_agent", "initial"])
def test_a_reset_main_exploiter_restarts_from_what_reset_to_names(tmp_path: Path, reset_to: str) -> None:
    run_dir = tmp_path / "run"
    overrides = [
        "stop.max_generations=1",
        "logging.tensorboard=false",
        "scheduler.main_exploiter.checkpoint_max_steps=2048",  # snapshot + reset after generation 0
        f"scheduler.main_exploiter.reset_to={reset_to}",
    ]
    assert main(["--config", str(CONFIG), "--run-dir", str(run_dir), "--quiet", *overrides]) == 0
    exploiter = learner_state(run_dir, "main_exploiter_0")
    mains = learner_state(run_dir, "main_agent_0")
    source = mains["weights"] if reset_to == "main_agent" else exploiter["initial_weights"]
    for name, value in source.items():
        torch.testing.assert_close(exploiter["weights"][name], value, rtol=0, atol=0, msg=name)
    assert exploiter["schedule_step"] == 0  # fresh optimisers and schedule either way
    trained = any(not torch.equal(mains["weights"][k], exploiter["initial_weights"][k]) for k in source)
    assert trained  # the two sources differ, so the test tells them apart


def test_mappo_by_role_gives_each_role_its_own_fields(tmp_path: Path) -> None:
    """The per-role MAPPO fields reach the learners: the entropy coefficient each learner logs to
    TensorBoard is its role's."""
    from tensorboard.backend.event_processing.event_accumulator import SCALARS, EventAccumulator

    run_dir = tmp_path / "run"
    overrides = [
        "stop.max_generations=1",
        "learner.mappo.entropy_coef=0.01",
        "learner.mappo_by_role={main_exploiter: {entropy_coef: 0.003}, league_exploiter: {entropy_coef: 0.2}}",
    ]
    assert main(["--config", str(CONFIG), "--run-dir", str(run_dir), "--quiet", *overrides]) == 0
    acc = EventAccumulator(str(run_dir / "tensorboard"), size_guidance={SCALARS: 0})
    acc.Reload()
    logged = {
        learner: acc.Scalars(f"train/{learner}/entropy_coef")[-1].value
        for learner in ("main_agent_0", "main_exploiter_0", "league_exploiter_0")
    }
    assert logged == pytest.approx(
        {"main_agent_0": 0.01, "main_exploiter_0": 0.003, "league_exploiter_0": 0.2}
    )


def test_a_task_weighted_meta_trains_against_the_recorded_meta_strategy(tmp_path: Path) -> None:
    """Issue 31's league: generation 3 records the Nash mixture {main_agent_0-v0: 0.214,
    league_exploiter_0-v1: 0.786}, mass on the main agent's untrained snapshot. Generation 4's
    league exploiter (label meta, one branch over every member) trains against exactly that
    mixture, not the rest of it renormalised; the main exploiter's curriculum (over the main
    agent's history) is the Nash mixture restricted to that history, and its meta_mass names the
    share kept. Every task labelled meta (set here by its former name, nash) records the share of the meta-strategy it drew from."""
    run_dir = tmp_path / "run"
    nash = [
        f"scheduler.{role}.weighting=nash" for role in ("main_agent", "main_exploiter", "league_exploiter")
    ]
    argv = [
        "--config",
        str(CONFIG),
        "--run-dir",
        str(run_dir),
        "--quiet",
        "stop.max_generations=5",
        "logging.tensorboard=false",
    ]
    assert main([*argv, *nash, "scheduler.main_exploiter.main_win_rate=1.0"]) == 0
    records = [json.loads(line) for line in (run_dir / "generations.jsonl").read_text().splitlines()]
    meta = {k: v for k, v in records[3]["meta_strategy"].items() if v > 0}
    assert meta == pytest.approx({"main_agent_0-v0": 0.214286, "league_exploiter_0-v1": 0.785714})
    tasks = {t["learner"]: t for t in records[4]["tasks"]}
    exploiter = tasks["league_exploiter_0"]
    assert exploiter["weighting"] == "meta" and exploiter["opponents"] == pytest.approx(meta, abs=1e-4)
    assert exploiter["info"]["meta_mass"] == {"pfsp": 1.0}
    curriculum = tasks["main_exploiter_0"]
    assert curriculum["weighting"] == "meta" and curriculum["opponents"] == {"main_agent_0-v0": 1.0}
    assert curriculum["info"]["meta_mass"] == {"curriculum": pytest.approx(0.214286)}
    for record, previous in zip(records[1:], records):
        before = previous["meta_strategy"]
        for task in record["tasks"]:
            info = task["info"]
            if task["weighting"] == "meta":  # drawn from the meta-strategy: nothing left out
                assert "excluded" not in info and info["meta_mass"], task
            if task["weighting"] == "pfsp(fallback:zero_meta_strategy)":  # the fallback says the truth
                assert set(info["meta_mass"].values()) == {0.0}, task
            # a single branch over every member weighted by meta is the meta-strategy itself
            if task["weighting"] == "meta" and info["branches"] == {"pfsp": 1.0}:
                assert task["opponents"] == pytest.approx(
                    {k: v for k, v in before.items() if v > 0}, abs=1e-4
                )


def test_a_snapshot_average_is_what_the_main_agent_freezes(tmp_path: Path) -> None:
    """``snapshot_average_rate`` through the real components: the member a main agent adds holds
    the learner's running average (as checkpointed), not its last weights, and says so."""
    from light_league.data_buffer.policy_files import load_policy_files

    run_dir = tmp_path / "run"
    overrides = [
        "stop.max_generations=1",
        "logging.tensorboard=false",
        "learner.by_role={main_agent: {snapshot_average_rate: 0.3}}",
        "scheduler.main_agent.checkpoint_min_steps=2048",  # a snapshot after generation 0
        "scheduler.main_agent.checkpoint_max_steps=2048",
    ]
    assert main(["--config", str(CONFIG), "--run-dir", str(run_dir), "--quiet", *overrides]) == 0
    state = learner_state(run_dir, "main_agent_0")
    assert state["snapshot_average"] is not None
    files = (run_dir / "policies").glob("main_agent_0-v*.json")
    newest = max(files, key=lambda p: int(p.stem.split("-v")[1]))
    assert newest.stem != "main_agent_0-v0"  # a snapshot after training, not the initial weights
    weights, meta = load_policy_files(newest.with_suffix(""))
    assert meta["averaged"] is True
    for name, value in state["snapshot_average"].items():
        torch.testing.assert_close(torch.from_numpy(weights[name]), value, rtol=0, atol=0, msg=name)
    assert any(not torch.equal(state["weights"][k], v) for k, v in state["snapshot_average"].items())
    initial = json.loads((run_dir / "policies" / "main_agent_0-v0.json").read_text())
    assert "averaged" not in initial  # the initial weights are frozen as they are
