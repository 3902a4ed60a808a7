"""Payoff charts drawn in a child process, so that a generation never waits for a PNG.

Drawing the payoff heatmap and the meta-strategy bar chart with matplotlib takes 0.1-0.3 s per
generation, longer than a whole generation of a small game. :class:`ChartRenderer` sends each
:class:`PayoffSnapshot` (as its JSON) to a child process (``python -m
light_league.tracking.chart_process``, run at a lower CPU priority) that draws both charts and
sends them back as PNG bytes; a reader thread of the parent hands each result to ``deliver``
(the logger writes it). The parent never waits for a chart except in :meth:`ChartRenderer.close`
(run end), which waits for every chart still pending.

Bounded cost: the charts' CPU time (the child's, imports included) stays within ``busy_fraction``
(0.25) of the wall time since the renderer was created: at most a quarter of one core, at a lower
priority. The child starts once the run can afford its start (``STARTUP_CPU_S``, about 0.6 s of
CPU for Python, matplotlib and a first drawing: so about 2.4 s after the logger is built), draws
one snapshot at a time, and rests while it is over the budget. Snapshots that arrive meanwhile
wait, in order: every generation's charts are drawn, later than the generation when generations
come faster than the budget allows. :meth:`ChartRenderer.close` (run end) and
:meth:`ChartRenderer.wait` send everything that waits at once (no rest) and wait for it, so a
run that ends has the images of all its generations. If the child cannot be started or dies
more than three times, the charts are drawn in the calling thread and one warning says so.

Frames on both pipes: a 4-byte big-endian length, then that many bytes of UTF-8 JSON. A request
is ``PayoffSnapshot.to_json()``; a reply is ``{"generation": g, "charts": {name: {"png": base64,
"height": h, "width": w}}}`` or ``{"generation": g, "error": "..."}``.
"""

from __future__ import annotations

import base64
import io
import json
import logging
import os
import queue
import signal
import struct
import subprocess
import sys
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

import numpy as np

from light_league.tracking.logger import PayoffSnapshot

log = logging.getLogger(__name__)

#: the charts drawn for every snapshot, in this order
CHART_NAMES = ("payoff_heatmap", "meta_strategy")
#: the child runs at this niceness (added to the parent's): training keeps the CPU it needs
CHILD_NICENESS = 10
#: the child is restarted at most this many times before charts are drawn in-process
MAX_RESTARTS = 3
#: the share of wall time (since the renderer was created) the charts may spend on the CPU
BUSY_FRACTION = 0.25
#: CPU seconds a child takes to start (Python, matplotlib, a first drawing; measured 0.55-0.6 s on
#: the 2-core machine of notes/benchmarks.md), counted against the budget before it starts
STARTUP_CPU_S = 0.6
_HEADER = struct.Struct(">I")


@dataclass(frozen=True)
class Chart:
    """One drawn chart: PNG bytes and the image's size in pixels."""

    png: bytes
    height: int
    width: int


@dataclass(frozen=True)
class RenderedCharts:
    """Both charts of one generation (``charts`` maps each of ``CHART_NAMES`` to its chart)."""

    generation: int
    charts: dict[str, Chart]


def encode_png(rgb: np.ndarray) -> Chart:
    """PNG bytes of an ``(H, W, 3) uint8`` image."""
    from PIL import Image

    buffer = io.BytesIO()
    Image.fromarray(rgb, mode="RGB").save(buffer, format="PNG")
    return Chart(buffer.getvalue(), int(rgb.shape[0]), int(rgb.shape[1]))


def draw_charts(snapshot: PayoffSnapshot) -> RenderedCharts:
    """Draw both charts of ``snapshot`` here (what the child does for each request)."""
    from light_league.tracking.payoff_render import meta_strategy_bar_png, payoff_heatmap_png

    return RenderedCharts(
        snapshot.generation,
        {
            "payoff_heatmap": encode_png(payoff_heatmap_png(snapshot)),
            "meta_strategy": encode_png(meta_strategy_bar_png(snapshot)),
        },
    )


def write_frame(stream: IO[bytes], message: dict[str, Any]) -> None:
    payload = json.dumps(message).encode("utf-8")
    stream.write(_HEADER.pack(len(payload)) + payload)
    stream.flush()


def read_frame(stream: IO[bytes]) -> dict[str, Any] | None:
    """The next message, or None at the end of the stream (the other side closed or died)."""
    header = stream.read(_HEADER.size)
    if len(header) < _HEADER.size:
        return None
    (size,) = _HEADER.unpack(header)
    payload = stream.read(size)
    if len(payload) < size:
        return None
    message: dict[str, Any] = json.loads(payload.decode("utf-8"))
    return message


def _reply(rendered: RenderedCharts, cpu_s: float) -> dict[str, Any]:
    return {
        "generation": rendered.generation,
        "cpu_s": cpu_s,
        "charts": {
            name: {"png": base64.b64encode(c.png).decode("ascii"), "height": c.height, "width": c.width}
            for name, c in rendered.charts.items()
        },
    }


def _from_reply(message: dict[str, Any]) -> RenderedCharts:
    return RenderedCharts(
        int(message["generation"]),
        {
            name: Chart(base64.b64decode(c["png"]), int(c["height"]), int(c["width"]))
            for name, c in message["charts"].items()
        },
    )


class ChartRenderer:
    """Draws each submitted snapshot's charts in a child process and hands them to ``deliver``.

    ``deliver`` runs on the renderer's reader thread (or, after the fallback, in the caller's);
    it must be safe to call while the main thread logs (TensorBoard's writer is). See the module
    docstring for the budget (``busy_fraction``); at most ``max_pending`` snapshots are with the
    child, the others wait in order.
    """

    def __init__(
        self,
        deliver: Callable[[RenderedCharts], None],
        *,
        busy_fraction: float = BUSY_FRACTION,
        startup_cpu_s: float = STARTUP_CPU_S,
        max_pending: int = 1,
        niceness: int = CHILD_NICENESS,
    ) -> None:
        if max_pending < 1 or not 0.0 < busy_fraction <= 1.0:
            raise ValueError(
                "ChartRenderer needs max_pending >= 1 and 0 < busy_fraction <= 1, "
                f"got {max_pending}, {busy_fraction}"
            )
        self._deliver = deliver
        self._busy_fraction = busy_fraction
        self._max_pending = max_pending
        self._niceness = niceness
        self._lock = threading.Lock()
        self._changed = threading.Condition(self._lock)
        self._proc: subprocess.Popen[bytes] | None = None
        self._reader: threading.Thread | None = None  #: None: no live child
        self._queue: deque[PayoffSnapshot] = deque()  #: not yet sent to the child
        self._sent: deque[PayoffSnapshot] = deque()  #: sent, no reply yet (replies come in order)
        self._startup_cpu_s = startup_cpu_s
        self._origin = time.monotonic()  #: the budget counts from here
        self._cpu_before = 0.0  #: CPU seconds of children that ended
        self._child_cpu = 0.0  #: CPU seconds of the current child (its last report)
        self._rest_until = 0.0  #: time.monotonic() before which nothing is sent (the budget)
        self._ready = False  #: the child has imported and warmed up (it says so)
        self._timer: threading.Timer | None = None
        self._hurry = 0  #: > 0 while close or wait sends at once
        self._starts = 0
        self._in_process = False
        self._closed = False
        self.drawn = 0
        """Snapshots whose charts were delivered."""
        self.failed: list[int] = []
        """Generations whose charts could not be drawn (a warning says why)."""

    @property
    def in_process(self) -> bool:
        """True once the child could not be (re)started and charts are drawn in the caller."""
        return self._in_process

    @property
    def child_pid(self) -> int | None:
        return self._proc.pid if self._proc is not None and self._reader is not None else None

    def start(self) -> None:
        """Start the child as soon as the budget allows (not at the first submit): its imports
        then overlap the run rather than delay the first charts."""
        with self._lock:
            self._pump()

    def submit(self, snapshot: PayoffSnapshot) -> None:
        """Queue ``snapshot``'s charts; returns at once (unless charts are drawn in-process)."""
        if self._closed:
            raise RuntimeError("ChartRenderer.submit after close")
        with self._lock:
            self._queue.append(snapshot)
            self._pump()
            leftover = self._take_leftover()
        self._draw_here(leftover)

    def wait(self, timeout_s: float = 300.0) -> bool:
        """Send what waits at once (no rest) and wait until every submitted chart is delivered.

        True when nothing is pending any more, False at the timeout.
        """
        deadline = time.monotonic() + timeout_s
        with self._lock:
            self._hurry += 1
            try:
                while True:
                    self._pump()  # also restarts a child that died with charts pending
                    if self._in_process or not (self._queue or self._sent):
                        break
                    left = deadline - time.monotonic()
                    if left <= 0:
                        break
                    self._changed.wait(timeout=left)
            finally:
                self._hurry -= 1
            leftover = self._take_leftover()
            done = not (self._queue or self._sent)
        self._draw_here(leftover)
        return done

    def close(self, timeout_s: float = 300.0, *, quiet: bool = False) -> bool:
        """Draw every pending chart (waiting at most ``timeout_s``), then stop the child.

        Returns False if charts were still pending at the timeout (they are skipped; a warning
        says so, the debug log with ``quiet``: an interrupted run has said its one line)."""
        if self._closed:
            return True
        done = self.wait(timeout_s)
        self._closed = True
        with self._lock:
            if self._timer is not None:
                self._timer.cancel()
            lost = [s.generation for s in (*self._sent, *self._queue)]
            self._queue.clear()
        self._stop_child(kill=not done)
        if lost:
            self.failed += lost
            (log.debug if quiet else log.warning)(
                "payoff charts of generation(s) %s still pending after %.0f s; skipped", lost, timeout_s
            )
        return done

    # ------------------------------------------------------------------ under self._lock
    def _pump(self) -> None:
        """Send while fewer than ``max_pending`` snapshots are with the child, oldest first: one
        when the child has rested, everything when the caller hurries (``wait``, ``close``); else
        arm a timer for the end of the rest."""
        if self._reader is None and not self._in_process:  # no child: start one when affordable
            start_at = self._origin + (self._cpu_before + self._startup_cpu_s) / self._busy_fraction
            wait = start_at - time.monotonic()
            if wait > 0 and not self._hurry:
                self._arm_timer(wait)
                return
            if not self._ensure_child():
                return
        while self._queue and len(self._sent) < self._max_pending:
            if not self._ensure_child() or not self._ready:
                return  # a new child sends "ready" once it can draw; the reader pumps then
            rest = self._rest_until - time.monotonic()
            if rest > 0 and not self._hurry:
                self._arm_timer(rest)
                return
            snapshot = self._queue.popleft()
            assert self._proc is not None and self._proc.stdin is not None
            try:
                write_frame(self._proc.stdin, snapshot.to_json())
            except (BrokenPipeError, OSError, ValueError):
                # the child died; its reader thread notices, and a new child takes the queue
                self._queue.appendleft(snapshot)
                return
            self._sent.append(snapshot)

    def _arm_timer(self, delay: float) -> None:
        if self._timer is not None and self._timer.is_alive():
            return
        self._timer = threading.Timer(delay, self._on_timer)
        self._timer.daemon = True
        self._timer.start()

    def _on_timer(self) -> None:
        with self._lock:
            self._timer = None
            if not self._closed:
                self._pump()
            leftover = self._take_leftover()
        self._draw_here(leftover)

    def _take_leftover(self) -> list[PayoffSnapshot]:
        """Everything queued, once charts are drawn in-process (else nothing)."""
        if not self._in_process:
            return []
        leftover = [*self._sent, *self._queue]
        self._sent.clear()
        self._queue.clear()
        return leftover

    def _ensure_child(self) -> bool:
        """A running child (started or restarted now); False if there cannot be one."""
        if self._in_process:
            return False
        if self._reader is not None:
            return True
        if self._starts > MAX_RESTARTS:
            return self._give_up(f"the chart process ended unexpectedly {self._starts} times")
        self._starts += 1
        self._ready = False
        package_root = str(Path(__file__).resolve().parents[2])
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(p for p in (package_root, env.get("PYTHONPATH", "")) if p)
        env["MPLBACKEND"] = "Agg"
        try:
            self._proc = subprocess.Popen(
                [sys.executable, "-m", "light_league.tracking.chart_process", str(self._niceness)],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                env=env,
                # its own session: a Ctrl-C in the terminal (SIGINT to the foreground process group)
                # reaches the run, which closes the child's input; the child never sees it
                start_new_session=True,
            )
        except OSError as exc:
            return self._give_up(f"the chart process could not start ({exc})")
        self._reader = threading.Thread(
            target=self._read_replies, args=(self._proc,), name="chart-reader", daemon=True
        )
        self._reader.start()
        return True

    def _give_up(self, why: str) -> bool:
        log.warning("%s; payoff charts are drawn in the training process from now on", why)
        self._in_process = True
        return False

    # ------------------------------------------------------------------ reader thread
    def _read_replies(self, proc: subprocess.Popen[bytes]) -> None:
        assert proc.stdout is not None
        while True:
            try:
                message = read_frame(proc.stdout)
            except (OSError, ValueError):
                message = None
            if message is None:
                break
            if not message.get("ready"):
                self._handle(message)
            with self._lock:
                if message.get("ready"):
                    self._ready = True
                elif self._sent:
                    self._sent.popleft()
                self._child_cpu = float(message.get("cpu_s", self._child_cpu))
                spent = self._cpu_before + self._child_cpu
                self._rest_until = self._origin + spent / self._busy_fraction
                self._pump()
                self._changed.notify_all()
        proc.wait()
        with self._lock:
            # Ended (stdin closed) or died: what it had not answered goes back to the queue.
            self._queue.extendleft(reversed(self._sent))
            self._sent.clear()
            self._reader = None
            self._ready = False
            self._cpu_before += self._child_cpu
            self._child_cpu = 0.0
            self._changed.notify_all()

    def _handle(self, message: dict[str, Any]) -> None:
        if "error" in message:
            self.failed.append(int(message["generation"]))
            log.warning("payoff charts of generation %s failed: %s", message["generation"], message["error"])
            return
        rendered = _from_reply(message)
        try:
            self._deliver(rendered)
        except Exception as exc:  # a chart must never stop the run
            self.failed.append(rendered.generation)
            # a full disk fails the run's own writes too, which say it once
            say = log.debug if isinstance(exc, OSError) else log.warning
            say("payoff charts of generation %d not written: %s", rendered.generation, exc)
            return
        self.drawn += 1

    def _stop_child(self, *, kill: bool = False) -> None:
        """End the child: close its input (it ends once it has answered), or ``kill`` it."""
        proc, reader = self._proc, self._reader
        if proc is None:
            return
        if kill:
            proc.kill()
        if proc.stdin is not None:
            try:
                proc.stdin.close()
            except OSError:
                pass
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        if reader is not None:
            reader.join(timeout=30)

    def _draw_here(self, snapshots: list[PayoffSnapshot]) -> None:
        for snapshot in snapshots:
            try:
                rendered = draw_charts(snapshot)
            except Exception as exc:  # a chart must never stop the run
                self.failed.append(snapshot.generation)
                log.warning("payoff charts of generation %d failed: %s", snapshot.generation, exc)
                continue
            self._deliver(rendered)
            self.drawn += 1


# ---------------------------------------------------------------------- child side
def _warm_up() -> None:
    """Draw a small chart once: the first drawing loads fonts and caches (several times slower)."""
    snapshot = PayoffSnapshot(
        0, ["a-v1", "b"], ["main_agent", "baseline"], np.full((2, 2), 0.5), np.ones((2, 2)), np.full(2, 0.5)
    )
    try:
        draw_charts(snapshot)
    except Exception:  # the real requests report any problem
        pass


def child_main(niceness: int) -> int:
    """Read snapshots from stdin, write their charts to stdout, until stdin ends.

    Requests are read on a thread as soon as they arrive, so the parent's write of a large
    snapshot never waits for the chart being drawn.
    """
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent stops it (closes stdin), not a Ctrl-C
    if niceness > 0 and hasattr(os, "nice"):
        try:
            os.nice(niceness)
        except OSError:
            pass
    stdin, stdout = sys.stdin.buffer, sys.stdout.buffer
    sys.stdout = sys.stderr  # anything printed by a library must not corrupt the frames
    requests: queue.Queue[dict[str, Any] | None] = queue.Queue()

    def read_all() -> None:
        while True:
            request = read_frame(stdin)
            requests.put(request)
            if request is None:
                return

    threading.Thread(target=read_all, name="chart-requests", daemon=True).start()
    _warm_up()
    try:
        write_frame(stdout, {"ready": True, "cpu_s": time.process_time()})
    except (BrokenPipeError, OSError):
        return 0
    while True:
        request = requests.get()
        if request is None:
            return 0
        try:
            rendered = draw_charts(PayoffSnapshot.from_json(request))
            reply = _reply(rendered, time.process_time())  # CPU seconds since the child started
        except Exception as exc:  # report it, keep serving the next generations
            reply = {
                "generation": request.get("generation"),
                "error": f"{exc.__class__.__name__}: {exc}",
                "cpu_s": time.process_time(),
            }
        try:
            write_frame(stdout, reply)
        except (BrokenPipeError, OSError):
            return 0  # the parent is gone


if __name__ == "__main__":
    sys.exit(child_main(int(sys.argv[1]) if len(sys.argv) > 1 else CHILD_NICENESS))
