"""In-process backend: components are plain objects, calls run at once, in order.

Deterministic under the run seed; the debugging mode.
"""

from __future__ import annotations

from typing import Any

from light_league.execution.base import Done, Executor, Future, Handle


class LocalExecutor(Executor):
    name = "local"

    def create(
        self,
        cls: type,
        *args: Any,
        name: str,
        restartable: bool = False,
        cpus: float = 0.0,
        gpus: float = 0.0,
        **kwargs: Any,
    ) -> Handle:
        return Handle(name, cls(*args, **kwargs), cls, args, kwargs, restartable, cpus)

    def submit(self, handle: Handle, method: str, *args: Any, **kwargs: Any) -> Future:
        return Done(getattr(handle.target, method)(*args, **kwargs))

    def client(self, handle: Handle) -> Any:
        return handle.target

    def restart(self, handle: Handle) -> Handle:
        return self.create(
            handle.cls, *handle.args, name=handle.name, restartable=handle.restartable, **handle.kwargs
        )
