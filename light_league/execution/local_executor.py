"""In-process backend: components are plain objects, calls run at once, in order.

Deterministic under the run seed; the debugging mode. A watchdog thread watches the call that
runs (:class:`~light_league.execution.base.CallWatch`): it names a call still running after
``notice_s`` and, after ``timeout_s``, interrupts it with ``SIGALRM`` (when the calls run on the
main thread) so that :class:`~light_league.execution.base.CallTimeout` ends it; it looks every
tenth of the shorter limit, so a notice comes at most that late. Both are measured on the watch's
clock, which does not run while the process is stopped (Ctrl-Z).
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType
from typing import Any

from light_league.execution.base import CallWatch, Done, Executor, Future, Handle


class _Watchdog:
    """Watches the one call the driver runs at a time: a thread that looks every ``poll_s``
    (a tenth of the shorter limit, 0.05 to 5 s), so starting and ending a call costs two
    assignments and no wake-up."""

    def __init__(self, watch: CallWatch) -> None:
        self.watch = watch
        limits = [t for t in (watch.timeout_s, watch.notice_s) if t is not None]
        self.poll_s = min(max(min(limits) / 10, 0.05), 5.0) if limits else None
        self._call: tuple[str, float, int] | None = None  #: name, start, serial number
        self._serial = 0
        self._expired = 0  #: serial number of the call whose time ran out
        self._caller = 0  #: thread id of the call, interrupted when it runs out (0: not interruptible)
        self._thread: threading.Thread | None = None
        self._stop = threading.Event()
        #: the SIGALRM handler before ours (ours stays installed until stop, so an alarm sent as a
        #: call ends never meets the default action, which would end the process)
        self._previous_alarm: Any = None

    @contextmanager
    def running(self, name: str) -> Iterator[None]:
        if self.poll_s is None or self._call is not None:  # off, or a call within a call
            yield
            return
        self._caller = threading.get_ident() if self._take_alarm() else 0
        self._serial += 1
        self._call = (name, self.watch.clock.now(), self._serial)
        if self._thread is None:
            self._thread = threading.Thread(target=self._watch, name="call-watchdog", daemon=True)
            self._thread.start()
        try:
            yield
        finally:
            self._call = None

    def _take_alarm(self) -> bool:
        """Install the SIGALRM handler that ends a call out of time (once); False when calls on
        this thread cannot be interrupted (no timeout, or not the main thread)."""
        if self.watch.timeout_s is None or threading.current_thread() is not threading.main_thread():
            return False
        if self._previous_alarm is None:
            previous = signal.getsignal(signal.SIGALRM)
            signal.signal(signal.SIGALRM, self._on_alarm)
            self._previous_alarm = previous if previous is not None else signal.SIG_DFL
        return True

    def _on_alarm(self, signum: int, frame: FrameType | None) -> None:
        call = self._call
        if call is not None and self._expired == call[2]:
            raise self.watch.timed_out(call[0])

    def _watch(self) -> None:
        assert self.poll_s is not None
        serial, notice_at = 0, None
        while not self._stop.wait(self.poll_s):
            call = self._call
            if call is None:
                continue
            if call[2] != serial:  # a new call
                serial, notice_at = call[2], self.watch.next_notice(0.0)
            elapsed = self.watch.clock.now() - call[1]
            if notice_at is not None and elapsed >= notice_at:
                self.watch.say_still_running(call[0], elapsed)
                notice_at = self.watch.next_notice(elapsed)
            timeout = self.watch.timeout_s
            if timeout is not None and elapsed >= timeout and self._expired != serial:
                self._expired = serial
                if self._caller:
                    signal.pthread_kill(self._caller, signal.SIGALRM)

    def stop(self) -> None:
        self._stop.set()
        self.watch.clock.close()
        if self._previous_alarm is not None and threading.current_thread() is threading.main_thread():
            signal.signal(signal.SIGALRM, self._previous_alarm)
            self._previous_alarm = None


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
