"""Training seconds per generation as the population grows: 10 vs 100 frozen members, real games.

A real league Runner (battalion 2v2 from ``expr_configs/league.yaml``, or with ``--env leduc``
Leduc poker from ``expr_configs/league_leduc.yaml``; the three AlphaStar roles, local backend,
one rollout worker) is grown to N frozen members (baselines plus snapshots of the
learners), then the training phase of a generation — ``TrainingManager.run`` on the scheduler's
own tasks: PFSP over every frozen member for the main agent and the league exploiter, real games
against them, the learners' MAPPO updates — is timed for a few generations at the same env steps
per generation. Games played and the number of distinct opponents met are printed beside the
seconds so the rows can be seen to do the same work. Both wall and CPU seconds (of this process:
the local backend runs everything in it, torch on one thread) are shown; on a shared, busy
machine the CPU seconds are the steadier figure.

Both sizes and both paths run in the same process, their generations interleaved: ``banked`` (frozen opponents of one
architecture in one bank forward pass (MAPPOBank), the worker's cache holding the whole population)
and ``per-policy`` (the previous path: one forward pass per distinct opponent per step, the cache
bounded at ``execution.policy_cache_size=16``).

    python bench/population_rollout.py               # N = 10, 100; 10 timed generations each
    python bench/population_rollout.py --quick       # N = 10, 40; 1 timed generation
    python bench/population_rollout.py --profile 100 # first cProfile one generation of each path at N = 100
    python bench/population_rollout.py --env leduc   # the Leduc league
"""

from __future__ import annotations

import argparse
import cProfile
import io
import itertools
import os
import pstats
import statistics
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import torch
from bench_output import recorded

from light_league.config import load_config
from light_league.rollout.rollout_worker import RolloutWorker
from light_league.run_dir import RunDir
from light_league.runner import Runner
from light_league.tracking.console import Console
from light_league.types import GenerationDecisions

PATHS = ("banked", "per-policy")
#: one timed training phase: wall s, CPU s, games finished, distinct opponents, env steps
Sample = tuple[float, float, int, int, int]
ROUNDS = 2  #: rollout rounds (and updates) per learner and generation
#: --env: (config, label, games per worker, steps per call)
SETUPS = {
    "battalion": ("expr_configs/league.yaml", "battalion 2v2", 32, 50),
    "leduc": ("expr_configs/league_leduc.yaml", "leduc_poker", 256, 8),
}


def overrides(env: str, seed: int) -> list[str]:
    _, _, envs, steps = SETUPS[env]
    return [
        "execution.backend=local",
        "execution.num_workers=1",
        f"execution.envs_per_worker={envs}",
        f"execution.steps_per_call={steps}",
        f"scheduler.steps_per_generation={ROUNDS * envs * steps}",
        "logging.console=quiet",
        "logging.tensorboard=false",
        "league.pool_max_size=100000",
        f"experiment.seed={seed}",
    ]


@contextmanager
def per_policy_path(runner: Runner) -> Iterator[None]:
    """The path before policy banks: no banks (the worker cache bounded at ``policy_cache_size``, 16)."""
    workers: list[RolloutWorker] = [runner.executor.client(w) for w in runner.training.rollout.workers]
    for w in workers:
        w.policy_banks = False
    try:
        yield
    finally:
        for w in workers:
            w.policy_banks = True


def grow(runner: Runner, size: int) -> None:
    """Freeze the learners round-robin until the population has ``size`` members."""
    learners = itertools.cycle(runner.agents.learners())
    while len(runner.agents.member_ids()) < size:
        runner.apply(GenerationDecisions(snapshot=[next(learners)]))


def generation(runner: Runner, gen: int) -> Sample:
    """Wall and CPU seconds of one training phase; games finished, distinct opponents, env steps."""
    tasks = runner.scheduler.next_tasks(runner.agents)
    start, cpu = time.perf_counter(), time.process_time()
    outcome = runner.training.run(tasks, generation=gen)
    seconds, cpu = time.perf_counter() - start, time.process_time() - cpu
    runner.agents.record_training(outcome.results, outcome.env_steps)
    opponents = len({r.opponent_id for r in outcome.results})
    return seconds, cpu, len(outcome.results), opponents, sum(outcome.env_steps.values())


def build(root: Path, size: int, env: str, seed: int) -> Runner:
    config = load_config(SETUPS[env][0], overrides(env, seed))
    runner = Runner.build(config, RunDir(root / f"run_{size}"), resume=False, argv=["bench"])
    runner.console = Console(config.logging, file=io.StringIO())
    grow(runner, size)
    generation(runner, 0)  # warm-up: the first pulls and the banks are built
    with per_policy_path(runner):
        generation(runner, 0)
    return runner


def run_path(runner: Runner, path: str, gen: int) -> Sample:
    if path == "banked":
        return generation(runner, gen)
    with per_policy_path(runner):
        return generation(runner, gen)


def measure(
    sizes: tuple[int, ...], generations: int, env: str, seed: int
) -> dict[tuple[int, str], list[Sample]]:
    """Both sizes' runners live side by side; their generations alternate (ABBA over sizes and
    paths), so a change in machine load hits every row alike."""
    out: dict[tuple[int, str], list[Sample]] = {(n, p): [] for n in sizes for p in PATHS}
    with tempfile.TemporaryDirectory(prefix="population_rollout_") as tmp:
        runners = {n: build(Path(tmp), n, env, seed) for n in sizes}
        try:
            cells = [(n, p) for n in sizes for p in PATHS]
            for i in range(generations):
                # games start in waves, so a fixed order would alias with them
                for n, path in cells if i % 2 == 0 else cells[::-1]:
                    out[(n, path)].append(run_path(runners[n], path, 1 + len(out[(n, path)])))
        finally:
            for runner in runners.values():
                runner.close()
    return out


def profile(size: int, env: str, seed: int) -> None:
    with tempfile.TemporaryDirectory(prefix="population_rollout_") as tmp:
        runner = build(Path(tmp), size, env, seed)
        try:
            for path in PATHS:
                profiler = cProfile.Profile()
                profiler.runcall(run_path, runner, path, 1)
                text = io.StringIO()
                pstats.Stats(profiler, stream=text).sort_stats("tottime").print_stats(14)
                print(f"cProfile of one {path} training phase at N = {size} (top by own time):")
                print(text.getvalue())
        finally:
            runner.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="N = 10, 40 and one timed generation")
    parser.add_argument("--generations", type=int, default=10, help="timed generations per N and path")
    parser.add_argument("--profile", type=int, default=0, metavar="N", help="cProfile a generation at this N")
    parser.add_argument("--env", choices=sorted(SETUPS), default="battalion", help="which shipped league")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, default=None, help="also write the output here (for docs/data/)")
    args = parser.parse_args()
    with recorded(args.out):
        torch.set_num_threads(1)
        sizes = (10, 40) if args.quick else (10, 100)
        generations = 1 if args.quick else args.generations
        _, label, envs, steps_per_call = SETUPS[args.env]
        steps = ROUNDS * envs * steps_per_call
        print(
            f"{label} league (3 learners), local backend, 1 worker x {envs} games, "
            f"{steps} env steps per learner and generation; median of {generations} generation(s); "
            f"load average {os.getloadavg()[0]:.2f}"
        )
        if args.profile:
            profile(args.profile, args.env, args.seed)
        rows = measure(sizes, generations, args.env, args.seed)
        print(
            f"{'members':>8} {'path':>11} {'wall s/gen':>11} {'CPU s/gen':>10} {'games':>6} {'opponents':>10} {'env steps':>10}"
        )
        print("(medians per generation; games: finished training games; opponents: distinct ones among them)")
        wall: dict[tuple[int, str], float] = {}
        cpu: dict[tuple[int, str], float] = {}
        for (n, path), runs in rows.items():
            wall[(n, path)] = statistics.median(r[0] for r in runs)
            cpu[(n, path)] = statistics.median(r[1] for r in runs)
            games, opponents, env_steps = (int(statistics.median(r[i] for r in runs)) for i in (2, 3, 4))
            print(
                f"{n:>8} {path:>11} {wall[(n, path)]:>11.2f} {cpu[(n, path)]:>10.2f} {games:>6} {opponents:>10} "
                f"{env_steps:>10}   wall [{' '.join(f'{r[0]:.2f}' for r in runs)}]"
            )
        small, large = sizes
        for path in PATHS:
            print(
                f"{path:>11}: N={large} / N={small} = {wall[(large, path)] / wall[(small, path)]:.2f}x wall, "
                f"{cpu[(large, path)] / cpu[(small, path)]:.2f}x CPU"
            )
        for label, table in (("wall", wall), ("CPU", cpu)):
            verdict = "met" if table[(large, "banked")] <= 1.2 * table[(small, "banked")] else "missed"
            print(
                f"target: train {label} seconds per generation at N={large} at most 1.2x N={small} (banked): {verdict}"
            )
        print(f"load average at the end {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
