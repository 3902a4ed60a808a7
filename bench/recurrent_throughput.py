"""What memory costs: rollout env steps/s and learner samples/s of recurrent MAPPO against
feed-forward MAPPO, at the same batch, side by side in one run.

**Rollout**: a RolloutWorker (the framework's rollout path: weights pulled from a PolicyServer,
frozen opponents in a policy bank, the batch built and pushed into an EpisodeServer) plays
``steps_per_call`` batched steps of ``envs_per_worker`` games per call, the learner against
frozen copies of itself of the same kind: one copy (its own forward pass) or eight (one bank
pass). The two networks alternate short timed slices; the ratio recurrent / feed-forward is the
median over adjacent pairs of slices, which share the machine's load.

**Learner**: one batch of each network from that rollout path (the same games and steps), then
``update`` on it, alternating, ``--repeats`` times; samples/s is the median, the ratio is the
median over adjacent pairs.

Recurrent is ``recurrent: {cell: gru}`` over the default network (hidden 64, GRU 64, chunks of
10); the rest of the MAPPO settings are the defaults of docs/mappo.md. The target (issue 29): a
recurrent rollout at least 0.5 of the feed-forward one at the same batch.

    python bench/recurrent_throughput.py            # 8 pairs of 0.5 s slices, 3 updates each (about 3 min)
    python bench/recurrent_throughput.py --quick    # smoke run
    python bench/recurrent_throughput.py --out docs/data/bench/recurrent_throughput.txt
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch
from bench_output import recorded

from light_league import envs
from light_league.algorithms.mappo import MAPPOConfig, MAPPOLearner
from light_league.data_buffer.episode import SampleBatch
from light_league.data_buffer.episode_server import EpisodeServer
from light_league.data_buffer.policy_server import PolicyServer
from light_league.rollout.rollout_worker import RolloutRequest, RolloutWorker

NETWORKS: dict[str, dict[str, Any]] = {"feed-forward": {}, "recurrent": {"recurrent": {"cell": "gru"}}}
LEARNER = "learner"


@dataclass(frozen=True)
class Case:
    label: str
    env_name: str
    options: dict[str, Any] = field(default_factory=dict)
    opponents: int = 1  #: frozen copies of the learner (8: a bank pass)


CASES = (
    Case("battalion 2v2 vs 1 frozen", "battalion", {"team_size": 2}, 1),
    Case("battalion 2v2 vs 8 frozen", "battalion", {"team_size": 2}, 8),
    Case("recall vs 8 frozen", "recall", {}, 8),
)


@dataclass(frozen=True)
class Sizes:
    envs_per_worker: int
    steps_per_call: int
    slice_s: float
    pairs: int
    updates: int


class Side:
    """One network's rollout path: a learner, its frozen copies, a worker and the servers."""

    def __init__(self, case: Case, network: str, sizes: Sizes) -> None:
        spec = envs.make_batched(case.env_name, 1, **case.options).spec
        self.learner = MAPPOLearner(spec, MAPPOConfig(**NETWORKS[network]), seed=0)
        self.policies = PolicyServer()
        self.episodes = EpisodeServer(max_batches_per_learner=4)
        meta = self.learner.policy_meta()
        version = self.policies.publish(LEARNER, "mappo", meta, self.learner.get_weights())
        frozen = [f"frozen_{i}" for i in range(case.opponents)]
        for pid in frozen:
            self.policies.freeze(LEARNER, pid)
        self.worker = RolloutWorker(
            case.env_name,
            dict(case.options),
            num_envs=sizes.envs_per_worker,
            seed=1,
            policy_server=self.policies,
            episode_server=self.episodes,
        )
        self.request = RolloutRequest(LEARNER, version, dict.fromkeys(frozen, 1.0), sizes.steps_per_call)

    def play(self) -> int:
        report = self.worker.run([self.request])[0]
        self.episodes.clear(LEARNER)
        return report.env_steps

    def batch(self) -> SampleBatch:
        self.worker.run([self.request])
        batch = self.episodes.pull(LEARNER, 0)
        assert batch is not None
        return batch


def timed_rate(play: Callable[[], int], slice_s: float) -> float:
    """Env steps per second of repeated ``play()`` calls for about ``slice_s`` seconds."""
    steps, start = 0, time.perf_counter()
    while (elapsed := time.perf_counter() - start) < slice_s:
        steps += play()
    return steps / elapsed


def seconds(call: Callable[[], Any]) -> float:
    start = time.perf_counter()
    call()
    return time.perf_counter() - start


def measure(case: Case, sizes: Sizes) -> list[str]:
    """The case's rollout and learner rows."""
    ff, rnn = Side(case, "feed-forward", sizes), Side(case, "recurrent", sizes)
    for side in (ff, rnn):
        side.play()  # warm-up: policies pulled, banks built
    rates: dict[str, list[float]] = {"feed-forward": [], "recurrent": []}
    for _ in range(sizes.pairs):
        rates["feed-forward"].append(timed_rate(ff.play, sizes.slice_s))
        rates["recurrent"].append(timed_rate(rnn.play, sizes.slice_s))
    ratio = statistics.median(r / f for f, r in zip(rates["feed-forward"], rates["recurrent"], strict=True))
    batches = {"feed-forward": ff.batch(), "recurrent": rnn.batch()}
    learners = {"feed-forward": ff.learner, "recurrent": rnn.learner}
    for name, learner in learners.items():
        learner.update(batches[name])  # warm-up
    times: dict[str, list[float]] = {"feed-forward": [], "recurrent": []}
    for _ in range(sizes.updates):
        for name, learner in learners.items():
            times[name].append(seconds(lambda: learner.update(batches[name])))  # noqa: B023 - called at once
    samples = {name: batches[name].num_samples for name in learners}
    per_s = {name: samples[name] / statistics.median(times[name]) for name in learners}
    learn_ratio = statistics.median(
        (samples["recurrent"] / r) / (samples["feed-forward"] / f)
        for f, r in zip(times["feed-forward"], times["recurrent"], strict=True)
    )
    return [
        f"{case.label:<27} {'rollout env steps/s':<20} {statistics.median(rates['feed-forward']):>12,.0f} "
        f"{statistics.median(rates['recurrent']):>12,.0f} {ratio:>6.2f}",
        f"{'':<27} {'learner samples/s':<20} {per_s['feed-forward']:>12,.0f} {per_s['recurrent']:>12,.0f} "
        f"{learn_ratio:>6.2f}   ({samples['recurrent']:,} samples a batch)",
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="short slices, one update each")
    parser.add_argument("--out", type=Path, default=None, help="also write the output here (for docs/data/)")
    args = parser.parse_args()
    with recorded(args.out):
        torch.set_num_threads(1)  # what every RolloutWorker and learner sets
        sizes = Sizes(64, 64, 0.2, 2, 1) if args.quick else Sizes(64, 64, 0.5, 8, 3)
        print(
            f"envs_per_worker={sizes.envs_per_worker} steps_per_call={sizes.steps_per_call} (the same batch for "
            f"both networks); rollout: {sizes.pairs} pairs of {sizes.slice_s:.1f} s slices; learner: "
            f"{sizes.updates} updates each; medians; {os.cpu_count()} cores; torch threads 1"
        )
        print(f"{'case':<27} {'measure':<20} {'feed-forward':>12} {'recurrent':>12} {'ratio':>6}")
        for case in CASES:
            for row in measure(case, sizes):
                print(row, flush=True)
        print(
            "\nratio: recurrent / feed-forward over adjacent pairs of measurements (target: rollout at least 0.50)"
        )


if __name__ == "__main__":
    main()
