"""Recurrent against feed-forward MAPPO on recall, the game only memory wins (``light_league/envs/recall.py``).

For each seed, one learner of each kind trains against the ``random`` opponent (both seats, drawn
per episode) with the default MAPPO settings of docs/mappo.md, recurrent with
``recurrent: {cell: gru}`` (hidden 64, chunks of 10 decisions: a whole episode of 8), for
``--updates`` updates of 128 games x 16 steps (2,048 env steps). Then its last policy plays
``--games`` fresh games against ``random`` (half in each seat, actions sampled), and its score is
its mean return there with a 95% interval.

What the game allows against ``random``: a policy that recalls its cue hits every time and scores
``1 - 1 / num_signals`` (0.75 with 4 signals), which is the best achievable; a policy without
memory answers at chance and scores 0 whatever it does (the signal it sees when it answers tells
nothing about its cue). The target: every recurrent seed within 10% of the best (at least 0.675),
every feed-forward seed at the memoryless value.

    python bench/recurrent_memory.py                       # 3 seeds, 120 updates each (about 4 min)
    python bench/recurrent_memory.py --seeds 0 --updates 30 --games 1000   # smoke run
    python bench/recurrent_memory.py --out docs/data/bench/recurrent_memory.txt
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import torch
from bench_output import recorded

from light_league import envs
from light_league.algorithms.base import Policy
from light_league.algorithms.mappo import MAPPOConfig, MAPPOLearner
from light_league.rollout.episode import EpisodeLoop
from light_league.rollout.head_to_head import match

NUM_ENVS, STEPS = 128, 16
OPPONENT = "random"
#: the kinds of network compared: label -> MAPPO settings over the defaults
NETWORKS = {"recurrent": {"recurrent": {"cell": "gru"}}, "feed-forward": {}}


def best_score(num_signals: int) -> float:
    """The mean return against ``random`` of a policy that always recalls its cue."""
    return 1.0 - 1.0 / num_signals


def train(network: str, seed: int, updates: int, **env_options: int) -> MAPPOLearner:
    """A learner of ``network`` trained ``updates`` times against ``random`` on recall."""
    env = envs.make_batched("recall", NUM_ENVS, **env_options)
    learner = MAPPOLearner(env.spec, MAPPOConfig(**NETWORKS[network]), seed=seed)  # type: ignore[arg-type]
    loop = EpisodeLoop(env, seed=seed)
    opponent = {OPPONENT: envs.make_fixed_policy("recall", OPPONENT, **env_options)}
    for _ in range(updates):
        learner.update(loop.collect(learner.policy, opponent, {OPPONENT: 1.0}, STEPS).batch)
    return learner


def score(policy: Policy, games: int, seed: int = 12345, **env_options: int) -> tuple[float, float]:
    """Mean return of ``policy`` against ``random`` over ``games`` fresh games, half per seat, and
    the half-width of its 95% interval."""
    env = envs.make_batched("recall", 256, **env_options)
    result = match(env, policy, envs.make_fixed_policy("recall", OPPONENT, **env_options), games, seed=seed)
    low, high = result.payoff_ci95
    return result.payoff, (high - low) / 2


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--updates", type=int, default=120)
    parser.add_argument("--games", type=int, default=4000, help="evaluation games per policy")
    parser.add_argument("--out", type=Path, default=None, help="also write the output here (for docs/data/)")
    args = parser.parse_args()
    with recorded(args.out):
        torch.set_num_threads(1)
        spec = envs.make_batched("recall", 1).spec
        signals, decisions = spec.num_actions, spec.max_steps
        best = best_score(signals)
        print(
            f"recall: {signals} signals, {decisions - 2} distractors ({decisions} decisions per episode), against "
            f"{OPPONENT}; {args.updates} updates x {NUM_ENVS * STEPS:,} env steps per learner; score = mean return "
            f"over {args.games:,} fresh games (half per seat)"
        )
        print(f"best achievable {best:.3f} (always recall the cue); without memory 0.000 (chance)")
        print(f"{'network':<13} {'seed':>4} {'score':>7} {'95%':>7} {'of best':>8} {'train s':>8}")
        scores: dict[str, list[float]] = {name: [] for name in NETWORKS}
        for seed in args.seeds:
            for network in NETWORKS:
                start = time.perf_counter()
                learner = train(network, seed, args.updates)
                seconds = time.perf_counter() - start
                mean, half_width = score(learner.policy, args.games)
                scores[network].append(mean)
                print(
                    f"{network:<13} {seed:>4} {mean:>7.3f} {half_width:>7.3f} {mean / best:>8.2f} {seconds:>8.0f}"
                )
        worst, ff = min(scores["recurrent"]), scores["feed-forward"]
        print(
            f"\nrecurrent: worst seed {worst:.3f} = {worst / best:.2f} of the best (target at least 0.90); "
            f"feed-forward: {min(ff):.3f} to {max(ff):.3f} (memoryless value 0.000)"
        )


if __name__ == "__main__":
    main()
