"""Ray backend: every component is a Ray actor. The only module of the package that imports ``ray``.

``ray.init()`` starts a local instance when no address is configured; ``address: auto`` (or
``host:port``) joins a running cluster (see docs/cluster.md).

Placement: stateful components (PolicyServer, EpisodeServer, learners) are pinned to the
driver's node, so losing any other node loses only rollout workers; rollout workers (created
``restartable``) are spread over the nodes. Rollout workers are created with ``max_restarts=0``
and replaced by the rollout manager when they die, so it can redo their work and the new actor
starts clean on a node that is still alive.

Failures: a call on an actor that died raises :class:`WorkerDied`, and so does a call whose
result was lost with the node that held it (the actor went with that node); a call that failed
because the actor it reached lost *another* component (a worker whose PolicyServer died) raises
:class:`ComponentLost`, which no replacement can fix.
"""

from __future__ import annotations

import atexit
import logging
import os
import select
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Sequence
from typing import Any, NoReturn

os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
# A failed call is reported once, as the run's one-line error (traceback in error.log); Ray would
# also print every never-fetched failed result (tens of lines) as its references are collected.
os.environ.setdefault("RAY_IGNORE_UNHANDLED_ERRORS", "1")

import ray
from ray.exceptions import (
    ActorDiedError,
    ActorUnavailableError,
    AuthenticationError,
    GetTimeoutError,
    ObjectLostError,
    OwnerDiedError,
    RayActorError,
    RayError,
    RayTaskError,
)
from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

from light_league.errors import LeagueError
from light_league.execution.base import (
    CallWatch,
    ComponentLost,
    Executor,
    Future,
    Handle,
    WorkerDied,
    report_fatal,
)

_DEAD = (RayActorError, ActorDiedError, ActorUnavailableError)

#: seconds to wait for a TCP connection to a cluster's address before giving up
CONNECT_TIMEOUT_S = 10.0
#: seconds an actor may take to be placed and constructed before the run fails
PLACEMENT_TIMEOUT_S = 300.0
#: seconds between checks that the local Ray instance is still alive while waiting on it
LIVENESS_POLL_S = 2.0


class ClusterUnavailable(LeagueError, ConnectionError):
    """``execution.address`` names a Ray cluster that cannot be joined."""


class PlacementTimeout(RuntimeError):
    """No live node could host an actor (not enough free CPUs) within the time allowed."""


def _raise_lost(name: str, exc: Exception) -> NoReturn:
    """Turn Ray's failure of a call on ``name`` into WorkerDied / ComponentLost, or re-raise."""
    if isinstance(exc, _DEAD):
        raise WorkerDied(f"{name} died ({exc.__class__.__name__})") from exc
    if isinstance(exc, ObjectLostError):
        # the call finished but its result sat in the object store of a node that is gone since:
        # the actor went with that node, so it is lost just as if it had died mid-call
        raise WorkerDied(f"{name}'s result was lost with its node ({exc.__class__.__name__})") from exc
    cause = getattr(exc, "cause", None)
    if isinstance(exc, RayTaskError) and isinstance(cause, (WorkerDied, ComponentLost)):
        raise ComponentLost(f"{name} failed because {cause}") from exc
    if isinstance(exc, RayTaskError) and isinstance(cause, LeagueError):
        raise cause from None  # the user's one-line error, not Ray's wrapping of it with a traceback
    if isinstance(exc, RayTaskError) and isinstance(cause, Exception) and not isinstance(cause, RayError):
        # the component's own exception (an env's), as the local backend raises it: its message
        # is the error line's, not Ray's header and traceback; Ray's text (with the actor's
        # traceback) stays chained, for error.log
        raise cause from exc
    raise exc


class RayInstanceDown(RuntimeError):
    """A core process (raylet, GCS) of the Ray instance this run started has exited."""


def _core_processes() -> list[tuple[str, subprocess.Popen[bytes]]]:
    """(kind, process) of the raylet and GCS of the Ray instance this process started; empty when
    it joined a cluster (it owns no Ray processes)."""
    node: Any = getattr(ray._private.worker, "_global_node", None)
    # None when not started here; getattr also covers a Ray version without these internals
    processes = getattr(node, "all_processes", None) or {}
    return [
        (kind, info.process)
        for kind in ("raylet", "gcs_server")
        for info in processes.get(kind, [])
        if getattr(info, "process", None) is not None
    ]


def _local_ray_down() -> str | None:
    """The name of a core process of the Ray instance started by this process that has exited.

    None when all are up, or when this process joined a cluster.
    """
    return next((kind for kind, proc in _core_processes() if proc.poll() is not None), None)


def _instance_down(kind: str) -> RayInstanceDown:
    return RayInstanceDown(
        f"the local Ray instance stopped: its {kind} process exited (killed, or out of memory); "
        "no component can run without it"
    )


def check_local_ray() -> None:
    """Raise :class:`RayInstanceDown` when the local Ray instance lost its raylet or GCS."""
    dead = _local_ray_down()
    if dead is not None:
        raise _instance_down(dead)


class _InstanceWatch:
    """A thread that reports the moment a core process of the local Ray instance exits.

    The driver's own checks (:func:`check_local_ray`, every ``LIVENESS_POLL_S`` while it waits)
    may come too late: Ray's core worker ends the driver with ``_exit(1)`` on its first
    object-store call after the raylet is gone, before any ``except`` runs. This thread blocks on
    a pidfd of each process (Linux), so it wakes when one exits and hands
    :class:`RayInstanceDown` to :func:`~light_league.execution.base.report_fatal`, which says the
    run's error line before the process can be ended. Not started where pidfds are unavailable.
    """

    def __init__(self, pidfds: dict[int, str]) -> None:
        self._fds = pidfds
        self._pid = os.getpid()  # a forked child inherits the exit hook, not the thread
        self._wake_r, self._wake_w = os.pipe()
        self._thread = threading.Thread(target=self._watch, name="ray-instance-watch", daemon=True)
        self._thread.start()
        atexit.register(self.stop)  # runs before Ray's own exit handler (registered on import) stops them

    @classmethod
    def start(cls) -> _InstanceWatch | None:
        pids = {proc.pid: kind for kind, proc in _core_processes()}
        if not pids or not hasattr(os, "pidfd_open"):
            return None
        pidfds: dict[int, str] = {}
        try:
            for pid, kind in pids.items():
                pidfds[os.pidfd_open(pid)] = kind
        except OSError:  # a kernel without pidfds: the driver's own checks remain
            for fd in pidfds:
                os.close(fd)
            return None
        return cls(pidfds)

    def _watch(self) -> None:
        ready, _, _ = select.select([*self._fds, self._wake_r], [], [])
        dead = [self._fds[fd] for fd in ready if fd in self._fds]
        if dead and self._wake_r not in ready:
            report_fatal(_instance_down(dead[0]))

    def stop(self) -> None:
        """End the watch before Ray is shut down on purpose (its processes then exit)."""
        if not self._fds or os.getpid() != self._pid:
            return
        atexit.unregister(self.stop)
        os.write(self._wake_w, b"x")
        self._thread.join(timeout=5)
        for fd in (*self._fds, self._wake_r, self._wake_w):
            os.close(fd)
        self._fds = {}


def _get(ref: Any, name: str, watch: CallWatch | None = None, call: str = "", started: float = 0.0) -> Any:
    """``ray.get(ref)`` of a call on component ``name``, checking that the local Ray instance lives;
    with ``watch``, the driver's wait on ``call`` (sent at ``started`` on the watch's clock, which
    does not run while the process is stopped) is watched (notices, timeout)."""
    notice_at = watch.next_notice(0.0) if watch is not None else None
    timeout = watch.timeout_s if watch is not None else None
    clock = watch.clock.now if watch is not None else time.monotonic
    while True:
        elapsed = clock() - started
        if watch is not None and timeout is not None and elapsed >= timeout:
            raise watch.timed_out(call)
        deadlines = [t - elapsed for t in (notice_at, timeout) if t is not None]
        try:
            return ray.get(ref, timeout=max(min([LIVENESS_POLL_S, *deadlines]), 0.01))
        except GetTimeoutError:
            check_local_ray()  # a dead local raylet would otherwise hang the call for minutes
        except (*_DEAD, ObjectLostError, RayTaskError) as exc:
            check_local_ray()
            _raise_lost(name, exc)
        elapsed = clock() - started
        if watch is not None and notice_at is not None and elapsed >= notice_at:
            watch.say_still_running(call, elapsed)
            notice_at = watch.next_notice(elapsed)


class _RayFuture(Future):
    """A call the driver sent to an actor (its wait watched by the executor's :class:`CallWatch`)."""

    def __init__(self, ref: Any, name: str, call: str = "", watch: CallWatch | None = None) -> None:
        self.ref = ref
        self.name = name
        self.call = call or name
        self.watch = watch
        self.started = watch.clock.now() if watch is not None else time.monotonic()

    def result(self) -> Any:
        return _get(self.ref, self.name, self.watch, self.call, self.started)


class _Receipt(Future):
    """A client call started by one component and awaited by another (see ``start_call``)."""

    def __init__(self, ref: Any, callee: str) -> None:
        self.ref = ref
        self.callee = callee

    def result(self) -> Any:
        try:
            return _get(self.ref, self.callee)
        except WorkerDied as exc:
            if isinstance(exc.__cause__, OwnerDiedError):  # the component that sent the call died
                raise WorkerDied(
                    f"the sender of a call to {self.callee} died ({exc.__cause__.__class__.__name__})"
                ) from exc
            raise ComponentLost(f"a call to {self.callee} was lost: {exc}") from exc


class RayClient:
    """Synchronous, picklable proxy of an actor: ``client.method(x)`` = ``ray.get(actor.method.remote(x))``;
    ``client.method.start(x)`` sends the call and returns a future at once (``start_call``)."""

    def __init__(self, actor: Any, name: str) -> None:
        self._actor = actor
        self._name = name

    def __getattr__(self, method: str) -> Any:
        if method.startswith("_"):
            raise AttributeError(method)
        remote = getattr(self._actor, method)

        def call(*args: Any, **kwargs: Any) -> Any:
            return _get(remote.remote(*args, **kwargs), self._name)

        def start(*args: Any, **kwargs: Any) -> Future:
            try:
                ref = remote.remote(*args, **kwargs)
            except _DEAD as exc:
                _raise_lost(self._name, exc)
            return _Receipt(ref, self._name)

        call.start = start  # type: ignore[attr-defined]
        return call


def _actor_node(actor_self: Any) -> str:
    return str(ray.get_runtime_context().get_node_id())


class RayExecutor(Executor):
    name = "ray"

    def __init__(
        self,
        *,
        address: str | None = None,
        num_cpus: int | None = None,
        object_store_mb: int = 256,
        watch: CallWatch | None = None,
    ) -> None:
        self._watch = watch
        self._owns_ray = False
        self._actors: list[Any] = []
        self._reaper: subprocess.Popen[bytes] | None = None
        self._instance_watch: _InstanceWatch | None = None
        if not ray.is_initialized():
            _init_ray(address, num_cpus, object_store_mb)
            self._owns_ray = True
            if not address:
                self._reaper = _start_reaper()
                self._instance_watch = _InstanceWatch.start()
        self._node_id = str(ray.get_runtime_context().get_node_id())

    @property
    def node_id(self) -> str:
        return self._node_id

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
        # A component asking for GPUs (a learner on a GPU) prefers the driver's machine but goes to
        # any node with a free GPU share when the driver's has none (soft affinity).
        strategy: Any = (
            "SPREAD" if restartable else NodeAffinitySchedulingStrategy(node_id=self._node_id, soft=gpus > 0)
        )
        actor_cls: Any = ray.remote(cls).options(
            num_cpus=cpus, num_gpus=gpus, max_restarts=0, max_task_retries=0, scheduling_strategy=strategy
        )
        actor = actor_cls.remote(*args, **kwargs)
        self._actors.append(actor)
        return Handle(name, actor, cls, args, kwargs, restartable, cpus)

    def gpus(self) -> float:
        """GPUs declared by the nodes of the cluster (what ``num_gpus`` requests draw from)."""
        return float(ray.cluster_resources().get("GPU", 0.0))

    def submit(self, handle: Handle, method: str, *args: Any, **kwargs: Any) -> Future:
        try:
            ref = getattr(handle.target, method).remote(*args, **kwargs)
        except _DEAD as exc:
            _raise_lost(handle.name, exc)
        return _RayFuture(ref, handle.name, f"{handle.name}.{method}", self._watch)

    def client(self, handle: Handle) -> Any:
        return RayClient(handle.target, handle.name)

    def restart(self, handle: Handle) -> Handle:
        """A fresh actor with the same arguments, on any live node; waits until it is up."""
        check_local_ray()
        self._forget(handle.target)
        new = self.create(
            handle.cls,
            *handle.args,
            name=handle.name,
            restartable=handle.restartable,
            cpus=handle.cpus,
            **handle.kwargs,
        )
        waiting = [new.target.__ray_ready__.remote()]
        deadline = time.monotonic() + PLACEMENT_TIMEOUT_S
        ready: list[Any] = []
        while not ready and time.monotonic() < deadline:
            ready, _ = ray.wait(waiting, timeout=LIVENESS_POLL_S)
            check_local_ray()
        if not ready:
            raise PlacementTimeout(
                f"no live node could host a replacement for {handle.name} within "
                f"{PLACEMENT_TIMEOUT_S:.0f} s (it needs {handle.cpus} CPUs): add a node or lower "
                f"execution.worker_cpus"
            )
        _get(ready[0], handle.name)
        return new

    def placement(self, handles: Sequence[Handle]) -> dict[str, str]:
        refs = [h.target.__ray_call__.remote(_actor_node) for h in handles]
        try:
            nodes = ray.get(refs, timeout=PLACEMENT_TIMEOUT_S)
        except GetTimeoutError as exc:
            raise PlacementTimeout(
                f"components {[h.name for h in handles]} not up within {PLACEMENT_TIMEOUT_S:.0f} s: "
                f"their nodes lack free CPUs (learners need 0.25 CPU each on the driver's node, rollout "
                f"workers execution.worker_cpus each on any node); add CPUs or lower execution.worker_cpus"
            ) from exc
        except (*_DEAD, RayTaskError) as exc:
            _raise_lost("a component", exc)
        return {h.name: str(n) for h, n in zip(handles, nodes)}

    def kill(self, handle: Handle) -> None:
        self._forget(handle.target)

    def _forget(self, actor: Any) -> None:
        try:
            ray.kill(actor, no_restart=True)
        except Exception:  # already dead or gone: nothing to release
            pass
        self._actors = [a for a in self._actors if a is not actor]

    def shutdown(self) -> None:
        """Kill this executor's actors (frees their CPUs on a shared instance); stop Ray if we started it."""
        if self._watch is not None:
            self._watch.clock.close()
        if self._instance_watch is not None:  # Ray's processes exit below, on purpose
            self._instance_watch.stop()
            self._instance_watch = None
        for actor in list(self._actors):
            self._forget(actor)
        if self._owns_ray and ray.is_initialized():
            ray.shutdown()
        if self._reaper is not None:  # closing its pipe lets it reap what shutdown left, then exit
            assert self._reaper.stdin is not None
            self._reaper.stdin.close()
            try:
                self._reaper.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self._reaper.kill()
            self._reaper = None


#: A watchdog for a Ray instance this process starts: it notes the raylet's descendants every
#: second and kills them when its stdin (a pipe from the driver) closes, i.e. when the driver has
#: exited, even by SIGKILL. Ray's own helpers (dashboard and runtime-env agents) would otherwise
#: outlive a killed driver by a minute or more.
_REAPER = r"""
import os, select, sys
import psutil
raylet = psutil.Process(int(sys.argv[1]))
seen = {}
while True:
    ready, _, _ = select.select([sys.stdin], [], [], 1.0)
    if ready and not os.read(sys.stdin.fileno(), 1):
        break
    try:
        for child in raylet.children(recursive=True):
            seen[child.pid] = child
    except psutil.Error:
        pass
for child in seen.values():
    try:
        if child.is_running():
            child.kill()
    except psutil.Error:
        pass
"""


def _start_reaper() -> subprocess.Popen[bytes] | None:
    """Start the watchdog of the local Ray instance's processes (None if its raylet is unknown)."""
    proc = next((p for kind, p in _core_processes() if kind == "raylet"), None)
    if proc is None:
        return None
    return subprocess.Popen(
        [sys.executable, "-c", _REAPER, str(proc.pid)],
        stdin=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )


def _init_ray(address: str | None, num_cpus: int | None, object_store_mb: int) -> None:
    kwargs: dict[str, Any] = {"include_dashboard": False, "log_to_driver": False, "configure_logging": False}
    if not address:
        # Ray starts its workers at niceness 15; on a busy machine they then starve behind the
        # driver and everything else. A locally started instance runs them at normal priority.
        os.environ.setdefault("RAY_worker_niceness", "0")
        # Ray's default for a new local instance (token authentication on) is kept; only its
        # notice about that default, the first line of every run otherwise, is left out.
        notices = logging.getLogger("ray._private.authentication.authentication_token_setup")
        notices.addFilter(_drop_token_default_notice)
        try:
            ray.init(num_cpus=num_cpus, object_store_memory=object_store_mb * 1024 * 1024, **kwargs)
        finally:
            notices.removeFilter(_drop_token_default_notice)
        return
    try:
        _check_reachable(address)
        ray.init(address=address, **kwargs)
    except (ConnectionError, AuthenticationError) as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else exc.__class__.__name__
        raise ClusterUnavailable(
            f"execution.address={address!r}: cannot join the Ray cluster ({first[:300]}); start it with "
            f"`ray start --head`, check the address and RAY_AUTH_MODE / the auth token (docs/cluster.md), "
            f"or drop execution.address to run on a local Ray instance"
        ) from None


def _drop_token_default_notice(record: logging.LogRecord) -> bool:
    """False for Ray's "Token authentication is enabled for this Ray cluster" notice."""
    return not record.getMessage().startswith("Token authentication is enabled for this Ray cluster")


def _check_reachable(address: str) -> None:
    """Fail at once when a ``host:port`` address has nothing listening (Ray would retry forever)."""
    host, sep, port = address.rpartition(":")
    if address == "auto" or "://" in address or not sep or not port.isdigit():
        return
    try:
        socket.create_connection((host, int(port)), timeout=CONNECT_TIMEOUT_S).close()
    except OSError as exc:
        raise ConnectionError(f"nothing answers at {address}: {exc.strerror or exc}") from None
