"""Kill-anywhere (issue 13): SIGKILL a run at every file replace of a generation and at random
moments, resume it, and check that nothing completed was lost and nothing half-done was kept.

A base run completes generation 0 once. Each kill point copies it and resumes it to run
generation 1 in a subprocess that SIGKILLs itself just before its Nth ``os.replace`` (every
atomic write commits with one), or is SIGKILLed from outside at a random moment. A second resume (in this
process) must then finish generation 1 with exit 0, keep generation 0's games byte for byte, leave no
temp file, and report. The count of kill points is printed.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from light_league.cli import main

ROOT = Path(__file__).resolve().parents[2]
RPS = str(ROOT / "expr_configs" / "rps_tiny.yaml")
KILLER = str(Path(__file__).with_name("killpoint_main.py"))
SMALL = ["scheduler.steps_per_generation=256", "evaluation.episodes_per_pair=8", "logging.console=quiet"]
RAY = [
    "execution.backend=ray",
    "execution.num_workers=1",
    "execution.worker_cpus=0.25",
    "execution.num_cpus=2",
]

pytestmark = pytest.mark.slow


def launch(kill_at: int, argv: list[str]) -> subprocess.Popen[bytes]:
    env = {**os.environ, "RAY_USAGE_STATS_ENABLED": "0", "WANDB_MODE": "disabled"}
    return subprocess.Popen(
        [sys.executable, KILLER, str(kill_at), *argv],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )


def finish(proc: subprocess.Popen[bytes], timeout: float = 240.0) -> tuple[int, str]:
    _, err = proc.communicate(timeout=timeout)
    return proc.returncode, err.decode(errors="replace")


def replaces(err: str) -> int:
    return int(next(line for line in err.splitlines() if line.startswith("REPLACES")).split()[1])


def gen0_games(run: Path) -> list[str]:
    return [line for line in (run / "matches.jsonl").read_text().splitlines() if '"generation":0' in line]


def check_resumed(run: Path, base_games: list[str], extra: list[str], label: str) -> None:
    assert main(["--resume", str(run), "stop.max_generations=2", *extra]) == 0, label
    gens = [json.loads(line)["generation"] for line in (run / "generations.jsonl").read_text().splitlines()]
    assert gens == [0, 1], (label, gens)
    latest = json.loads((run / "checkpoint" / "latest.json").read_text())
    assert latest["generation"] == 2, label
    assert gen0_games(run) == base_games, f"{label}: generation 0's games changed"
    for line in (run / "matches.jsonl").read_text().splitlines():
        assert json.loads(line)["generation"] in (0, 1), label
    leftovers = [p for p in run.rglob(".*.tmp")]
    assert not leftovers, (label, leftovers)
    pool = {r["agent_id"] for r in json.loads((run / "pool.json").read_text())["agents"]}
    state = json.loads((run / "checkpoint" / latest["dir"] / "state.json").read_text())
    assert pool == set(state["members"]), label
    assert main(["report", str(run)]) == 0, label


def kill_anywhere(tmp_path: Path, extra: list[str], *, every_replace: bool, random_points: int) -> str:
    base = tmp_path / "base"
    code, err = finish(
        launch(0, ["--config", RPS, "--run-dir", str(base), "stop.max_generations=1", *SMALL, *extra])
    )
    assert code == 0, err[-2000:]
    (base / ".lock").unlink(missing_ok=True)
    base_games = gen0_games(base)
    assert base_games

    # how many replaces a resume that runs generation 1 makes, and how long it takes
    probe = tmp_path / "probe"
    shutil.copytree(base, probe)
    start = time.monotonic()
    code, err = finish(launch(0, ["--resume", str(probe), "stop.max_generations=2", *extra]))
    duration = time.monotonic() - start
    assert code == 0, err[-2000:]
    total = replaces(err)
    points = list(range(1, total + 1)) if every_replace else [max(1, total // 2)]

    done = 0
    for k in points:
        run = tmp_path / f"replace_{k:02d}"
        shutil.copytree(base, run)
        code, err = finish(launch(k, ["--resume", str(run), "stop.max_generations=2", *extra]))
        assert code == -signal.SIGKILL, (k, code, err[-2000:])
        check_resumed(run, base_games, extra, f"kill before replace {k}/{total}")
        shutil.rmtree(run)
        done += 1
    rng = random.Random(13)
    for i in range(random_points):
        run = tmp_path / f"random_{i}"
        shutil.copytree(base, run)
        proc = launch(0, ["--resume", str(run), "stop.max_generations=2", *extra])
        delay = rng.uniform(0.3, duration)
        try:
            proc.wait(timeout=delay)
        except subprocess.TimeoutExpired:
            proc.send_signal(signal.SIGKILL)
        finish(proc)
        check_resumed(run, base_games, extra, f"kill at {delay:.1f} s")
        shutil.rmtree(run)
        done += 1
    return f"{done} kill points ({len(points)} of {total} file replaces, {random_points} random moments)"


def test_kill_anywhere_local(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    summary = kill_anywhere(tmp_path, [], every_replace=True, random_points=3)
    with capsys.disabled():
        print(f"\nkill-anywhere, local backend: {summary}; every one resumed cleanly")


@pytest.mark.ray
def test_kill_anywhere_ray(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    summary = kill_anywhere(tmp_path, RAY, every_replace=False, random_points=1)
    with capsys.disabled():
        print(f"\nkill-anywhere, Ray backend: {summary}; every one resumed cleanly")
