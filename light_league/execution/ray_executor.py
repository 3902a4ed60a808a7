"""Ray backend: every component is a Ray actor. The only module of the package that imports ``ray``.

``ray.init()`` starts a local instance when no address is configured; ``address: auto`` (or
``host:port``) joins a running cluster. Rollout workers are created with ``max_restarts=0`` and
replaced by the rollout manager when they die, so it can redo their work and the new actor
starts clean (Ray's own restart would also rerun the constructor and lose the actor's state).
"""

from __future__ import annotations

import os
from typing import Any

os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")

import ray
from ray.exceptions import ActorDiedError, ActorUnavailableError, RayActorError

from light_league.execution.base import Executor, Future, Handle, WorkerDied

_DEAD = (RayActorError, ActorDiedError, ActorUnavailableError)


class _RayFuture(Future):
    def __init__(self, ref: Any, name: str) -> None:
        self.ref = ref
        self.name = name

    def result(self) -> Any:
        try:
            return ray.get(self.ref)
        except _DEAD as exc:
            raise WorkerDied(f"{self.name} died: {exc.__class__.__name__}") from exc


class RayClient:
    """Synchronous, picklable proxy of an actor: ``client.method(x)`` = ``ray.get(actor.method.remote(x))``."""

    def __init__(self, actor: Any, name: str) -> None:
        self._actor = actor
        self._name = name

    def __getattr__(self, method: str) -> Any:
        if method.startswith("_"):
            raise AttributeError(method)
        remote = getattr(self._actor, method)

        def call(*args: Any, **kwargs: Any) -> Any:
            try:
                return ray.get(remote.remote(*args, **kwargs))
            except _DEAD as exc:
                raise WorkerDied(f"{self._name} died: {exc.__class__.__name__}") from exc

        return call


class RayExecutor(Executor):
    name = "ray"

    def __init__(
        self, *, address: str | None = None, num_cpus: int | None = None, object_store_mb: int = 256
    ) -> None:
        self._owns_ray = False
        if not ray.is_initialized():
            kwargs: dict[str, Any] = {
                "include_dashboard": False,
                "log_to_driver": False,
                "configure_logging": False,
            }
            if address:
                kwargs["address"] = address
            else:
                kwargs["num_cpus"] = num_cpus
                kwargs["object_store_memory"] = object_store_mb * 1024 * 1024
            ray.init(**kwargs)
            self._owns_ray = True

    def create(
        self, cls: type, *args: Any, name: str, restartable: bool = False, cpus: float = 0.0, **kwargs: Any
    ) -> Handle:
        actor_cls: Any = ray.remote(cls).options(num_cpus=cpus, max_restarts=0, max_task_retries=0)
        actor = actor_cls.remote(*args, **kwargs)
        return Handle(name, actor, cls, args, kwargs, restartable, cpus)

    def submit(self, handle: Handle, method: str, *args: Any, **kwargs: Any) -> Future:
        try:
            ref = getattr(handle.target, method).remote(*args, **kwargs)
        except _DEAD as exc:
            raise WorkerDied(f"{handle.name} died: {exc.__class__.__name__}") from exc
        return _RayFuture(ref, handle.name)

    def client(self, handle: Handle) -> Any:
        return RayClient(handle.target, handle.name)

    def restart(self, handle: Handle) -> Handle:
        try:
            ray.kill(handle.target, no_restart=True)
        except Exception:
            pass
        return self.create(
            handle.cls,
            *handle.args,
            name=handle.name,
            restartable=handle.restartable,
            cpus=handle.cpus,
            **handle.kwargs,
        )

    def kill(self, handle: Handle) -> None:
        ray.kill(handle.target, no_restart=True)

    def node_of(self, handle: Handle) -> str:
        """Node id an actor runs on (for placement checks)."""
        return str(
            ray.get(handle.target.__ray_call__.remote(lambda self: ray.get_runtime_context().get_node_id()))
        )

    def shutdown(self) -> None:
        if self._owns_ray and ray.is_initialized():
            ray.shutdown()
