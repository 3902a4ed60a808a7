"""How fast one MAPPO learner beats a fixed battalion opponent when trained directly against it.

A league's main agent can only beat ``scripted_l5`` if its learner can: this bench takes the
league out of the picture. For each named variant (MAPPO settings over the defaults) and each
seed, one learner trains in 2v2 battalion against a fixed opponent (``--opponent``, default
``scripted_l5``) with ``league.yaml``'s rollout shape (64 games x 50 steps = 3,200 env steps per
update, both seats), and every ``--every`` updates plays 64 evaluation games (32 per seat,
actions sampled) against ``scripted_l5``. It prints, per variant, the evaluation score (wins +
draws / 2) per checkpoint for every seed and the worst seed, the policy entropy, and the share
of each action in the last training batches (with how often fire was legal), which is what
shows *how* a policy plays.

    python bench/learner_vs_fixed.py --variants default mb4 --seeds 0 1 2 --updates 300
    python bench/learner_vs_fixed.py --list                     # the named variants
    python bench/learner_vs_fixed.py --ladder                   # the fixed policies' own table
    python bench/learner_vs_fixed.py ... --out notes/data/tuning/battalion_direct.txt

Variants run one after another in one process (interleaved by seed), so their timings are
comparable on a quiet machine; the figures that matter are per update, not per second.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
from bench_output import command_line, machine_line

from light_league import envs
from light_league.algorithms.mappo import MAPPOConfig, MAPPOLearner
from light_league.rollout.episode import EpisodeLoop
from light_league.rollout.head_to_head import match

NUM_ENVS, STEPS, EVAL_GAMES = 64, 50, 64
#: named MAPPO settings (over the defaults of docs/mappo.md)
VARIANTS: dict[str, dict[str, Any]] = {
    "default": {},
    "ent03": {"entropy_coef": 0.03},
    "ep4": {"ppo_epoch": 4},
    "lr1e-4": {"lr": 1e-4},
    "ent_decay": {
        "entropy_coef": 0.05,
        "lr_schedule": "linear",
        "lr_decay_updates": 300,
        "lr_final_fraction": 1.0,
        "entropy_final_fraction": 0.05,
    },
    "gamma0.995": {"gamma": 0.995, "gae_lambda": 0.98},
    "mb4": {"num_mini_batch": 4, "ppo_epoch": 5},
    "128x2": {"hidden_size": 128, "layer_N": 2},
    "mb4_128x2": {"num_mini_batch": 4, "ppo_epoch": 5, "hidden_size": 128, "layer_N": 2},
    "mb8_ep4": {"num_mini_batch": 8, "ppo_epoch": 4},
    "mb4_lr2e-4": {"num_mini_batch": 4, "ppo_epoch": 5, "lr": 2e-4},
    "mb4_ent02": {"num_mini_batch": 4, "ppo_epoch": 5, "entropy_coef": 0.02},
    "mb4_g995": {"num_mini_batch": 4, "ppo_epoch": 5, "gamma": 0.995, "gae_lambda": 0.98},
    "mb4_clip01": {"num_mini_batch": 4, "ppo_epoch": 5, "clip_param": 0.1},
}
ACTIONS = ("hold", "adv", "wdr", "turnL", "turnR", "stepL", "stepR", "fire")


def evaluate(policy: Any, opponent: str = "scripted_l5") -> float:
    env = envs.make_batched("battalion", num_envs=EVAL_GAMES, team_size=2)
    return match(env, policy, envs.make_fixed_policy("battalion", opponent), EVAL_GAMES, seed=12345).score


def versus_l5(policy: Any, games: int, seed: int) -> tuple[float, float, float]:
    """``policy``'s score against ``scripted_l5`` over ``games`` fresh games and its 95% interval."""
    env = envs.make_batched("battalion", num_envs=min(games, 128), team_size=2)
    result = match(
        env, policy, envs.make_fixed_policy("battalion", "scripted_l5", team_size=2), games, seed=seed
    )
    return result.score, *result.score_ci95


def ladder() -> list[str]:
    """The fixed policies against each other (row's score, 64 games per cell, both seats)."""
    names = ["random"] + [f"scripted_l{k}" for k in range(1, 6)]
    lines = ["Fixed policies against each other (row's score, 64 games per cell, both seats):"]
    lines.append(f"{'':<13}" + " ".join(f"{n.replace('scripted_', ''):>6}" for n in names))
    env = envs.make_batched("battalion", num_envs=EVAL_GAMES, team_size=2)
    for a in names:
        row = [
            match(
                env,
                envs.make_fixed_policy("battalion", a),
                envs.make_fixed_policy("battalion", b),
                EVAL_GAMES,
                seed=7,
            ).score
            for b in names
        ]
        lines.append(f"{a:<13}" + " ".join(f"{x:>6.2f}" for x in row))
    return lines


def train(
    variant: str, seed: int, updates: int, every: int, opponent: str, final_games: int = 0
) -> dict[str, Any]:
    env = envs.make_batched("battalion", num_envs=NUM_ENVS, team_size=2)
    learner = MAPPOLearner(env.spec, MAPPOConfig(**VARIANTS[variant]), seed=seed)
    loop = EpisodeLoop(env, seed=seed)
    fixed = {opponent: envs.make_fixed_policy("battalion", opponent)}
    scores, entropy = [], []
    acts = np.zeros(len(ACTIONS))
    fire_legal = fire_taken = 0
    start = time.perf_counter()
    for update in range(1, updates + 1):
        res = loop.collect(learner.policy, fixed, {opponent: 1.0}, STEPS)
        metrics = learner.update(res.batch)
        if update > updates - every:  # action shares over the last checkpoint's batches
            b = res.batch
            acts += np.bincount(b.actions[b.valid], minlength=len(ACTIONS))
            legal = b.action_mask[..., len(ACTIONS) - 1][b.valid]
            fire_legal += int(legal.sum())
            fire_taken += int((b.actions[b.valid][legal] == len(ACTIONS) - 1).sum())
        if update % every == 0:
            scores.append(evaluate(learner.policy))
            entropy.append(float(metrics["entropy"]))
    seconds = time.perf_counter() - start
    return {
        "final": versus_l5(learner.policy, final_games, seed + 20_000) if final_games else None,
        "scores": scores,
        "entropy": entropy,
        "actions": acts / max(acts.sum(), 1.0),
        "fire_legal": fire_legal / max(acts.sum(), 1.0),
        "fire_when_legal": fire_taken / max(fire_legal, 1),
        "seconds": seconds,
    }


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--variants", nargs="+", default=["default", "mb4"], choices=sorted(VARIANTS))
    ap.add_argument("--seeds", nargs="+", type=int, default=[0, 1, 2])
    ap.add_argument("--updates", type=int, default=300)
    ap.add_argument("--every", type=int, default=25)
    ap.add_argument("--opponent", default="scripted_l5")
    ap.add_argument(
        "--final-games", type=int, default=0, help="fresh games against scripted_l5 for the last policy"
    )
    ap.add_argument("--out", type=Path, help="also write the output to this file")
    ap.add_argument("--list", action="store_true", help="print the named variants and exit")
    ap.add_argument("--ladder", action="store_true", help="only play the fixed policies against each other")
    args = ap.parse_args(argv)
    if args.list:
        for name, settings in VARIANTS.items():
            print(f"{name}: {settings or 'MAPPO defaults'}")
        return
    lines = [
        "# command: " + command_line(sys.argv if argv is None else ["bench/learner_vs_fixed.py", *argv]),
        f"# {machine_line()}",
    ]
    if args.ladder:
        return _emit([*lines, *ladder()], args.out)
    results = {
        (v, s): train(v, s, args.updates, args.every, args.opponent, args.final_games)
        for s in args.seeds
        for v in args.variants
    }
    load = os.getloadavg()
    lines.append(
        f"# finished {time.strftime('%H:%M UTC', time.gmtime())}, load average {load[0]:.1f} / {load[1]:.1f}"
    )
    marks = " ".join(f"{(i + 1) * args.every:>4d}" for i in range(args.updates // args.every))
    lines += [
        f"Trained against {args.opponent}; 3,200 env steps per update; evaluation score vs scripted_l5 "
        f"({EVAL_GAMES} games, wins + draws/2) after update:",
        f"{'':<22}{marks}",
    ]
    for v in args.variants:
        runs = [results[v, s] for s in args.seeds]
        for s, r in zip(args.seeds, runs, strict=True):
            lines.append(f"{v + ' seed ' + str(s):<22}" + " ".join(f"{x:>4.2f}" for x in r["scores"]))
        worst = np.min([r["scores"] for r in runs], axis=0)
        lines.append(f"{v + ' worst':<22}" + " ".join(f"{x:>4.2f}" for x in worst))
    if args.final_games:
        lines += [
            "",
            f"The last policy against scripted_l5, {args.final_games} fresh games (95% Jeffreys interval):",
        ]
        for v in args.variants:
            for s in args.seeds:
                score, low, high = results[v, s]["final"]
                lines.append(f"  {v + ' seed ' + str(s):<22}{score:.3f} [{low:.3f}, {high:.3f}]")
    lines += [
        "",
        "At the end (mean over seeds): policy entropy (nats), share of each action, fire taken when legal:",
    ]
    for v in args.variants:
        runs = [results[v, s] for s in args.seeds]
        share = np.mean([r["actions"] for r in runs], axis=0)
        lines.append(
            f"  {v:<12} entropy {np.mean([r['entropy'][-1] for r in runs]):.3f}; "
            + " ".join(f"{a} {p:.2f}" for a, p in zip(ACTIONS, share, strict=True))
            + f"; fire legal {np.mean([r['fire_legal'] for r in runs]):.2f} of steps,"
            f" taken {np.mean([r['fire_when_legal'] for r in runs]):.2f} of those;"
            f" {np.mean([r['seconds'] for r in runs]):.0f} s per run"
        )
    _emit(lines, args.out)


def _emit(lines: list[str], out: Path | None) -> None:
    text = "\n".join(lines) + "\n"
    print(text, end="")
    if out:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(text, encoding="utf-8")


if __name__ == "__main__":
    main()
