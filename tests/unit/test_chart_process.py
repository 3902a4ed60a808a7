"""Payoff charts drawn in a child process: the caller never waits, nothing logged is lost.

The child is a real process; tests stop it (SIGSTOP) to stand for a chart that takes forever and
kill it (SIGKILL) to stand for a crash.
"""

from __future__ import annotations

import io
import os
import signal
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest
from PIL import Image
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator
from test_payoff_render import synthetic_snapshot
from test_tracking_tensorboard import STORE_EVERYTHING, TEXT_SUFFIX, log_generations, read_events

from light_league.tracking.chart_process import ChartRenderer, RenderedCharts, draw_charts
from light_league.tracking.payoff_render import meta_strategy_bar_png, payoff_heatmap_png
from light_league.tracking.report import save_payoff_snapshot
from light_league.tracking.tensorboard_logger import CHARTS_WRITTEN_FILE, TensorBoardLogger

pytestmark = pytest.mark.skipif(not hasattr(signal, "SIGSTOP"), reason="needs POSIX signals")


class Collect:
    """A ``deliver`` callback that keeps what it is given."""

    def __init__(self) -> None:
        self.got: list[RenderedCharts] = []
        self.lock = threading.Lock()

    def __call__(self, rendered: RenderedCharts) -> None:
        with self.lock:
            self.got.append(rendered)

    @property
    def generations(self) -> list[int]:
        with self.lock:
            return [r.generation for r in self.got]


def wait_until(predicate, timeout: float = 60.0) -> None:  # type: ignore[no-untyped-def]
    end = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > end:
            raise AssertionError("timed out")
        time.sleep(0.01)


def decode(png: bytes) -> np.ndarray:
    return np.asarray(Image.open(io.BytesIO(png)).convert("RGB"))


@pytest.mark.integration
def test_charts_from_the_child_are_the_charts_drawn_in_process() -> None:
    snapshot = synthetic_snapshot(4, n=6)
    collect = Collect()
    renderer = ChartRenderer(collect, startup_cpu_s=0.0)
    renderer.submit(snapshot)
    assert renderer.close()
    assert not renderer.in_process and collect.generations == [4]
    charts = collect.got[0].charts
    np.testing.assert_array_equal(decode(charts["payoff_heatmap"].png), payoff_heatmap_png(snapshot))
    np.testing.assert_array_equal(decode(charts["meta_strategy"].png), meta_strategy_bar_png(snapshot))
    heatmap = charts["payoff_heatmap"]
    assert (heatmap.height, heatmap.width) == payoff_heatmap_png(snapshot).shape[:2]


@pytest.mark.integration
def test_submit_returns_while_the_child_is_stuck_and_every_chart_is_drawn_in_order() -> None:
    collect = Collect()
    renderer = ChartRenderer(collect, max_pending=2, startup_cpu_s=0.0)
    renderer.submit(synthetic_snapshot(0))
    pid = renderer.child_pid
    assert pid is not None
    os.kill(pid, signal.SIGSTOP)  # every chart from now on takes "forever"
    try:
        # a submit that waited for the child would wait until SIGCONT: the 60 s only bound a hang
        submits = threading.Thread(
            target=lambda: [renderer.submit(synthetic_snapshot(g)) for g in range(1, 10)]
        )
        submits.start()
        submits.join(timeout=60)
        blocked = submits.is_alive()
    finally:
        os.kill(pid, signal.SIGCONT)
    assert not blocked, "submit waited for a stopped child"
    assert renderer.close()
    assert collect.generations == list(range(10))  # every generation, in order, none skipped
    assert renderer.failed == [] and renderer.drawn == 10


@pytest.mark.integration
def test_the_child_rests_to_stay_within_its_cpu_budget() -> None:
    """While the child is over its budget, snapshots wait (in order) and close draws them all."""
    collect = Collect()
    # a millionth of a core: the child rests a million times its CPU time (days), so nothing is
    # drawn during the second below on any machine
    renderer = ChartRenderer(collect, busy_fraction=1e-6, startup_cpu_s=0.0)
    renderer.submit(synthetic_snapshot(0))
    assert renderer.wait() and collect.generations == [0]  # wait() draws at once, budget or not
    for g in range(1, 6):
        renderer.submit(synthetic_snapshot(g))
    time.sleep(1.0)
    assert collect.generations == [0]  # resting: nothing more drawn yet
    assert renderer.close() and collect.generations == [0, 1, 2, 3, 4, 5]


@pytest.mark.integration
def test_a_killed_child_is_replaced_and_the_charts_it_held_are_drawn_again() -> None:
    collect = Collect()
    renderer = ChartRenderer(collect, startup_cpu_s=0.0)
    renderer.submit(synthetic_snapshot(0))
    first = renderer.child_pid
    assert first is not None
    os.kill(first, signal.SIGSTOP)
    renderer.submit(synthetic_snapshot(1))
    os.kill(first, signal.SIGKILL)  # a crash with generation 0 (maybe) and 1 unanswered
    wait_until(lambda: renderer.child_pid is None)
    renderer.submit(synthetic_snapshot(2))
    assert renderer.close()
    assert renderer.child_pid is None and not renderer.in_process
    assert collect.generations[-1] == 2
    assert sorted(set(collect.generations)) == [0, 1, 2] and renderer.failed == []


@pytest.mark.integration
def test_close_draws_what_waits_without_resting() -> None:
    collect = Collect()
    renderer = ChartRenderer(collect, busy_fraction=1e-6, startup_cpu_s=0.0)  # rests days, as above
    renderer.submit(synthetic_snapshot(0))
    assert renderer.wait()
    renderer.submit(synthetic_snapshot(1))
    assert renderer.close(timeout_s=60)  # a close that rested would give up at its timeout
    assert collect.generations == [0, 1]


@pytest.mark.integration
def test_charts_are_drawn_in_process_when_no_child_can_start(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "executable", "/nonexistent/python")
    collect = Collect()
    renderer = ChartRenderer(collect, startup_cpu_s=0.0)
    renderer.submit(synthetic_snapshot(0))
    assert renderer.in_process and collect.generations == [0]
    renderer.submit(synthetic_snapshot(1))
    assert renderer.close() and collect.generations == [0, 1]


@pytest.mark.integration
def test_close_gives_up_on_a_stuck_child_after_its_timeout() -> None:
    collect = Collect()
    renderer = ChartRenderer(collect, startup_cpu_s=0.0)
    renderer.submit(synthetic_snapshot(0))
    pid = renderer.child_pid
    assert pid is not None
    os.kill(pid, signal.SIGSTOP)
    renderer.submit(synthetic_snapshot(1))
    started = time.monotonic()
    assert not renderer.close(timeout_s=0.5)
    assert time.monotonic() - started < 60  # not the default 300 s: only a hang fails this
    assert 1 in renderer.failed
    with pytest.raises(ProcessLookupError):  # close killed it
        os.kill(pid, 0)


@pytest.mark.integration
def test_an_interrupted_run_waits_seconds_for_its_charts_and_says_nothing_more(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """Ctrl-C: the charts still being drawn get ``INTERRUPTED_CLOSE_S``, then are skipped in the debug
    log (the run has said its one line); close then waits for nothing."""
    monkeypatch.setattr("light_league.tracking.tensorboard_logger.INTERRUPTED_CLOSE_S", 0.5)
    logger = TensorBoardLogger(tmp_path / "tensorboard")
    snapshots = [synthetic_snapshot(g) for g in range(3)]
    for snapshot in snapshots:
        save_payoff_snapshot(tmp_path, snapshot)
    log_generations(logger, snapshots[:1])
    charts = logger.charts
    assert charts is not None and charts.child_pid is not None
    os.kill(charts.child_pid, signal.SIGSTOP)  # a chart that would take minutes on a loaded machine
    log_generations(logger, snapshots[1:], every_image=False)
    started = time.monotonic()
    with caplog.at_level("DEBUG", logger="light_league.tracking.chart_process"):
        logger.interrupt()
        logger.close()
    assert time.monotonic() - started < 60  # not close's 300 s: only a hang fails this
    assert charts.failed  # skipped ...
    skipped = [r for r in caplog.records if "still pending" in r.getMessage()]
    assert skipped and all(r.levelname == "DEBUG" for r in skipped)  # ... and not said on the console


@pytest.mark.integration
def test_stuck_charts_hold_back_no_scalar_or_table(tmp_path: Path) -> None:
    """A kill while the images are being drawn loses no generation's scalars or table."""
    logger = TensorBoardLogger(tmp_path / "tensorboard")
    snapshots = [synthetic_snapshot(g) for g in range(4)]
    for snapshot in snapshots:
        save_payoff_snapshot(tmp_path, snapshot)  # as the runner does before logging
    log_generations(logger, snapshots[:1])
    charts = logger.charts
    assert charts is not None and charts.child_pid is not None
    pid = charts.child_pid
    os.kill(pid, signal.SIGSTOP)
    try:
        log_generations(logger, snapshots[1:], every_image=False)
        logger.flush()  # what the runner does at the end of every generation
        acc = read_events(tmp_path / "tensorboard")
        assert [e.step for e in acc.Scalars("league/meta_entropy")] == [0, 1, 2, 3]
        assert [e.step for e in acc.Tensors("league/payoff_table" + TEXT_SUFFIX)] == [0, 1, 2, 3]
        assert [e.step for e in acc.Scalars(f"rating/{snapshots[3].agent_ids[-1]}")] == [3]
        drawn = acc.Tags()["images"] and [e.step for e in acc.Images("league/payoff_heatmap")]
        assert not drawn or 3 not in drawn
    finally:
        os.kill(pid, signal.SIGKILL)  # the "kill": no close, the child's work is lost
    logger._writer.close()
    written_file = tmp_path / "tensorboard" / CHARTS_WRITTEN_FILE
    assert "3" not in (written_file.read_text().split() if written_file.exists() else [])
    # A resume at generation 4 draws the images of generations 1-3 again (lost with the child).
    resumed = TensorBoardLogger(tmp_path / "tensorboard", purge_step=4)
    resumed.close()
    acc = EventAccumulator(str(tmp_path / "tensorboard"), size_guidance=STORE_EVERYTHING)
    acc.Reload()
    assert {0, 1, 2, 3} <= {e.step for e in acc.Images("league/payoff_heatmap")}
    assert {0, 1, 2, 3} <= {e.step for e in acc.Images("league/meta_strategy")}


@pytest.mark.integration
def test_resume_draws_nothing_again_when_the_images_were_written(tmp_path: Path) -> None:
    logger = TensorBoardLogger(tmp_path / "tensorboard")
    log_generations(logger, [synthetic_snapshot(0), synthetic_snapshot(1)])
    logger.close()
    resumed = TensorBoardLogger(tmp_path / "tensorboard", purge_step=2)
    resumed.close()
    acc = read_events(tmp_path / "tensorboard")
    assert [e.step for e in acc.Images("league/payoff_heatmap")] == [0, 1]


@pytest.mark.integration
def test_the_child_starts_once_the_budget_affords_its_start() -> None:
    collect = Collect()
    renderer = ChartRenderer(collect, busy_fraction=0.25, startup_cpu_s=0.5)  # 2 s after creation
    renderer.start()
    renderer.submit(synthetic_snapshot(0))
    assert renderer.child_pid is None
    wait_until(lambda: renderer.child_pid is not None, timeout=30)
    wait_until(lambda: collect.generations == [0], timeout=60)  # drawn without wait() or close()
    assert renderer.close()


@pytest.mark.integration
def test_wait_starts_the_child_at_once() -> None:
    collect = Collect()
    renderer = ChartRenderer(collect, startup_cpu_s=100.0)  # would start after 400 s
    renderer.submit(synthetic_snapshot(0))
    assert renderer.wait() and collect.generations == [0]
    assert renderer.close()


def test_draw_charts_in_process_gives_both_images() -> None:
    rendered = draw_charts(synthetic_snapshot(2, n=3))
    assert rendered.generation == 2 and set(rendered.charts) == {"payoff_heatmap", "meta_strategy"}
