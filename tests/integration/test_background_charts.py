"""A run killed while its payoff charts are being drawn loses no logged generation.

``main.py`` runs ``psro_kuhn.yaml``; its chart process (a child of the run) is stopped with
SIGSTOP, so every chart from then on is "being drawn" forever; the run is killed with SIGKILL a
few generations later. Every generation in ``generations.jsonl`` must have its scalars and payoff
table in the TensorBoard files, and the resumed run draws every lost image again: at its end every
generation has its images.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from tensorboard.backend.event_processing.event_accumulator import (
    IMAGES,
    SCALARS,
    TENSORS,
    EventAccumulator,
)

from light_league.cli import main
from light_league.tracking.logger import META_STRATEGY_TAG, PAYOFF_HEATMAP_TAG, PAYOFF_TABLE_TAG

ROOT = Path(__file__).resolve().parents[2]
CHILD_MODULE = b"light_league.tracking.chart_process"

pytestmark = pytest.mark.skipif(not Path("/proc/self/task").exists(), reason="reads /proc (Linux)")


def records(run_dir: Path) -> list[dict]:
    path = run_dir / "generations.jsonl"
    out = []
    for line in path.read_text().splitlines() if path.exists() else []:
        try:
            out.append(json.loads(line))
        except json.JSONDecodeError:
            break  # a torn last line while the writer runs
    return out


def chart_child(pid: int) -> int | None:
    """The pid of ``pid``'s chart process, or None while there is none."""
    children: list[int] = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            children += [int(c) for c in (task / "children").read_text().split()]
        except OSError:
            continue
    for child in children:
        try:
            if CHILD_MODULE in Path(f"/proc/{child}/cmdline").read_bytes():
                return child
        except OSError:
            continue
    return None


def wait_for(predicate, proc: subprocess.Popen[bytes], timeout: float = 240.0):  # type: ignore[no-untyped-def]
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        value = predicate()
        if value:
            return value
        if proc.poll() is not None:
            raise AssertionError(f"run ended early: {proc.stderr.read().decode() if proc.stderr else ''}")
        time.sleep(0.02)
    raise AssertionError("timed out waiting for the run")


def events(run_dir: Path) -> EventAccumulator:
    acc = EventAccumulator(str(run_dir / "tensorboard"), size_guidance={SCALARS: 0, IMAGES: 0, TENSORS: 0})
    acc.Reload()
    return acc


def test_a_kill_while_charts_are_drawn_loses_no_logged_generation(tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    stopped_at = 0
    proc = subprocess.Popen(
        [
            sys.executable,
            "main.py",
            "--config",
            "expr_configs/psro_kuhn.yaml",
            "--run-dir",
            str(run_dir),
            "--quiet",
            "stop.max_generations=400",  # the run must outlast the chart child's start (~2.4 s)
            "stop.target_nash_conv=null",
        ],
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    child = None
    try:
        child = wait_for(lambda: chart_child(proc.pid), proc)
        os.kill(child, signal.SIGSTOP)  # from here on every chart is "being drawn"
        stopped_at = len(records(run_dir))
        wait_for(lambda: len(records(run_dir)) >= stopped_at + 3, proc)
    finally:
        proc.kill()
        proc.wait()
        if child is not None:
            os.kill(child, signal.SIGKILL)
    finished = [r["generation"] for r in records(run_dir)]
    assert finished == list(range(len(finished))) and len(finished) >= stopped_at + 3
    acc = events(run_dir)
    for key in ("league/meta_entropy", "league/population_size", "timing/evaluate_s"):
        assert [e.step for e in acc.Scalars(key)][: len(finished)] == finished, key
    tables = [e.step for e in acc.Tensors(f"{PAYOFF_TABLE_TAG}/text_summary")]
    assert tables[: len(finished)] == finished
    drawn = PAYOFF_HEATMAP_TAG in acc.Tags()["images"]
    images = {e.step for e in acc.Images(PAYOFF_HEATMAP_TAG)} if drawn else set()
    resume_at = json.loads((run_dir / "checkpoint" / "latest.json").read_text())["generation"]
    last = resume_at - 1  # the newest checkpointed generation (the resume starts after it)
    assert last > stopped_at and last not in images, "its images were lost with the stopped child"

    end = len(finished) + 1
    assert main(["--resume", str(run_dir), "--quiet", f"stop.max_generations={end}"]) == 0
    acc = events(run_dir)
    assert [r["generation"] for r in records(run_dir)] == list(range(end))
    assert last in {e.step for e in acc.Images(PAYOFF_HEATMAP_TAG)}, "the resume draws them again"
    assert last in {e.step for e in acc.Images(META_STRATEGY_TAG)}
    assert {e.step for e in acc.Images(PAYOFF_HEATMAP_TAG)} == set(range(end)), "every generation's images"
    assert {e.step for e in acc.Images(META_STRATEGY_TAG)} == set(range(end))
    steps = [e.step for e in acc.Scalars("league/meta_entropy")]
    assert set(steps) == set(range(end))


@pytest.mark.parametrize("presses", [1, pytest.param(2, marks=pytest.mark.slow)], ids=["once", "twice"])
def test_ctrl_c_in_a_terminal_is_one_line_with_the_chart_process_running(
    presses: int, tmp_path: Path
) -> None:
    """A terminal sends Ctrl-C's SIGINT to its whole foreground process group: the run and, before,
    its chart process, which printed its own traceback (and a second Ctrl-C one of the chart process
    that closing restarted). The run says one line and its chart process ends with it."""
    run_dir = tmp_path / "run"
    proc = subprocess.Popen(
        [sys.executable, "main.py", "--config", "expr_configs/rps_tiny.yaml", "--run-dir", str(run_dir)]
        + ["--quiet", "stop.max_generations=100000", "logging.console=quiet"],
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        start_new_session=True,  # its own process group, as a shell gives a foreground job
    )
    try:
        child = wait_for(lambda: chart_child(proc.pid), proc)
        time.sleep(0.5)  # the child is importing or drawing
        for _ in range(presses):
            os.killpg(proc.pid, signal.SIGINT)
            time.sleep(0.2)
        _, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    lines = [
        line
        for line in err.decode().splitlines()
        if line.strip() and not line.startswith(("generation ", "run directory "))
    ]
    assert proc.returncode == 130, lines
    assert lines == [
        f"interrupted; completed generations are kept, continue with: python main.py --resume {run_dir}"
    ], lines
    assert (
        not Path(f"/proc/{child}").exists() or b"zombie" in Path(f"/proc/{child}/status").read_bytes().lower()
    )
