"""Rollout throughput: the framework's rollout path vs a raw loop over the same env and policies.

**Framework**: RolloutWorker(s) built by an executor and driven by a RolloutManager; each round
trip the workers pull the weights they lack from the PolicyServer, play ``steps_per_call``
batched steps of ``envs_per_worker`` games (one MAPPO forward pass per policy per step, opponent
and seat drawn per episode), build a SampleBatch and push it into the EpisodeServer.

**Raw**: the same batched env and the same policies in a plain loop: the learner in seat 0 (its
actor and critic in one ``evaluate`` call, as the framework needs values), the opponent in seat
1, Gumbel-max sampling in numpy; nothing is recorded.

Both count env steps (batched steps x games) and run in this process, alternating short timed
slices; the ratio is the median over adjacent pairs of slices, which see the same machine load,
so it holds on a busy machine. Backends: local (one worker in the
driver), Ray with 1 and 2 workers (``ray.init(num_cpus=2)`` once; the raw loop is always one
process, so a ratio above 1 with 2 workers is parallel speed-up). ``in-worker`` is the share of
the framework's wall time spent inside the workers' ``run`` (playing, building and pushing the
batch); the rest is the round trip (manager, executor, Ray transport). Ray runs its worker
processes at a lower CPU priority (niceness), so on a busy machine the Ray rows also measure how
much CPU the scheduler gives them.

    python bench/rollout_throughput.py                # full: 12 pairs of 0.5 s slices each
    python bench/rollout_throughput.py --quick        # smoke run
    python bench/rollout_throughput.py --profile      # also cProfile the local framework path
"""

from __future__ import annotations

import argparse
import cProfile
import io
import os
import pstats
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import torch
from bench_output import recorded

from light_league import envs
from light_league.algorithms.base import Policy
from light_league.algorithms.mappo import MAPPOConfig, MAPPOLearner
from light_league.algorithms.mappo.policy import MAPPOPolicy
from light_league.data_buffer.episode_server import EpisodeServer
from light_league.data_buffer.policy_server import PolicyServer
from light_league.envs.base import BatchedEnv
from light_league.execution import Executor, Handle, LocalExecutor, build_executor
from light_league.rollout.episode import sample_actions
from light_league.rollout.rollout_manager import RolloutManager
from light_league.rollout.rollout_worker import RolloutRequest, RolloutWorker

LEARNER = "learner"
FROZEN = "frozen_copy"


@dataclass
class Case:
    label: str
    env_name: str
    options: dict[str, Any] = field(default_factory=dict)
    #: a fixed opponent of the env by name, or None for a frozen copy of the learner
    opponent: str | None = None


CASES = (
    Case("battalion 2v2 vs scripted_l1", "battalion", {"team_size": 2}, "scripted_l1"),
    Case("battalion 2v2 vs frozen MAPPO", "battalion", {"team_size": 2}, None),
    Case("leduc_poker vs frozen MAPPO", "leduc_poker", {}, None),
)


@dataclass
class Sizes:
    envs_per_worker: int
    steps_per_call: int
    slice_s: float
    repeats: int


# ---------------------------------------------------------------------------------- raw loop


class RawLoop:
    """The env and the two policies, nothing else: one forward pass per policy per step."""

    def __init__(self, case: Case, learner: MAPPOLearner, num_envs: int) -> None:
        self.env: BatchedEnv = envs.make_batched(case.env_name, num_envs, **case.options)
        spec = self.env.spec
        self.learner = MAPPOPolicy.from_meta(learner.policy_meta(), learner.get_weights())
        self.opponent: Policy = (
            envs.make_fixed_policy(case.env_name, case.opponent)
            if case.opponent
            else MAPPOPolicy.from_meta(learner.policy_meta(), learner.get_weights())
        )
        self.seats = [np.asarray(s, dtype=np.int64) for s in spec.seats]
        self.rng = np.random.default_rng(0)
        self.step = self.env.reset(seed=0)

    def play(self, num_steps: int) -> int:
        step = self.step
        for _ in range(num_steps):
            actions = np.zeros(step.active.shape, dtype=np.int64)
            for seat, agents in enumerate(self.seats):
                rows_b, rows_k = np.nonzero(step.active[:, agents])
                if rows_b.size == 0:
                    continue
                rows_i = agents[rows_k]
                obs, mask = step.obs[rows_b, rows_i], step.action_mask[rows_b, rows_i]
                if seat == 0:
                    logp, _ = self.learner.evaluate(obs, step.state[rows_b, rows_i], mask, rows_k)
                else:
                    logp = self.opponent.log_probs(obs, mask, rows_k)
                actions[rows_b, rows_i] = sample_actions(np.asarray(logp), self.rng)
            step = self.env.step(actions)
        self.step = step
        return num_steps * self.env.num_envs


# ---------------------------------------------------------------------------------- framework


class Framework:
    """PolicyServer, EpisodeServer and ``num_workers`` RolloutWorkers under one executor."""

    def __init__(
        self, case: Case, learner: MAPPOLearner, executor: Executor, num_workers: int, sizes: Sizes
    ) -> None:
        self.executor = executor
        self.handles: list[Handle] = []
        ps = self._create(PolicyServer, name="policy_server")
        es = self._create(EpisodeServer, name="episode_server", max_batches_per_learner=4)
        meta = learner.policy_meta()
        version = executor.call(ps, "publish", LEARNER, str(meta["kind"]), meta, learner.get_weights())
        if case.opponent:
            opponent = case.opponent
            executor.call(ps, "add_fixed", opponent, "fixed", {"name": opponent, "env": case.env_name})
        else:
            opponent = FROZEN
            executor.call(ps, "freeze", LEARNER, FROZEN)
        workers = [
            self._create(
                RolloutWorker,
                case.env_name,
                dict(case.options),
                name=f"rollout_worker_{i}",
                restartable=True,
                cpus=0.0 if isinstance(executor, LocalExecutor) else 1.0,
                num_envs=sizes.envs_per_worker,
                seed=1000 + i,
                policy_server=executor.client(ps),
                episode_server=executor.client(es),
            )
            for i in range(num_workers)
        ]
        self.manager = RolloutManager(executor, workers, max_restarts=0)
        self.request = RolloutRequest(LEARNER, version, {opponent: 1.0}, sizes.steps_per_call)
        #: seconds the workers spent inside ``run`` (playing and pushing), slowest worker per call
        self.worker_s = 0.0
        self.wall_s = 0.0  #: seconds of the calls as the driver sees them

    def _create(self, cls: type, *args: Any, name: str, **kwargs: Any) -> Handle:
        handle = self.executor.create(cls, *args, name=name, **kwargs)
        self.handles.append(handle)
        return handle

    def play(self) -> int:
        start = time.perf_counter()
        reports = self.manager.collect([self.request])
        self.wall_s += time.perf_counter() - start
        self.worker_s += max(r.seconds for r in reports)
        return sum(r.env_steps for r in reports)

    def close(self) -> None:
        for handle in self.handles:
            self.executor.kill(handle)


# ---------------------------------------------------------------------------------- timing


def timed_rate(play: Callable[[], int], slice_s: float) -> float:
    """Env steps per second of repeated ``play()`` calls for about ``slice_s`` seconds."""
    steps = 0
    start = time.perf_counter()
    while (elapsed := time.perf_counter() - start) < slice_s:
        steps += play()
    return steps / elapsed


@dataclass
class Measurement:
    framework: float  #: env steps / s, median over slices
    raw: float  #: env steps / s, median over slices
    ratio: float  #: framework / raw, median over adjacent pairs of slices (they share the load)
    in_worker: float  #: share of the framework's wall time spent inside the workers' ``run``


def measure(case: Case, executor: Executor, num_workers: int, sizes: Sizes) -> Measurement:
    """Framework and raw rates over alternating slices (one warm-up call each)."""
    env = envs.make_batched(case.env_name, 1, **case.options)
    learner = MAPPOLearner(env.spec, MAPPOConfig(), seed=0)
    raw = RawLoop(case, learner, sizes.envs_per_worker)
    framework = Framework(case, learner, executor, num_workers, sizes)
    try:
        framework.play()
        raw.play(sizes.steps_per_call)
        framework.worker_s = framework.wall_s = 0.0
        fast, slow = [], []
        for _ in range(sizes.repeats):
            fast.append(timed_rate(framework.play, sizes.slice_s))
            slow.append(timed_rate(lambda: raw.play(sizes.steps_per_call), sizes.slice_s))
        ratio = statistics.median(f / r for f, r in zip(fast, slow, strict=True))
        in_worker = framework.worker_s / framework.wall_s
        return Measurement(statistics.median(fast), statistics.median(slow), ratio, in_worker)
    finally:
        framework.close()


def profile_local(case: Case, sizes: Sizes, top: int) -> str:
    """cProfile of the local framework path for one case: the ``top`` entries by own time."""
    env = envs.make_batched(case.env_name, 1, **case.options)
    framework = Framework(case, MAPPOLearner(env.spec, MAPPOConfig(), seed=0), LocalExecutor(), 1, sizes)
    framework.play()
    profiler = cProfile.Profile()
    profiler.enable()
    timed_rate(framework.play, sizes.slice_s * sizes.repeats)
    profiler.disable()
    out = io.StringIO()
    pstats.Stats(profiler, stream=out).sort_stats("tottime").print_stats(top)
    return out.getvalue()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="short slices, local backend only")
    parser.add_argument("--profile", action="store_true", help="cProfile the local framework path")
    parser.add_argument("--no-ray", action="store_true", help="local backend only")
    parser.add_argument("--out", type=Path, default=None, help="also write the output here (for docs/data/)")
    args = parser.parse_args()
    with recorded(args.out):
        torch.set_num_threads(1)  # what every RolloutWorker sets
        sizes = Sizes(64, 64, 0.3, 1) if args.quick else Sizes(64, 64, 0.5, 12)
        print(
            f"envs_per_worker={sizes.envs_per_worker} steps_per_call={sizes.steps_per_call} "
            f"slices={sizes.repeats} x {sizes.slice_s:.1f} s (median); {os.cpu_count()} cores; torch threads 1"
        )
        backends: list[tuple[str, int]] = [("local", 1)]
        if not (args.quick or args.no_ray):
            backends += [("ray", 1), ("ray", 2)]
        print(
            f"{'config':<31} {'backend':<10} {'framework steps/s':>17} {'raw steps/s':>12} {'ratio':>6} "
            f"{'in-worker':>9}"
        )
        ray_executor: Executor | None = None
        ratios: dict[tuple[str, str], float] = {}
        try:
            for case in CASES:
                for backend, workers in backends:
                    if backend == "ray" and ray_executor is None:
                        ray_executor = build_executor("ray", num_cpus=2, object_store_mb=256)
                    executor = LocalExecutor() if backend == "local" else ray_executor
                    assert executor is not None
                    m = measure(case, executor, workers, sizes)
                    label = f"{backend} x{workers}"
                    ratios[case.label, label] = m.ratio
                    print(
                        f"{case.label:<31} {label:<10} {m.framework:>17,.0f} {m.raw:>12,.0f} "
                        f"{m.ratio:>6.2f} {m.in_worker:>9.0%}"
                    )
        finally:
            if ray_executor is not None:
                ray_executor.shutdown()
        if len(backends) == 3:
            # each row's framework / raw pairs its slices with the same raw loop under the same
            # load, so these quotients compare the backends even if the load moved between rows
            print(f"\n{'config':<31} {'ray x1 / local':>14} {'ray x2 / ray x1':>15}")
            for case in CASES:
                local, ray1, ray2 = (ratios[case.label, b] for b in ("local x1", "ray x1", "ray x2"))
                print(f"{case.label:<31} {ray1 / local:>14.2f} {ray2 / ray1:>15.2f}")
        if args.profile:
            for case in CASES:
                print(f"\ncProfile, local framework path, {case.label} (top entries by own time):")
                print(profile_local(case, sizes, 15))


if __name__ == "__main__":
    main()
