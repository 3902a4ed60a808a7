"""Shared test settings: no network, no W&B, one Ray instance per session (only for `ray` tests),
and one tiny finished Kuhn league for the tests of the benches that read runs."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
os.environ.setdefault("RAY_worker_niceness", "0")
os.environ.setdefault("WANDB_MODE", "disabled")
os.environ.setdefault("WANDB_SILENT", "true")


@pytest.fixture(autouse=True)
def _no_wandb_network(monkeypatch: pytest.MonkeyPatch) -> None:
    if os.environ.get("WANDB_MODE") not in ("disabled", "offline"):
        monkeypatch.setenv("WANDB_MODE", "disabled")


@pytest.fixture(scope="session")
def ray_session(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """A local Ray instance shared by every `ray` test of the session (started once: 5–12 s)."""
    import ray

    if not ray.is_initialized():
        ray.init(
            num_cpus=2,
            include_dashboard=False,
            log_to_driver=False,
            configure_logging=False,
            object_store_memory=200 * 1024 * 1024,
        )
    yield
    ray.shutdown()


@pytest.fixture(scope="session")
def tiny_kuhn_overrides() -> list[str]:
    """Overrides that shrink ``league_kuhn.yaml`` to three generations of 2,048 env steps, one
    snapshot a generation for each of its three learners (seconds)."""
    roles = ("main_agent", "main_exploiter", "league_exploiter")
    return [
        "stop.max_generations=3",
        "stop.max_wall_s=null",
        "stop.target_nash_conv=null",
        "scheduler.steps_per_generation=2048",
        *(f"scheduler.{role}.steps_per_generation=2048" for role in roles),
        *(f"scheduler.{role}.checkpoint_{b}_steps=2048" for role in roles for b in ("min", "max")),
        "league.average_policy.enabled=false",
        "evaluation.adaptive_budget=2000",
        "evaluation.shared_games=0",  # the meta-strategy from the played table (no pool to play)
    ]


@pytest.fixture(scope="session")
def tiny_kuhn_league(tmp_path_factory: pytest.TempPathFactory, tiny_kuhn_overrides: list[str]) -> Path:
    """A finished ``league_kuhn.yaml`` run with ``tiny_kuhn_overrides``; read it, do not write to it."""
    from light_league.cli import main

    root = Path(__file__).resolve().parents[1]
    run = tmp_path_factory.mktemp("tiny_kuhn_league") / "run"
    argv = ["--config", str(root / "expr_configs" / "league_kuhn.yaml"), "--run-dir", str(run)]
    assert main([*argv, *tiny_kuhn_overrides, "logging.console=quiet"]) == 0
    return run
