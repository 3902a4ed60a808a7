"""Should a trained probe sample its actions or play its mode? (``evaluation.probe.play``)

For each probe seed and target of one run, the config's probe trains once; the trained learner
then plays the same fresh games twice against the target: sampling from its action
probabilities (``play: sample``) and playing its most probable legal action (``play: greedy``).
Same games, same learner, so the two columns differ only by how the probe acts. Prints each
reading with its 95% interval and, per target, the mean and the worst (lowest) over probe seeds.

    python bench/probe_play.py --run RUN_DIR --targets scripted_l5 main --seeds 0 1 2 3 --jobs 2
"""

from __future__ import annotations

import argparse
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np
from bench_output import recorded

#: the seed of every reading's evaluation games
GAMES_SEED = 2031


def reading(run: str, target: str, seed: int, games: int, settings: list[str]) -> dict[str, Any]:
    """Train the probe (seed ``seed``) against ``target`` of ``run``; score both ways."""
    from light_league.build import probe_settings, validate
    from light_league.evaluation.probe import Probe, greedy
    from light_league.exploit import probe_overrides
    from light_league.rollout.head_to_head import head_to_head
    from light_league.run_reader import RunReader

    reader = RunReader(Path(run), probe_overrides(["evaluation.probe.play=sample", *settings]))
    config = reader.config
    chosen = reader.target(target, None)
    policies = reader.policies(list(chosen.weights))
    settings_ = probe_settings(config, validate(config).learner, games=games)
    start = time.perf_counter()
    learner, env_steps, _ = Probe(config.env.name, config.env.options, settings_).train(
        policies, chosen.weights, seed, None
    )
    trained = time.perf_counter() - start
    env = reader.make_env(min(games, 256))
    try:
        out: dict[str, Any] = {"target": target, "seed": seed, "env_steps": env_steps, "train_s": trained}
        for play, policy in (("sample", learner.policy), ("greedy", greedy(learner.policy))):
            result = head_to_head(env, policy, policies, chosen.weights, games, seed=GAMES_SEED)
            out[play] = (
                (result.score, *result.score_ci95)
                if env.spec.win_loss
                else (result.payoff, *result.payoff_ci95)
            )
    finally:
        env.close()
    return out


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--run", required=True, help="a run directory (its config's probe is used)")
    ap.add_argument("--targets", nargs="+", default=["scripted_l5", "main"])
    ap.add_argument("--seeds", nargs="+", type=int, default=[0, 1, 2, 3])
    ap.add_argument("--games", type=int, default=2048)
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--out", type=Path)
    ap.add_argument("settings", nargs="*", help="probe overrides, e.g. evaluation.probe.env_steps=500000")
    args = ap.parse_args(argv)
    with recorded(args.out):
        jobs = [(args.run, t, s, args.games, args.settings) for t in args.targets for s in args.seeds]
        with ProcessPoolExecutor(args.jobs) as pool:
            results = list(pool.map(reading, *zip(*jobs, strict=True)))
        first = results[0]
        print(
            f"\nThe probe of {args.run}, {first['env_steps']:,} env steps of training, then {args.games} "
            "fresh games (the same for both columns): score = wins + draws / 2 (95% interval)"
        )
        for target in args.targets:
            rows = [r for r in results if r["target"] == target]
            print(f"\nagainst {target}:")
            print(f"  {'probe seed':<10}  {'sample':>22}  {'greedy':>22}  train s")
            for r in rows:
                cells = [f"{r[p][0]:.3f} [{r[p][1]:.3f}, {r[p][2]:.3f}]" for p in ("sample", "greedy")]
                print(f"  {r['seed']:<10}  {cells[0]:>22}  {cells[1]:>22}  {r['train_s']:7.0f}")
            for label, fn in (("mean", np.mean), ("worst", np.min)):
                cells = [f"{fn([r[p][0] for r in rows]):.3f}" for p in ("sample", "greedy")]
                print(f"  {label:<10}  {cells[0]:>22}  {cells[1]:>22}")


if __name__ == "__main__":
    main()
