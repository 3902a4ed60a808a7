"""A real two-node Ray cluster on this machine: a league run through ``main.py`` spreads its rollout
workers over both nodes, keeps servers and learners on the head node, loses the second node
mid-run (every process of that node SIGKILLed) and still finishes on the head node; a second run
joins the same cluster with ``execution.address=auto``. A second test forces the race the first
can hit by chance: a call that finished on the lost node, its result lost with that node.

Each node is one ``ray start --block`` in its own process session, so a node is torn down by
signalling exactly the processes of its session (never ``ray stop``, which would stop every Ray
instance of the machine). Nodes listen on 127.0.0.1 (Ray advertises the host's own address).
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

pytestmark = [pytest.mark.slow, pytest.mark.ray]

ROOT = Path(__file__).resolve().parents[2]
RAY = str(Path(sys.executable).with_name("ray"))
RPS = str(ROOT / "expr_configs" / "rps_tiny.yaml")
#: every process of the cluster: no auth token, no usage stats, node death noticed within ~2 s
CLUSTER_ENV = {
    "RAY_AUTH_MODE": "disabled",
    "RAY_USAGE_STATS_ENABLED": "0",
    "RAY_health_check_initial_delay_ms": "1000",
    "RAY_health_check_period_ms": "500",
    "RAY_health_check_timeout_ms": "1000",
    "RAY_health_check_failure_threshold": "3",
}
STARTED = "Ray runtime started."


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def session_pids(sid: int) -> list[int]:
    """Live (non-zombie) processes of session ``sid``."""
    pids = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
            if os.getsid(int(entry)) == sid and stat.rsplit(")", 1)[1].split()[0] != "Z":
                pids.append(int(entry))
        except (ProcessLookupError, FileNotFoundError, PermissionError):
            continue
    return pids


def kill_session(sid: int, sig: signal.Signals = signal.SIGKILL) -> None:
    for pid in session_pids(sid):
        try:
            os.kill(pid, sig)
        except ProcessLookupError:
            continue


class Node:
    """One ``ray start --block`` in a session of its own."""

    def __init__(self, args: list[str], env: dict[str, str], temp_dir: Path) -> None:
        self.temp_dir = temp_dir
        self.log = temp_dir / "ray_start.log"
        with open(self.log, "wb") as out:
            self.proc = subprocess.Popen(
                [RAY, "start", "--block", "--disable-usage-stats", f"--temp-dir={temp_dir}", *args],
                env=env,
                stdout=out,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )

    def wait_started(self, timeout_s: float = 120.0) -> None:
        deadline = time.monotonic() + timeout_s
        while STARTED not in self.log.read_text(errors="replace"):
            if self.proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"ray start failed: {self.log.read_text(errors='replace')[-2000:]}")
            time.sleep(0.2)

    def kill(self) -> None:
        """SIGKILL every process of the node at once (raylet, agents, workers): a lost machine."""
        kill_session(self.proc.pid)
        self.proc.wait(timeout=30)

    def stop(self) -> None:
        """Graceful stop (``ray start --block`` stops its processes on SIGTERM), then SIGKILL leftovers."""
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                pass
        deadline = time.monotonic() + 10
        while session_pids(self.proc.pid) and time.monotonic() < deadline:
            time.sleep(0.2)
        kill_session(self.proc.pid)
        if self.proc.poll() is None:
            self.proc.wait(timeout=10)


@contextmanager
def two_node_cluster(env: dict[str, str]) -> Iterator[tuple[str, Node, Node]]:
    """Head + one more node on 127.0.0.1, one CPU each; yields (address, head, other)."""
    port = free_port()
    address = f"127.0.0.1:{port}"
    temps = [Path(tempfile.mkdtemp(prefix="ll_ray_", dir="/tmp")) for _ in range(2)]
    nodes: list[Node] = []
    try:
        common = [
            "--node-ip-address=127.0.0.1",
            "--num-cpus=1",
            f"--dashboard-agent-listen-port={free_port()}",
        ]
        head_args = [f"--port={port}", "--include-dashboard=false", f"--ray-client-server-port={free_port()}"]
        nodes.append(Node(["--head", *head_args, *common], env, temps[0]))
        nodes[0].wait_started()
        common[-1] = f"--dashboard-agent-listen-port={free_port()}"
        nodes.append(Node([f"--address={address}", *common], env, temps[1]))
        nodes[1].wait_started()
        wait_for_nodes(address, 2, env)
        yield address, nodes[0], nodes[1]
    finally:
        for node in reversed(nodes):
            node.stop()
        for temp in temps:
            shutil.rmtree(temp, ignore_errors=True)


def wait_for_nodes(address: str, count: int, env: dict[str, str]) -> None:
    """Block until the cluster reports ``count`` live nodes (checked by a short-lived driver)."""
    probe = (
        "import sys, time, ray\n"
        f"ray.init(address={address!r}, log_to_driver=False, configure_logging=False)\n"
        "deadline = time.monotonic() + 60\n"
        f"while sum(n['Alive'] for n in ray.nodes()) < {count} and time.monotonic() < deadline:\n"
        "    time.sleep(0.2)\n"
        f"sys.exit(0 if sum(n['Alive'] for n in ray.nodes()) >= {count} else 1)\n"
    )
    proc = subprocess.run([sys.executable, "-c", probe], env=env, capture_output=True, text=True, timeout=180)
    assert proc.returncode == 0, proc.stderr[-2000:]


class League:
    """``main.py`` on the cluster in a session of its own; output goes to files (no pipe to fill)."""

    def __init__(self, run_dir: Path, env: dict[str, str], *overrides: str) -> None:
        settings = [
            "execution.backend=ray",
            "execution.num_workers=2",
            "execution.worker_cpus=0.1",
            "scheduler.steps_per_generation=1024",
            "evaluation.episodes_per_pair=64",
        ]
        self.run_dir = run_dir
        self.err = run_dir.with_name(run_dir.name + ".stderr")
        with open(self.err, "wb") as err:
            self.proc = subprocess.Popen(
                [
                    sys.executable,
                    "main.py",
                    "--config",
                    RPS,
                    "--run-dir",
                    str(run_dir),
                    *settings,
                    *overrides,
                ],
                cwd=ROOT,
                env=env,
                stdout=subprocess.DEVNULL,
                stderr=err,
                start_new_session=True,
            )

    def stderr(self) -> str:
        return self.err.read_text(errors="replace")[-3000:]

    def wait_for_generation(self, gen: int, timeout_s: float = 300.0) -> None:
        deadline = time.monotonic() + timeout_s
        while gen not in generations(self.run_dir):
            assert self.proc.poll() is None, f"run ended early: {self.stderr()}"
            assert time.monotonic() < deadline, f"generation {gen} not reached in {timeout_s} s"
            time.sleep(0.2)

    def finish(self, timeout_s: float = 420.0) -> int:
        try:
            return self.proc.wait(timeout=timeout_s)
        finally:
            self.close()

    def close(self) -> None:
        kill_session(self.proc.pid)
        if self.proc.poll() is None:
            self.proc.wait(timeout=30)


def generations(run_dir: Path) -> list[int]:
    path = run_dir / "generations.jsonl"
    lines = path.read_text().splitlines() if path.exists() else []
    return [json.loads(line)["generation"] for line in lines]


def placements(run_dir: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (run_dir / "placement.jsonl").read_text().splitlines()]


def test_a_league_spreads_over_two_nodes_and_survives_losing_one(tmp_path: Path) -> None:
    env = {**os.environ, **CLUSTER_ENV}
    env.pop("RAY_ADDRESS", None)
    with two_node_cluster(env) as (address, head, other):
        run_dir = tmp_path / "run"
        # acting and learning overlapped: a round is under way on both nodes while learners update
        league = League(
            run_dir, env, f"execution.address={address}", "stop.max_generations=4", "execution.overlap=true"
        )
        try:
            league.wait_for_generation(0)
            start = [p for p in placements(run_dir) if p["event"] == "start"]
            head_node = start[0]["driver_node"]
            workers = {p["component"]: p["node"] for p in start if p["component"].startswith("rollout")}
            pinned = {p["node"] for p in start if not p["component"].startswith("rollout")}
            assert pinned == {head_node}  # servers and learners on the driver's (head) node
            assert len(set(workers.values())) == 2  # workers spread over both nodes
            lost = next(name for name, node in workers.items() if node != head_node)
            other.kill()
            assert league.finish() == 0, league.stderr()
        finally:
            league.close()
        assert generations(run_dir) == [0, 1, 2, 3]
        replaced = [p for p in placements(run_dir) if p["event"] == "replaced"]
        assert [(p["component"], p["node"]) for p in replaced] == [(lost, head_node)]

        # `auto` joins the running cluster named by RAY_ADDRESS (the driver lands on the head node)
        auto_dir = tmp_path / "auto"
        auto_env = {**env, "RAY_ADDRESS": address}
        auto = League(auto_dir, auto_env, "execution.address=auto", "stop.max_generations=1")
        assert auto.finish() == 0, auto.stderr()
        assert {p["driver_node"] for p in placements(auto_dir)} == {head_node}
        sessions = [head.proc.pid, other.proc.pid]
    assert [pid for sid in sessions for pid in session_pids(sid)] == []  # nothing left running


#: a driver that leaves a finished call's result in the object store of the non-head node, waits
#: for that node to be killed, then fetches the result: Ray has lost it, and the executor must say
#: the worker died (so it is replaced and its work redone) instead of failing the run
LOST_RESULT_DRIVER = """
import sys, time
import numpy as np
import ray
from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy
from light_league.execution.base import Handle, WorkerDied
from light_league.execution.ray_executor import RayExecutor

class Holder:
    def big(self):
        return np.ones(1 << 20)  # 8 MB: stored in the object store of the actor's node

executor = RayExecutor(address=sys.argv[1])
other = next(n["NodeID"] for n in ray.nodes() if n["Alive"] and n["NodeID"] != executor.node_id)
actor = ray.remote(Holder).options(
    num_cpus=0, max_restarts=0, max_task_retries=0,
    scheduling_strategy=NodeAffinitySchedulingStrategy(node_id=other, soft=False),
).remote()
handle = Handle("rollout_worker_1", actor, Holder, (), {}, True, 0.0)
future = executor.submit(handle, "big")
ready, _ = ray.wait([future.ref], fetch_local=False, timeout=120)
assert ready, "the call did not finish"
print("finished", flush=True)
sys.stdin.readline()  # the test kills the other node now
while any(n["Alive"] for n in ray.nodes() if n["NodeID"] == other):
    time.sleep(0.1)
try:
    future.result()
    print("result: fetched from a node that is gone", flush=True)
except WorkerDied as exc:
    print(f"result: WorkerDied: {exc}", flush=True)
replacement = executor.restart(handle)
print("result: redone", float(executor.submit(replacement, "big").result().sum()) == 1 << 20, flush=True)
executor.shutdown()
"""


def test_a_result_lost_with_its_node_means_the_worker_died(tmp_path: Path) -> None:
    """The race the league test above can hit: the call on the lost node had already finished."""
    env = {**os.environ, **CLUSTER_ENV}
    env.pop("RAY_ADDRESS", None)
    with two_node_cluster(env) as (address, _head, other):
        driver = subprocess.Popen(
            [sys.executable, "-c", LOST_RESULT_DRIVER, address],
            cwd=ROOT,
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            start_new_session=True,
        )
        try:
            assert driver.stdout is not None and driver.stdin is not None
            for line in driver.stdout:  # Ray may log to stdout before the driver's own line
                if line.strip() == "finished":
                    break
            else:
                raise AssertionError(driver.stderr.read()[-3000:] if driver.stderr else "driver ended early")
            other.kill()
            out, err = driver.communicate("go\n", timeout=180)
        finally:
            kill_session(driver.pid)
        assert driver.returncode == 0, err[-3000:]
        results = [line for line in out.splitlines() if line.startswith("result: ")]  # (Ray logs here too)
        assert results == [
            "result: WorkerDied: rollout_worker_1's result was lost with its node (ObjectReconstructionFailedError)",
            "result: redone True",
        ], out[-3000:]
