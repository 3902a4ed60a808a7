"""Shared test settings: no network, no W&B, one Ray instance per session (only for `ray` tests)."""

from __future__ import annotations

import os
from collections.abc import Iterator

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
