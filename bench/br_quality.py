"""How good a best response can one MAPPO learner find against a league's Nash mixture?

A league lowers the NashConv of its Nash mixture only through members that beat that mixture:
on a poker game every new exploiter is meant to be an approximate best response. This bench
measures how approximate, exactly. It reads a finished run of a poker config (``--run``), takes
its last generation's Nash mixture as one fixed opponent (the members' behaviour policies mixed
by their Nash weights, an exact tabular policy), and trains one MAPPO learner against it with
the run's rollout shape (``envs_per_worker`` x ``steps_per_call`` env steps per update), once
per named variant (MAPPO settings over the run's exploiter settings) and seed. Every ``--every``
updates it computes, exactly, the learner's gain over the mixture's own value, averaged over the
two seats, and prints it as a share of the best response's gain (the mixture's NashConv / 2):
1.0 is an exact best response, 0 is no better than the mixture, below 0 worse.

    python main.py --config expr_configs/league_leduc.yaml --run-dir /tmp/leduc20 stop.target_nash_conv=null
    python bench/br_quality.py --run /tmp/leduc20 --variants shipped sharp --seeds 0 1 2 --updates 64

``--init main`` starts every learner from the run's newest main-agent snapshot instead of fresh
weights (``reset_to: main_agent``). A league exploiter gets ``steps_per_generation`` /
(env steps per update) updates per generation (16 for ``league_leduc.yaml``): the share at that
update is what one generation's exploiter brings to the mixture.
"""

from __future__ import annotations

import argparse
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from bench_output import recorded

from light_league import envs
from light_league.algorithms import game_tree
from light_league.algorithms.mappo import MAPPOLearner
from light_league.algorithms.mappo.serialization import load_policy_files
from light_league.rollout.episode import EpisodeLoop
from light_league.run_reader import RunReader

#: named changes over the run's league-exploiter MAPPO settings
VARIANTS: dict[str, dict[str, Any]] = {
    "shipped": {},
    "sharp": {"entropy_coef": 0.005, "clip_param": 0.2},
    "sharp_lr2e-3": {"entropy_coef": 0.005, "clip_param": 0.2, "lr": 2e-3, "critic_lr": 4e-3},
    "sharp_mb4": {"entropy_coef": 0.005, "clip_param": 0.2, "num_mini_batch": 4},
    "clip0.2": {"clip_param": 0.2},
    "ent0.01": {"entropy_coef": 0.01},
}


@dataclass
class Opponent:
    """A run's last Nash mixture as one fixed tabular policy, with the exact values to score against."""

    policy: Any
    support: dict[str, float]
    own: float  #: the mixture's value against itself in the first seat (-own in the second)
    nash_conv: float  #: twice the exact best response's gain over the mixture, mean over seats


def nash_mixture(run: RunReader, env_name: str) -> Opponent:
    support = run.target("meta").weights
    weights = np.array(list(support.values())) / sum(support.values())
    policies = list(run.policies(list(support)).values())
    mixture = game_tree.mixture_policy(env_name, policies, weights)
    return Opponent(
        mixture,
        dict(zip(support, weights.tolist())),
        game_tree.expected_payoff(env_name, mixture, mixture),
        game_tree.nash_conv(env_name, mixture),
    )


def newest_main(run: RunReader) -> Path:
    """The policy files of the last generation's newest main agent (the first main agent's)."""
    main = next(iter(run.target("main").weights))
    return run.policy_path(main)


def share(env_name: str, policy: Any, opponent: Opponent) -> float:
    """The learner's exact payoff against the mixture minus the mixture's own, mean over seats,
    as a share of the exact best response's (NashConv / 2)."""
    as_first = game_tree.expected_payoff(env_name, policy, opponent.policy) - opponent.own
    as_second = -game_tree.expected_payoff(env_name, opponent.policy, policy) + opponent.own
    return 0.5 * (as_first + as_second) / (opponent.nash_conv / 2)


def train(
    run: RunReader, config: Any, opponent: Opponent, variant: str, seed: int, args: argparse.Namespace
) -> tuple[list[float], float]:
    mappo = config.learner.mappo_for("league_exploiter").model_copy(update=VARIANTS[variant])
    env = envs.make_batched(config.env.name, num_envs=config.execution.envs_per_worker)
    learner = MAPPOLearner(env.spec, mappo, seed=seed)
    if args.init == "main":
        learner.set_weights(load_policy_files(newest_main(run))[0])
    loop = EpisodeLoop(env, seed=seed)
    shares = []
    start = time.perf_counter()
    for update in range(1, args.updates + 1):
        res = loop.collect(
            learner.policy, {"mixture": opponent.policy}, {"mixture": 1.0}, config.execution.steps_per_call
        )
        learner.update(res.batch)
        if update % args.every == 0:
            shares.append(share(config.env.name, learner.policy, opponent))
    return shares, time.perf_counter() - start


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--run", type=Path, required=True, help="a finished run of a poker config")
    ap.add_argument("--variants", nargs="+", default=["shipped", "sharp"], choices=sorted(VARIANTS))
    ap.add_argument("--seeds", nargs="+", type=int, default=[0, 1, 2])
    ap.add_argument("--updates", type=int, default=64)
    ap.add_argument("--every", type=int, default=8)
    ap.add_argument("--init", choices=("fresh", "main"), default="fresh")
    ap.add_argument("--out", type=Path, help="also write the output to this file")
    args = ap.parse_args()
    with recorded(args.out):
        run = RunReader(args.run)
        config = run.config
        opponent = nash_mixture(run, config.env.name)
        nash_conv = opponent.nash_conv
        print(f"opponent: the last Nash mixture of {args.run} on {config.env.name}: NashConv {nash_conv:.3f}")
        print("  support: " + ", ".join(f"{k} {w:.3f}" for k, w in opponent.support.items()))
        per_update = config.execution.envs_per_worker * config.execution.steps_per_call
        print(f"{per_update} env steps per update; init {args.init}; share of the best response's gain")
        print(f"(NashConv / 2 = {nash_conv / 2:.3f}) captured after each {args.every} updates:")
        for variant in args.variants:
            rows = []
            for seed in args.seeds:
                shares, seconds = train(run, config, opponent, variant, seed, args)
                rows.append(shares)
                print(
                    f"  {variant} s{seed}: " + " ".join(f"{s:6.3f}" for s in shares) + f"   ({seconds:.0f} s)"
                )
            worst = np.min(np.array(rows), axis=0)
            print(f"  {variant} worst: " + " ".join(f"{s:6.3f}" for s in worst))


if __name__ == "__main__":
    main()
