"""Execution backends. ``build_executor`` imports the Ray backend only when asked for it."""

from __future__ import annotations

from light_league.execution.base import ComponentLost, Executor, Future, Handle, WorkerDied
from light_league.execution.local_executor import LocalExecutor

__all__ = ["ComponentLost", "Executor", "Future", "Handle", "LocalExecutor", "WorkerDied", "build_executor"]


def build_executor(backend: str, **options: object) -> Executor:
    if backend == "local":
        return LocalExecutor()
    if backend == "ray":
        from light_league.execution.ray_executor import RayExecutor

        return RayExecutor(**options)  # type: ignore[arg-type]
    from light_league.errors import unknown_name

    raise unknown_name("execution backend", backend, ["local", "ray"])
