"""The Ray backend's watch on its local instance's core processes, and the one failure line.

Ray's core worker ends a driver whose raylet died with ``_exit(1)`` on its next object-store call,
so the driver's own check may never run: the watch says the failure as soon as the process exits.
Here a plain child process stands in for the raylet (the real one: tests/integration/test_ray_faults.py).
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from light_league import failures
from light_league.execution.base import set_fatal_report

ray_executor = pytest.importorskip("light_league.execution.ray_executor")

pytestmark = pytest.mark.skipif(not hasattr(os, "pidfd_open"), reason="pidfds are Linux-only")


@pytest.fixture
def reports() -> Iterator[list[Exception]]:
    heard: list[Exception] = []
    set_fatal_report(heard.append)
    yield heard
    set_fatal_report(None)


def stand_in() -> subprocess.Popen[bytes]:
    return subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])


@pytest.mark.integration
def test_a_core_process_that_exits_is_reported_at_once(reports: list[Exception]) -> None:
    proc = stand_in()
    watch = ray_executor._InstanceWatch({os.pidfd_open(proc.pid): "raylet"})
    try:
        time.sleep(0.2)
        assert reports == []  # nothing while it lives
        proc.kill()
        # said with no call into Ray: the watch wakes on the process's pidfd (the 60 s only bound a hang)
        killed = time.monotonic()
        while not reports and time.monotonic() - killed < 60:
            time.sleep(0.01)
        assert len(reports) == 1 and isinstance(reports[0], ray_executor.RayInstanceDown)
        assert "its raylet process exited" in str(reports[0])
    finally:
        watch.stop()
        proc.kill()
        proc.wait()


@pytest.mark.integration
def test_a_stopped_watch_says_nothing_and_stops_once(reports: list[Exception]) -> None:
    proc = stand_in()
    watch = ray_executor._InstanceWatch({os.pidfd_open(proc.pid): "gcs_server"})
    watch.stop()  # as RayExecutor.shutdown does before Ray's processes exit on purpose
    watch.stop()
    proc.kill()
    proc.wait()
    time.sleep(0.2)
    assert reports == []
    assert not watch._thread.is_alive()


def test_a_failure_said_by_the_watch_is_not_said_again(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(failures, "said", threading.Lock())
    down = ray_executor._instance_down("raylet")
    failures.say_failure(tmp_path, down)  # the watch thread, first
    try:
        raise down  # then the main thread reaches its own handler, if the process lives that long
    except ray_executor.RayInstanceDown as exc:
        assert failures.fail(tmp_path, exc, resumable=True) == failures.EXIT_RUN_FAILED
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1, err
    assert err[0].startswith("error: run failed (RayInstanceDown: the local Ray instance stopped: its raylet")
    assert err[0].endswith(f"continue with: python main.py --resume {tmp_path}")
    assert "RayInstanceDown" in (tmp_path / "error.log").read_text()  # the traceback is still kept


def test_without_a_watch_the_main_thread_says_the_failure(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(failures, "said", threading.Lock())
    try:
        raise RuntimeError("boom")
    except RuntimeError as exc:
        failures.fail(tmp_path, exc, resumable=False)
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error: run failed (RuntimeError: boom); traceback in ")
