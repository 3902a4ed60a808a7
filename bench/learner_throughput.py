"""MAPPO learner throughput: learner samples per second of one ``update``, for several configs.

The batch is real: 32 battalion 2v2 games x 200 steps collected by the (untrained) learner
against the random opponent, about 12,800 learner decisions. Each config updates once on this
batch to warm up, then ``--repeats`` timed times; the table reports the median, samples/s and the ratio to the
default config, all measured side by side in this one run, plus the time the batch took to
collect (so the update cost reads against the rollout cost).

    python bench/learner_throughput.py                  # full, on the CPU
    python bench/learner_throughput.py --device cuda    # the same updates on a GPU
    python bench/learner_throughput.py --quick          # smoke run (small batch, one repeat)
    python bench/learner_throughput.py --env leduc_poker  # a poker batch: distinct inputs once

``--env kuhn_poker`` or ``leduc_poker`` times the poker configs' update (8 epochs, one mini-batch,
hidden 128, the magnet on) on a self-play batch of 256 games x 8 steps (2,048 env steps, as
``league_kuhn.yaml`` and ``league_leduc.yaml`` collect per update), with and without the
learner computing each distinct network input once (a poker batch repeats a few information
states thousands of times; docs/mappo.md, "One update").

``--device`` is ``learner.device``: ``cpu`` (default), ``cuda``, ``cuda:N`` or ``auto`` (cuda when
there is one). The batch is always collected on the CPU, as rollout workers do; on a GPU each
timed update includes copying the batch to the device and the final synchronisation.
"""

from __future__ import annotations

import argparse
import contextlib
import statistics
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from unittest import mock

import torch
from bench_output import recorded

from light_league import envs
from light_league.algorithms.mappo import MAPPOConfig, MAPPOLearner
from light_league.algorithms.mappo import learner as mappo_learner
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
    distinct: bool = True  #: the learner computes each distinct input once (False: every row)


CASES = (
    Case("default (10 epochs, 1 mini-batch, 1 thread)", {}),
    Case("reference (15 epochs)", {"ppo_epoch": 15}),
    Case("5 epochs", {"ppo_epoch": 5}),
    Case("10 epochs, 4 mini-batches", {"num_mini_batch": 4}),
    Case("default, 2 threads", {"torch_threads": 2}),
    Case("hidden 128, 2 layers", {"hidden_size": 128, "layer_N": 2}),
)


POKER = {"ppo_epoch": 8, "num_mini_batch": 1, "hidden_size": 128, "gamma": 1.0, "gae_lambda": 1.0,
         "clip_param": 0.05, "entropy_coef": 0.1, "magnet_coef": 0.5}  # fmt: skip
POKER_CASES = (
    Case("poker settings (8 epochs, hidden 128, magnet)", POKER),
    Case("the same, every row through the networks", POKER, distinct=False),
)


def make_env(env_name: str, num_envs: int) -> Any:
    if env_name == "battalion":
        return envs.make_batched("battalion", num_envs=num_envs, team_size=2)
    return envs.make_batched(env_name, num_envs=num_envs)


def collect_batch(env_name: str, num_envs: int, steps: int) -> tuple[SampleBatch, float]:
    env = make_env(env_name, num_envs)
    learner = MAPPOLearner(env.spec, MAPPOConfig(), seed=0)
    loop = EpisodeLoop(env, seed=0)
    if env_name == "battalion":
        opponent = {"random": envs.make_fixed_policy("battalion", "random")}
    else:  # poker: the learner plays itself, as a self-play main agent does
        opponent = {"random": learner.policy}
    start = time.perf_counter()
    res = loop.collect(learner.policy, opponent, {"random": 1.0}, steps)
    return res.batch, time.perf_counter() - start


def time_updates(case: Case, env_name: str, batch: SampleBatch, repeats: int, device: str) -> float:
    spec = make_env(env_name, 1).spec
    learner = MAPPOLearner(spec, MAPPOConfig(**case.overrides), seed=0, device=device)
    with contextlib.ExitStack() as stack:
        if not case.distinct:
            stack.enter_context(mock.patch.object(mappo_learner, "distinct_rows", lambda x: None))
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
    parser.add_argument(
        "--env", default="battalion", choices=("battalion", "kuhn_poker", "leduc_poker"), help="whose batch"
    )
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
        poker = args.env != "battalion"
        if poker:
            num_envs, steps, repeats = (64, 8, 1) if args.quick else (256, 8, args.repeats)
            cases = POKER_CASES
        else:
            num_envs, steps, repeats = (8, 50, 1) if args.quick else (32, 200, args.repeats)
            cases = CASES[:2] if args.quick else CASES
        threads_before = torch.get_num_threads()
        batch, collect_s = collect_batch(args.env, num_envs, steps)
        n = batch.num_samples
        what = (
            f"{args.env}, {num_envs} games x {steps} steps"
            if poker
            else f"battalion 2v2, {num_envs} games x {steps} steps"
        )
        print(f"batch: {what}, {n} learner samples; collected in {collect_s:.2f} s")
        where = torch.cuda.get_device_name(torch.device(device)) if device.startswith("cuda") else "CPU"
        print(f"learner device: {device} ({where}); torch {torch.__version__}")
        print(f"{'config':<46} {'update s':>9} {'samples/s':>10} {'vs default':>10} {'vs collect':>10}")
        base = None
        for case in cases:
            torch.set_num_threads(threads_before)
            seconds = time_updates(case, args.env, batch, repeats, device)
            base = base or seconds
            print(
                f"{case.name:<46} {seconds:>9.3f} {n / seconds:>10.0f} {base / seconds:>9.2f}x {seconds / collect_s:>9.2f}x"
            )


if __name__ == "__main__":
    main()
