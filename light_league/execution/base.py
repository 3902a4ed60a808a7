"""The executor contract: where components run.

Components are plain classes. The runner asks an executor to ``create`` them, then calls their
methods through ``submit`` (returns a future) and ``gather`` (waits). A component that must call
another one receives a **client** (``executor.client(handle)``): an object whose method calls
are ordinary synchronous calls, whatever the backend. Nothing outside ``execution/`` knows which
backend runs it.
"""

from __future__ import annotations

import logging
import threading
import time
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Concatenate, Generic, ParamSpec, TypeVar, cast


class WorkerDied(RuntimeError):
    """The called component's process died (Ray actor lost); the executor may ``restart`` it."""


class ComponentLost(RuntimeError):
    """A call failed because a component the *callee* depends on died (e.g. a rollout worker
    whose PolicyServer is gone). Replacing the callee cannot help: the run stops and is resumed
    from its last checkpoint."""


class CallTimeout(RuntimeError):
    """A component call ran past ``execution.call_timeout_s`` (a stuck env step, a hung actor):
    the run stops, and is resumed from its last checkpoint."""


log = logging.getLogger(__name__)

_fatal_report: Callable[[Exception], None] | None = None


def set_fatal_report(report: Callable[[Exception], None] | None) -> None:
    """Who hears of a failure that can end this process before any Python handler runs.

    Ray's core worker ends a driver whose local raylet died with ``_exit(1)`` on its next
    object-store call, so the driver's own ``except`` may never run. The Ray backend's watcher
    thread reports such a failure the moment it sees it; ``main.py`` sets ``report`` to say the
    run's one error line at once. None (the default) logs it.
    """
    global _fatal_report
    _fatal_report = report


def report_fatal(exc: Exception) -> None:
    """Say ``exc`` now, from whatever thread: the process may not live to raise it."""
    if _fatal_report is None:
        log.error("%s: %s", exc.__class__.__name__, exc)
    else:
        _fatal_report(exc)


class RunningClock:
    """Seconds that pass while this process runs: ``time.monotonic()`` less the time it was
    stopped (Ctrl-Z, ``SIGSTOP``), so that a call is not timed out for a pause of the whole run.

    A daemon thread (started by the first reading, ended by :meth:`close`) ticks every
    ``TICK_S``; a tick or a reading that comes more than ``LATE_S`` after the one before means
    the process did not run meanwhile, and that time is not counted (whichever thread notices
    first counts it, so no watcher reads the clock before the pause is taken off).
    """

    TICK_S = 0.25
    LATE_S = 1.0

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._last: float | None = None
        self._stopped = 0.0
        self._halt = threading.Event()
        self._thread: threading.Thread | None = None

    def now(self) -> float:
        with self._lock:
            t = time.monotonic()
            if self._last is None:
                self._thread = threading.Thread(target=self._tick, name="running-clock", daemon=True)
                self._thread.start()
            else:
                late = t - self._last - self.TICK_S
                if late > self.LATE_S:
                    self._stopped += late
            self._last = t
            return t - self._stopped

    @property
    def stopped_s(self) -> float:
        """Seconds not counted so far (the process was stopped)."""
        return self._stopped

    def _tick(self) -> None:
        while not self._halt.wait(self.TICK_S):
            self.now()

    def close(self) -> None:
        """End the ticking thread (a later reading starts it again)."""
        self._halt.set()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(timeout=5)
        with self._lock:
            self._thread, self._last = None, None
        self._halt = threading.Event()


@dataclass(frozen=True)
class CallWatch:
    """How long the driver waits on one component call: after ``notice_s`` (and each doubling of
    it) ``notice`` gets a line naming the call still running; after ``timeout_s`` the wait ends
    with :class:`CallTimeout`. None turns either off. Both are measured on ``clock``, which does
    not run while the process is stopped (Ctrl-Z)."""

    timeout_s: float | None = None
    notice_s: float | None = None
    notice: Callable[[str], None] = log.warning  # a run passes its console's note
    clock: RunningClock = field(default_factory=RunningClock)

    def next_notice(self, after: float) -> float | None:
        """When (seconds into a call) the next notice is due, once ``after`` seconds have passed."""
        if self.notice_s is None:
            return None
        due = self.notice_s
        while due <= after:
            due *= 2
        return due

    def say_still_running(self, name: str, elapsed: float) -> None:
        hint = (
            f"it is stopped at execution.call_timeout_s={self.timeout_s:g}"
            if self.timeout_s is not None
            else "set execution.call_timeout_s to stop a call that never returns"
        )
        seconds = f"{elapsed:.0f}" if elapsed >= 10 else f"{elapsed:.1f}"
        self.notice(f"no progress for {seconds} s: {name} is still running ({hint})")

    def timed_out(self, name: str) -> CallTimeout:
        return CallTimeout(
            f"{name} did not return within execution.call_timeout_s={self.timeout_s:g} s: a component is "
            "stuck (an env step that never returns?) or the limit is too low for this config"
        )


@dataclass
class Handle:
    """An executor's reference to a created component."""

    name: str
    target: Any
    cls: type
    args: tuple[Any, ...]
    kwargs: dict[str, Any]
    restartable: bool = False
    cpus: float = 0.0


class Future(ABC):
    @abstractmethod
    def result(self) -> Any:
        """The call's value; raises :class:`WorkerDied` when the component died."""


class Done(Future):
    """A future whose call has already run (in-process backends)."""

    def __init__(self, value: Any = None, error: BaseException | None = None) -> None:
        self._value = value
        self._error = error

    def result(self) -> Any:
        if self._error is not None:
            raise self._error
        return self._value


T = TypeVar("T")
P = ParamSpec("P")
R = TypeVar("R")


class TypedFuture(Generic[R]):
    """A :class:`Future` whose value has the type of the method that was submitted."""

    def __init__(self, future: Future) -> None:
        self.future = future

    def result(self) -> R:
        return cast(R, self.future.result())


def start_call(method: Callable[P, R], *args: P.args, **kwargs: P.kwargs) -> TypedFuture[R]:
    """Start a call of a client's ``method`` and return without waiting for it to finish.

    A client of another process (Ray) sends the call and returns at once; the future can travel
    in a message to a third component, which waits on it there (a rollout worker sends its
    trajectories to the EpisodeServer and the driver waits for them to have arrived before a
    learner pulls). Awaited there, a lost callee raises :class:`ComponentLost` and a lost caller
    :class:`WorkerDied`. An in-process client's method runs now.
    """
    start = getattr(method, "start", None)
    if start is not None:
        return TypedFuture(start(*args, **kwargs))
    return TypedFuture(Done(method(*args, **kwargs)))


class Executor(ABC):
    name: str = ""

    @abstractmethod
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
        """Instantiate ``cls(*args, **kwargs)`` where this backend runs components.

        ``restartable`` marks a stateless component (a rollout worker): a backend with several
        machines may place it on any of them and replace it when it dies. Every other component
        holds run state (servers, learners) and stays on the driver's machine, so losing another
        machine loses only restartable components. ``gpus`` (a learner on a GPU, fractional
        allowed) is what the component asks for; on a cluster it may be placed on another machine
        with a GPU when the driver's has none.
        """

    @abstractmethod
    def submit(self, handle: Handle, method: str, *args: Any, **kwargs: Any) -> Future: ...

    def gpus(self) -> float:
        """GPUs this backend can give components: this machine's CUDA devices (Ray: the cluster's)."""
        from light_league.utils.device import cuda_device_count

        return float(cuda_device_count())

    def call(self, handle: Handle, method: str, *args: Any, **kwargs: Any) -> Any:
        return self.submit(handle, method, *args, **kwargs).result()

    def invoke(
        self, handle: Handle, method: Callable[Concatenate[T, P], R], *args: P.args, **kwargs: P.kwargs
    ) -> R:
        """Call ``method``, a method of the component's class or protocol named unbound (e.g.
        ``PolicyServer.freeze``), on ``handle``'s component and wait: mypy checks the arguments and
        the result's type, and no method is named by a string. Runs as :meth:`call`."""
        return cast(R, self.call(handle, method.__name__, *args, **kwargs))

    def submit_method(
        self, handle: Handle, method: Callable[Concatenate[T, P], R], *args: P.args, **kwargs: P.kwargs
    ) -> TypedFuture[R]:
        """:meth:`invoke` without waiting: a future of the method's result type."""
        return TypedFuture(self.submit(handle, method.__name__, *args, **kwargs))

    def gather(self, futures: Sequence[Future]) -> list[Any]:
        return [f.result() for f in futures]

    @abstractmethod
    def client(self, handle: Handle) -> Any:
        """A synchronous proxy of ``handle`` that can be passed to other components."""

    @abstractmethod
    def restart(self, handle: Handle) -> Handle:
        """Replace a dead component by a fresh instance built with the same arguments."""

    def placement(self, handles: Sequence[Handle]) -> dict[str, str]:
        """The node each component runs on, by component name (waits until they are up)."""
        return {h.name: self.node_id for h in handles}

    @property
    def node_id(self) -> str:
        """The node of the driver (the process that calls ``create``)."""
        return "local"

    def kill(self, handle: Handle) -> None:  # noqa: B027 - optional (fault-injection tests)
        """Kill a component's process (Ray only)."""

    def shutdown(self) -> None:  # noqa: B027 - optional
        """Release backend resources."""
