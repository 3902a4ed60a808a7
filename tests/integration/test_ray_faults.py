"""Faults on real Ray actors: a rollout worker SIGKILLed mid-generation is replaced and its work
redone; a lost learner or PolicyServer stops the run with one line that says how to resume, and
the resumed run finishes; stateful components sit on the driver's node.

Every test runs a tiny rock-paper-scissors league in this process on the session's Ray instance.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from light_league.cli import main
from light_league.config import load_config
from light_league.execution.base import Handle
from light_league.run_dir import RunDir
from light_league.runner import Runner
from light_league.tracking.report import load_payoff_snapshot

pytestmark = pytest.mark.ray

ROOT = Path(__file__).resolve().parents[2]
RPS = str(ROOT / "expr_configs" / "rps_tiny.yaml")
EPISODES = 64
SETTINGS = [
    "execution.backend=ray",
    "execution.num_workers=2",
    "execution.worker_cpus=0.25",
    "stop.max_generations=2",
    "scheduler.steps_per_generation=1024",
    f"evaluation.episodes_per_pair={EPISODES}",
]
#: the main agent alone, one learner: every Ray actor is a process start (about 3 s on a 2-core
#: machine, twice per test with the resume), and the faults below are the actors', not the roles'
ONE_LEARNER = ["scheduler.main_exploiters=0", "scheduler.league_exploiters=0"]
#: one rollout worker too, where no worker is killed
ONE_OF_EACH = [*ONE_LEARNER, "execution.num_workers=1"]


def pid_of(handle: Handle) -> int:
    import ray

    return int(ray.get(handle.target.__ray_call__.remote(lambda _self: os.getpid())))


def records(run_dir: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (run_dir / "generations.jsonl").read_text().splitlines()]


def generations(run_dir: Path) -> list[int]:
    return [record["generation"] for record in records(run_dir)]


def placements(run_dir: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (run_dir / "placement.jsonl").read_text().splitlines()]


def off_diagonal_games(run_dir: Path, generation: int) -> np.ndarray:
    games = load_payoff_snapshot(run_dir, generation).games
    return games[~np.eye(len(games), dtype=bool)]


@pytest.mark.parametrize(
    "overlap", [False, pytest.param(True, marks=pytest.mark.slow)], ids=["sequential", "overlap"]
)
def test_a_worker_killed_mid_generation_is_replaced_and_its_work_redone(
    tmp_path: Path, ray_session: None, overlap: bool
) -> None:
    run_dir = tmp_path / "run"
    # with overlap the killed call is a round playing while the learners update
    settings = [*SETTINGS, *ONE_LEARNER, f"execution.overlap={str(overlap).lower()}"]
    runner = Runner.build(load_config(RPS, settings), RunDir(run_dir), resume=False, argv=[])
    rollout = runner.training.rollout
    original = list(rollout.workers)
    pids = {h.name: pid_of(h) for h in original}
    # SIGKILL worker 0 right after its first training call of generation 1 is sent and worker 1
    # right after its first evaluation call of generation 1: both calls are in flight
    victims = {("run", original[0].name), ("evaluate", original[1].name)}
    submit = runner.executor.submit

    def submit_then_kill(handle: Handle, method: str, *args: Any, **kwargs: Any) -> Any:
        future = submit(handle, method, *args, **kwargs)
        if (
            runner.agents.generation == 1
            and any(handle is h for h in original)
            and (method, handle.name) in victims
        ):
            victims.discard((method, handle.name))
            os.kill(pids[handle.name], signal.SIGKILL)
        return future

    runner.executor.submit = submit_then_kill  # type: ignore[method-assign]
    try:
        runner.run()
    finally:
        runner.close()

    assert victims == set()  # both kills happened
    assert rollout.restarts == 2
    assert generations(run_dir) == [0, 1]  # the budget is spent
    assert all(new is not old for new, old in zip(rollout.workers, original))
    # evaluation complete: every pair of members has exactly its quota (rps has symmetric
    # seats: one seat order per pair) — no share lost, none played twice
    cells = off_diagonal_games(run_dir, 1)
    assert cells.size >= 2 and set(cells.tolist()) == {EPISODES}
    eval_games = sum(record["games"].get("eval", 0) for record in records(run_dir))
    assert eval_games == cells.sum() // 2
    replaced = [p["component"] for p in placements(run_dir) if p["event"] == "replaced"]
    assert sorted(replaced) == sorted(pids)


def episode_server(runner: Runner) -> Handle:
    """The EpisodeServer's actor, from the client every rollout worker was built with."""
    client = runner.training.rollout.workers[0].kwargs["episode_server"]
    return Handle("episode_server", client._actor, object, (), {})


def kill_as_generation_1_starts(target: Callable[[Runner], Handle]) -> Callable[[Runner], dict[str, float]]:
    """A ``Runner.run_generation`` that SIGKILLs ``target(runner)``'s process as generation 1 starts."""
    generation = Runner.run_generation

    def run_generation(self: Runner) -> dict[str, float]:
        if self.agents.generation == 1:
            os.kill(pid_of(target(self)), signal.SIGKILL)
        return generation(self)

    return run_generation


@pytest.mark.parametrize(
    ("target", "extra"),
    [
        pytest.param(lambda r: r.policy_server, "", id="policy_server"),
        # the workers send it their trajectories without waiting; the driver waits for them
        pytest.param(episode_server, "", id="episode_server"),
        # the same with overlap: trajectories of a round in flight while the learners pull
        pytest.param(
            episode_server, "execution.overlap=true", id="episode_server-overlap", marks=pytest.mark.slow
        ),
        pytest.param(lambda r: next(iter(r.learners.values())), "", id="learner", marks=pytest.mark.slow),
    ],
)
def test_a_lost_learner_or_server_fails_the_run_cleanly_and_resume_finishes_it(
    tmp_path: Path,
    ray_session: None,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    target: Callable[[Runner], Handle],
    extra: str,
) -> None:
    run_dir = tmp_path / "run"
    with monkeypatch.context() as patch:
        patch.setattr(Runner, "run_generation", kill_as_generation_1_starts(target))
        status = main(
            ["--config", RPS, "--run-dir", str(run_dir), *SETTINGS, *ONE_OF_EACH, *filter(None, [extra])]
        )
    err = capsys.readouterr().err.strip().splitlines()

    assert status == 1
    errors = [line for line in err if line.startswith("error")]
    assert len(errors) == 1 and errors[0] == err[-1]  # one line, the last one (after progress lines)
    assert errors[0].startswith("error: run failed") and "died" in errors[0]
    assert errors[0].endswith(f"continue with: python main.py --resume {run_dir}")
    assert generations(run_dir) == [0]  # the completed generation is kept
    assert json.loads((run_dir / "checkpoint" / "latest.json").read_text())["generation"] == 1
    assert "Traceback" in (run_dir / "error.log").read_text()

    assert main(["--resume", str(run_dir)]) == 0
    assert generations(run_dir) == [0, 1]


def test_stateful_components_live_on_the_driver_node(tmp_path: Path, ray_session: None) -> None:
    import ray

    run_dir = tmp_path / "run"
    runner = Runner.build(load_config(RPS, [*SETTINGS, *ONE_LEARNER]), RunDir(run_dir), resume=False, argv=[])
    try:
        driver = ray.get_runtime_context().get_node_id()
        assert runner.executor.node_id == driver
        pinned = ["policy_server", "episode_server", *(f"learner_{lid}" for lid in runner.learners)]
        workers = [w.name for w in runner.training.rollout.workers]
        records = placements(run_dir)
        assert sorted(r["component"] for r in records) == sorted(pinned + workers)
        assert all(r["event"] == "start" and r["driver_node"] == driver for r in records)
        assert {r["node"] for r in records if r["component"] in pinned} == {driver}
        # what Ray reports now agrees with the record
        handles = [runner.policy_server, *runner.learners.values(), *runner.training.rollout.workers]
        assert runner.executor.placement(handles) == {
            r["component"]: r["node"] for r in records if r["component"] != "episode_server"
        }
    finally:
        runner.close()


def test_an_unreachable_cluster_address_fails_at_once_with_one_line(tmp_path: Path) -> None:
    with socket.socket() as sock:  # a port nothing listens on once closed
        sock.bind(("127.0.0.1", 0))
        address = f"127.0.0.1:{sock.getsockname()[1]}"
    proc = subprocess.run(
        [sys.executable, "main.py", "--config", RPS, "--run-dir", str(tmp_path / "run"), *SETTINGS]
        + [f"execution.address={address}"],
        cwd=ROOT,
        env={**os.environ, "RAY_AUTH_MODE": "disabled"},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 2
    err = proc.stderr.strip().splitlines()
    assert len(err) == 1 and err[0].startswith(f"error: execution.address={address!r}: cannot join")
    assert "ray start --head" in err[0]


def start_long_ray_run(run_dir: Path, *extra: str) -> subprocess.Popen[str]:
    """``main.py`` on the tiny config with Ray and no generation limit, stderr captured."""
    return subprocess.Popen(
        [sys.executable, "main.py", "--config", RPS, "--run-dir", str(run_dir), *SETTINGS]
        + ["stop.max_generations=1000", "execution.num_cpus=2", *extra],
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )


def wait_for_first_generation(proc: subprocess.Popen[str], run_dir: Path, timeout: float = 180.0) -> None:
    deadline = time.monotonic() + timeout
    log = run_dir / "generations.jsonl"
    while not (log.exists() and log.read_text()):
        assert proc.poll() is None and time.monotonic() < deadline, "the run did not complete a generation"
        time.sleep(0.2)


@pytest.mark.slow
def test_a_dead_local_raylet_stops_the_run_within_seconds(tmp_path: Path) -> None:
    import psutil

    run_dir = tmp_path / "run"
    proc = start_long_ray_run(run_dir)
    try:
        wait_for_first_generation(proc, run_dir)
        raylets = [p for p in psutil.Process(proc.pid).children() if "raylet" in p.name()]
        assert len(raylets) == 1, [p.name() for p in psutil.Process(proc.pid).children()]
        raylets[0].kill()
        killed = time.monotonic()
        _, err = proc.communicate(timeout=120)  # before: a hang of ~6 minutes, then wrong advice
        waited = time.monotonic() - killed
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 1
    lines = [line for line in err.strip().splitlines() if line.startswith("error")]
    assert len(lines) == 1 and "RayInstanceDown" in lines[0] and "raylet" in lines[0], err[-2000:]
    assert lines[0].endswith(f"continue with: python main.py --resume {run_dir}")
    assert waited < 30, waited


@pytest.mark.slow
def test_a_dead_policy_server_prints_one_error_line_and_nothing_after(tmp_path: Path) -> None:
    import psutil

    run_dir = tmp_path / "run"
    proc = start_long_ray_run(run_dir, "logging.console=quiet")
    try:
        wait_for_first_generation(proc, run_dir)
        servers = [
            p
            for p in psutil.Process(proc.pid).children(recursive=True)
            if "PolicyServer" in " ".join(p.cmdline() or [p.name()])
        ]
        assert len(servers) == 1
        servers[0].kill()
        _, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 1
    lines = [
        line
        for line in err.strip().splitlines()
        if line.strip() and not line.startswith(("run directory ", "generation ", "Token authentication"))
    ]  # the console's first line and the generations' lines come before the failure
    assert len(lines) == 1 and lines[0].startswith("error: run failed"), lines[:40]


@pytest.mark.slow
def test_ray_helpers_do_not_outlive_a_sigkilled_driver(tmp_path: Path) -> None:
    import psutil

    run_dir = tmp_path / "run"
    proc = subprocess.Popen(
        [sys.executable, "main.py", "--config", RPS, "--run-dir", str(run_dir), *SETTINGS]
        + ["stop.max_generations=1000", "execution.num_cpus=2", "logging.console=quiet"],
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 180
        while not ((run_dir / "generations.jsonl").exists() and (run_dir / "generations.jsonl").read_text()):
            assert proc.poll() is None and time.monotonic() < deadline, (
                "the run did not complete a generation"
            )
            time.sleep(0.2)
        ray_procs = [p for p in psutil.Process(proc.pid).children(recursive=True) if "reaper" not in p.name()]
        assert any("Agent" in " ".join(p.cmdline()) for p in ray_procs), [p.name() for p in ray_procs]
    finally:
        proc.kill()
        proc.wait()
    killed = time.monotonic()
    while time.monotonic() - killed < 20 and any(
        p.is_running() and p.status() != "zombie" for p in ray_procs
    ):
        time.sleep(0.5)
    alive = [p for p in ray_procs if p.is_running() and p.status() != "zombie"]
    assert not alive, [" ".join(p.cmdline())[:80] for p in alive]  # before: two agents for 60-120 s
