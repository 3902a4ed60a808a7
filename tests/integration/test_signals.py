"""Signals end a run like Ctrl-C, and a stopped run is not timed out (issue 56).

SIGTERM (what ``kill``, ``timeout``, batch schedulers and container runtimes send) and SIGHUP
(the terminal closed) print the one "interrupted ... --resume" line, close the run in order and
leave it resumable, on both backends; on Ray, SIGTERM aborted with Ray's C++ signal dump (exit
134) and SIGHUP ended a run without a word. A process stopped (Ctrl-Z) for longer than
``execution.call_timeout_s`` goes on when continued: call timeouts count only the time it runs.
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

from light_league.cli import main
from light_league.execution import CallWatch
from light_league.execution.local_executor import LocalExecutor

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]
RPS = str(ROOT / "expr_configs" / "rps_tiny.yaml")
KILLER = str(Path(__file__).with_name("killpoint_main.py"))
#: no TensorBoard: its chart process's close is test_background_charts' (Ctrl-C); these test the signals
SMALL = [
    "scheduler.steps_per_generation=1024",
    "evaluation.episodes_per_pair=16",
    "logging.tensorboard=false",
    "--quiet",
]
RAY = [
    "execution.backend=ray",
    "execution.num_workers=1",
    "execution.worker_cpus=0.25",
    "execution.num_cpus=2",
]


def completed(run_dir: Path) -> int:
    path = run_dir / "generations.jsonl"
    return len(path.read_text().splitlines()) if path.exists() else 0


def start(run_dir: Path, *extra: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "main.py", "--config", RPS, "--run-dir", str(run_dir), *SMALL]
        + ["stop.max_generations=100000", *extra],
        cwd=ROOT,
        env={**os.environ, "RAY_AUTH_MODE": "disabled"},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )


def wait_for_generations(proc: subprocess.Popen[str], run_dir: Path, count: int) -> None:
    deadline = time.monotonic() + 180
    while completed(run_dir) < count:
        assert proc.poll() is None and time.monotonic() < deadline, "the run did not complete a generation"
        time.sleep(0.2)


def stop_with(proc: subprocess.Popen[str], signum: int) -> tuple[int, list[str]]:
    proc.send_signal(signum)
    try:
        _, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    lines = [
        line
        for line in err.splitlines()
        if line.strip() and not line.startswith(("generation ", "run directory ", "Token authentication"))
    ]
    return proc.returncode, lines


@pytest.mark.parametrize(
    ("signame", "backend"),
    [
        ("SIGTERM", "local"),
        ("SIGHUP", "local"),
        pytest.param("SIGTERM", "ray", marks=pytest.mark.ray),
        pytest.param("SIGHUP", "ray", marks=[pytest.mark.ray, pytest.mark.slow]),
    ],
)
def test_sigterm_and_sighup_end_a_run_like_ctrl_c_and_it_resumes(
    signame: str, backend: str, tmp_path: Path
) -> None:
    run_dir = tmp_path / "run"
    proc = start(run_dir, *(RAY if backend == "ray" else []))
    wait_for_generations(proc, run_dir, 1)
    code, lines = stop_with(proc, getattr(signal, signame))
    assert code == 130, (code, lines[-20:])
    assert lines == [
        f"interrupted; completed generations are kept, continue with: python main.py --resume {run_dir}"
    ], lines[-20:]
    assert not (run_dir / ".lock").exists()  # the lock released: closed in order
    done = completed(run_dir)
    resumed = ["--resume", str(run_dir), "execution.backend=local", f"stop.max_generations={done + 1}"]
    assert main(resumed) == 0
    assert [
        json.loads(line)["generation"] for line in (run_dir / "generations.jsonl").read_text().splitlines()
    ] == list(range(done + 1))


def test_a_signal_during_a_checkpoint_commit_waits_for_the_commit(tmp_path: Path) -> None:
    """SIGTERM at the first file write of generation 1's checkpoint: the commit, and the removal of
    generation 0's checkpoint, finish; then the run stops as interrupted. Before, the interrupt was
    raised where it landed: mid-commit (generation 1 lost), or inside ``shutil.rmtree`` of the old
    checkpoint, where it became ``OSError: [Errno 9]`` and exit 1."""
    run_dir = tmp_path / "run"
    assert main(["--config", RPS, "--run-dir", str(run_dir), *SMALL, "stop.max_generations=1"]) == 0
    proc = subprocess.run(
        [sys.executable, KILLER, "1", "--resume", str(run_dir), "stop.max_generations=3", "--quiet"],
        cwd=ROOT,
        env={**os.environ, "KILLPOINT_IN": "_commit", "KILLPOINT_SIGNAL": "TERM"},
        capture_output=True,
        text=True,
        timeout=240,
    )
    lines = [
        line
        for line in proc.stderr.splitlines()
        if line.strip() and not line.startswith(("REPLACES", "run directory ", "generation "))
    ]
    assert proc.returncode == 130, (proc.returncode, lines[-20:])
    assert len(lines) == 1 and lines[0].startswith("interrupted; completed generations are kept"), lines[-20:]
    latest = json.loads((run_dir / "checkpoint" / "latest.json").read_text())
    assert (latest["generation"], latest["dir"]) == (2, "gen_0001")  # generation 1's commit whole
    assert [p.name for p in (run_dir / "checkpoint").iterdir() if p.is_dir()] == ["gen_0001"]
    assert completed(run_dir) == 2
    assert main(["--resume", str(run_dir), "stop.max_generations=3", "--quiet"]) == 0
    assert [
        json.loads(line)["generation"] for line in (run_dir / "generations.jsonl").read_text().splitlines()
    ] == [0, 1, 2]


class Sleeper:
    """A component whose call runs ``seconds`` and, halfway, stops this process (as Ctrl-Z does)
    for ``stopped_s``; a child process continues it."""

    def run(self, seconds: float, stopped_s: float) -> str:
        time.sleep(seconds / 2)
        subprocess.Popen(["sh", "-c", f"sleep {stopped_s}; kill -CONT {os.getpid()}"])
        # SIGSTOP stops the process as Ctrl-Z (SIGTSTP) does, also where SIGTSTP is discarded: in an
        # orphaned process group, e.g. a test run started in the background of a script
        os.kill(os.getpid(), signal.SIGSTOP)
        time.sleep(seconds / 2)
        return "done"


def test_a_call_of_a_process_stopped_longer_than_the_call_timeout_goes_on_local() -> None:
    executor = LocalExecutor(watch=CallWatch(timeout_s=1.5))
    try:
        sleeper = executor.create(Sleeper, name="sleeper")
        start_ = time.monotonic()
        assert executor.call(sleeper, "run", 0.4, 3.0) == "done"  # before: CallTimeout
        assert time.monotonic() - start_ >= 3.0
    finally:
        executor.shutdown()


@pytest.mark.ray
def test_a_call_of_a_process_stopped_longer_than_the_call_timeout_goes_on_ray(ray_session: None) -> None:
    from light_league.execution.ray_executor import RayExecutor
    from tests.integration.slow_component import Waiter

    executor = RayExecutor(watch=CallWatch(timeout_s=1.5))
    try:
        waiter = executor.create(Waiter, name="waiter")
        assert executor.call(waiter, "ready") == "up"
        future = executor.submit(waiter, "wait", 0.6)
        subprocess.Popen(["sh", "-c", f"sleep 3; kill -CONT {os.getpid()}"])
        os.kill(os.getpid(), signal.SIGSTOP)  # the driver stopped while its call runs (as by Ctrl-Z)
        assert future.result() == "waited"  # before: CallTimeout the moment it was continued
    finally:
        executor.shutdown()
