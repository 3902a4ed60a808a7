"""In-process backend: components are plain objects, calls run at once, in order.

Deterministic under the run seed; the debugging mode. A watchdog thread watches the call that
runs (:class:`~light_league.execution.base.CallWatch`): it names a call still running after
``notice_s`` and, after ``timeout_s``, interrupts it with ``SIGALRM`` (when the calls run on the
main thread) so that :class:`~light_league.execution.base.CallTimeout` ends it.
"""

from __future__ import annotations

import signal
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType
from typing import Any

from light_league.execution.base import CallWatch, Done, Executor, Future, Handle


class _Watchdog:
    """Watches the one call the driver runs at a time (a thread that sleeps between deadlines)."""

    def __init__(self, watch: CallWatch) -> None:
        self.watch = watch
        self._changed = threading.Condition()
        self._call: tuple[str, float, int] | None = None  #: name, start, serial number
        self._serial = 0
        self._expired = 0  #: serial number of the call whose time ran out
        self._caller = 0  #: thread id of the call, interrupted when it runs out (0: not interruptible)
        self._thread: threading.Thread | None = None
        self._stopped = False

    @property
    def active(self) -> bool:
        return self.watch.timeout_s is not None or self.watch.notice_s is not None

    @contextmanager
    def running(self, name: str) -> Iterator[None]:
        if not self.active or self._call is not None:  # off, or a call within a call
            yield
            return
        restore = self._take_alarm()
        with self._changed:
            self._serial += 1
            self._call = (name, time.monotonic(), self._serial)
            self._caller = threading.get_ident() if restore is not None else 0
            if self._thread is None:
                self._thread = threading.Thread(target=self._watch, name="call-watchdog", daemon=True)
                self._thread.start()
            self._changed.notify_all()
        try:
            yield
        finally:
            with self._changed:
                self._call = None
                self._changed.notify_all()
            if restore is not None:
                signal.signal(signal.SIGALRM, restore)

    def _take_alarm(self) -> Any:
        """Install the SIGALRM handler that ends a call out of time; the handler to restore after
        (None: calls on this thread cannot be interrupted, e.g. off the main thread)."""
        if self.watch.timeout_s is None or threading.current_thread() is not threading.main_thread():
            return None
        previous = signal.getsignal(signal.SIGALRM)
        signal.signal(signal.SIGALRM, self._on_alarm)
        return previous if previous is not None else signal.SIG_DFL

    def _on_alarm(self, signum: int, frame: FrameType | None) -> None:
        call = self._call
        if call is not None and self._expired == call[2]:
            raise self.watch.timed_out(call[0])

    def _watch(self) -> None:
        with self._changed:
            while not self._stopped:
                call = self._call
                if call is None:
                    self._changed.wait()
                    continue
                self._watch_call(*call)

    def _watch_call(self, name: str, start: float, serial: int) -> None:
        """Notices and the timeout of one call; returns when it ends (called holding the lock)."""
        notice_at = self.watch.next_notice(0.0)
        timeout = self.watch.timeout_s
        while self._call is not None and self._call[2] == serial and not self._stopped:
            elapsed = time.monotonic() - start
            if notice_at is not None and elapsed >= notice_at:
                self.watch.say_still_running(name, elapsed)
                notice_at = self.watch.next_notice(elapsed)
            if timeout is not None and elapsed >= timeout and self._expired != serial:
                self._expired = serial
                if self._caller:
                    signal.pthread_kill(self._caller, signal.SIGALRM)
            deadlines = [
                t for t in (notice_at, timeout if self._expired != serial else None) if t is not None
            ]
            self._changed.wait(timeout=max(min(deadlines) - elapsed, 0.01) if deadlines else None)

    def stop(self) -> None:
        with self._changed:
            self._stopped = True
            self._changed.notify_all()


class LocalExecutor(Executor):
    name = "local"

    def __init__(self, *, watch: CallWatch | None = None) -> None:
        self._watchdog = _Watchdog(watch or CallWatch())

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
        with self._watchdog.running(f"{handle.name}.{method}"):
            return Done(getattr(handle.target, method)(*args, **kwargs))

    def client(self, handle: Handle) -> Any:
        return handle.target

    def restart(self, handle: Handle) -> Handle:
        return self.create(
            handle.cls, *handle.args, name=handle.name, restartable=handle.restartable, **handle.kwargs
        )

    def shutdown(self) -> None:
        self._watchdog.stop()
