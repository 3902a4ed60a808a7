"""MAPPO learner throughput: learner samples per second of one ``update``, for several configs.

The batch is real: 32 battalion 2v2 games x 200 steps collected by the (untrained) learner
against the random opponent, about 12,800 learner decisions. Each config updates once on this
batch to warm up, then ``--repeats`` timed times; the table reports the median, samples/s and the ratio to the
default config, all measured side by side in this one run, plus the time the batch took to
collect (so the update cost reads against the rollout cost).

    python bench/learner_throughput.py                  # full, on the CPU
    python bench/learner_throughput.py --device cuda    # the same updates on a GPU
    python bench/learner_throughput.py --quick          # smoke run (small batch, one repeat)

``--device`` is ``learner.device``: ``cpu`` (default), ``cuda``, ``cuda:N`` or ``auto`` (cuda when
there is one). The batch is always collected on the CPU, as rollout workers do; on a GPU each
timed update includes copying the batch to the device and the final synchronisation.
"""

from __future__ import annotations

import argparse
import statistics
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch
from bench_output import recorded

import envs
from light_league.algorithms.mappo import MAPPOConfig, MAPPOLearner
from light_league.data_buffer.episode import SampleBatch
from light_league.errors import ConfigError
from light_league.rollout.episode import EpisodeLoop
from light_league.utils.device import (
    check_device_here,
    check_device_name,
    cuda_device_count,
    resolve_device,
)


@dataclass
class Case:
    name: str
    overrides: dict[str, Any]


CASES = (
    Case("default (10 epochs, 1 mini-batch, 1 thread)", {}),
    Case("reference (15 epochs)", {"ppo_epoch": 15}),
    Case("5 epochs", {"ppo_epoch": 5}),
    Case("10 epochs, 4 mini-batches", {"num_mini_batch": 4}),
    Case("default, 2 threads", {"torch_threads": 2}),
    Case("hidden 128, 2 layers", {"hidden_size": 128, "layer_N": 2}),
)


def collect_batch(num_envs: int, steps: int) -> tuple[SampleBatch, float]:
    env = envs.make_batched("battalion", num_envs=num_envs, team_size=2)
    learner = MAPPOLearner(env.spec, MAPPOConfig(), seed=0)
    loop = EpisodeLoop(env, seed=0)
    opponent = {"random": envs.make_fixed_policy("battalion", "random")}
    start = time.perf_counter()
    res = loop.collect(learner.policy, opponent, {"random": 1.0}, steps)
    return res.batch, time.perf_counter() - start


def time_updates(case: Case, batch: SampleBatch, repeats: int, device: str) -> float:
    spec = envs.make_batched("battalion", num_envs=1, team_size=2).spec
    learner = MAPPOLearner(spec, MAPPOConfig(**case.overrides), seed=0, device=device)
    learner.update(batch)  # warm-up: first-call allocations (and CUDA kernels)
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        learner.update(batch)
        if device.startswith("cuda"):
            torch.cuda.synchronize()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="small batch, one repeat, two configs")
    parser.add_argument("--repeats", type=int, default=3, help="updates timed per config (median)")
    parser.add_argument("--out", type=Path, default=None, help="also write the output here (for docs/data/)")
    parser.add_argument("--device", default="cpu", help="learner.device: cpu, cuda, cuda:N or auto")
    args = parser.parse_args()
    try:
        check_device_name(args.device)
        device = resolve_device(
            args.device, supports_device=True, gpus=cuda_device_count(), where="this machine"
        )
        check_device_here(device)
    except (ValueError, ConfigError) as exc:
        parser.error(f"--device {args.device}: {exc}")
    with recorded(args.out):
        num_envs, steps, repeats = (8, 50, 1) if args.quick else (32, 200, args.repeats)
        cases = CASES[:2] if args.quick else CASES
        threads_before = torch.get_num_threads()
        batch, collect_s = collect_batch(num_envs, steps)
        n = batch.num_samples
        print(
            f"batch: battalion 2v2, {num_envs} games x {steps} steps, {n} learner samples; collected in {collect_s:.2f} s"
        )
        where = torch.cuda.get_device_name(torch.device(device)) if device.startswith("cuda") else "CPU"
        print(f"learner device: {device} ({where}); torch {torch.__version__}")
        print(f"{'config':<46} {'update s':>9} {'samples/s':>10} {'vs default':>10} {'vs collect':>10}")
        base = None
        for case in cases:
            torch.set_num_threads(threads_before)
            seconds = time_updates(case, batch, repeats, device)
            base = base or seconds
            print(
                f"{case.name:<46} {seconds:>9.3f} {n / seconds:>10.0f} {base / seconds:>9.2f}x {seconds / collect_s:>9.2f}x"
            )


if __name__ == "__main__":
    main()
