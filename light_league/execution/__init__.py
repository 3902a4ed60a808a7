"""Execution backends. ``build_executor`` imports the Ray backend only when asked for it."""

from __future__ import annotations

from light_league.execution.base import (
    CallTimeout,
    CallWatch,
    ComponentLost,
    Executor,
    Future,
    Handle,
    WorkerDied,
)
from light_league.execution.local_executor import LocalExecutor

__all__ = [
    "CallTimeout",
    "CallWatch",
    "ComponentLost",
    "Executor",
    "Future",
    "Handle",
    "LocalExecutor",
    "WorkerDied",
    "build_executor",
]


def build_executor(backend: str, *, watch: CallWatch | None = None, **options: object) -> Executor:
    """The executor of ``backend``; ``watch``: how long the driver waits on one call (both backends)."""
    if backend == "local":
        return LocalExecutor(watch=watch)
    if backend == "ray":
        from light_league.execution.ray_executor import RayExecutor

        return RayExecutor(watch=watch, **options)  # type: ignore[arg-type]
    from light_league.errors import unknown_name

    raise unknown_name("execution backend", backend, ["local", "ray"])
