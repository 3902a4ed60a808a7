"""How low can an entropy bonus let a learner's NashConv go?

A policy-gradient learner with an entropy bonus maximises return plus ``temperature`` times the
entropy of its decisions. Two such learners, at best, settle at the profile where each plays the
softmax of its soft action values, which count its later decisions' entropy too (a regularised
agent logit QRE; ``game_tree.soft_equilibrium``), not at a Nash equilibrium: that profile's exact
NashConv is the floor the bonus sets, whatever the league around the learner does. With advantages normalised (MAPPO's default), a bonus ``entropy_coef``
weighs like a temperature of ``entropy_coef`` times the advantages' standard deviation, in the
game's payoff units; the learner logs that deviation as ``train/<agent>/advantage_std``.

* ``--temperatures``: the floor at each temperature, on an exact game (Kuhn, Leduc);
* ``RUN_DIR ...``: each learner of a finished run, its effective temperature over its last
  ``--last`` updates (the mean of ``entropy_coef`` times ``advantage_std`` from TensorBoard) and
  the floor there. A magnet (``magnet_coef``) also pulls a learner, towards a policy that itself
  moves; it is not counted here.

    python bench/entropy_floor.py --game leduc_poker --temperatures 0.03 0.1 0.3 1
    python bench/entropy_floor.py RUN_DIR [RUN_DIR ...]
    python bench/entropy_floor.py ... --out docs/data/FILE.txt   # also to a file, with provenance

Measurement only: nothing in training reads it.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np
from bench_output import print_table, recorded

from light_league.algorithms import game_tree
from light_league.run_reader import RunReader

DEFAULT_TEMPERATURES = (0.01, 0.03, 0.1, 0.2, 0.3, 0.5, 1.0)
CONVERGED = 1e-3  #: a residual above this marks the row: the solve ran out of iterations


def floor_rows(game: str, temperatures: list[float]) -> list[list[str]]:
    rows = []
    for t in temperatures:
        start = time.perf_counter()
        soft = game_tree.soft_equilibrium(game, t)
        rows.append(
            [
                f"{t:g}",
                f"{soft.nash_conv:.4f}" + ("" if soft.residual <= CONVERGED else " (not converged)"),
                f"{soft.residual:.1e}",
                str(soft.iterations),
                f"{time.perf_counter() - start:.1f}",
            ]
        )
    return rows


def learner_temperatures(run: Path, last: int) -> dict[str, tuple[float, float, float]]:
    """learner -> (entropy_coef, advantage_std, temperature), means over its last ``last`` updates."""
    from tensorboard.backend.event_processing.event_accumulator import SCALARS, EventAccumulator

    missing = SystemExit(
        f"{run}: no train/<agent>/advantage_std in its TensorBoard log; runs from before that"
        " metric existed, or with logging.tensorboard off, cannot be read: rerun it"
    )
    if not (run / "tensorboard").is_dir():
        raise missing
    acc = EventAccumulator(str(run / "tensorboard"), size_guidance={SCALARS: 0})
    acc.Reload()
    tags = set(acc.Tags()[SCALARS])
    out = {}
    for tag in sorted(tags):
        if not (tag.startswith("train/") and tag.endswith("/advantage_std")):
            continue
        agent = tag[len("train/") : -len("/advantage_std")]
        coef_tag = f"train/{agent}/entropy_coef"
        if coef_tag not in tags:
            continue
        std = np.array([e.value for e in acc.Scalars(tag)][-last:])
        coef = np.array([e.value for e in acc.Scalars(coef_tag)][-last:])
        n = min(len(std), len(coef))
        if n == 0:
            continue
        temps = coef[-n:] * std[-n:]
        out[agent] = (float(coef[-n:].mean()), float(std[-n:].mean()), float(temps.mean()))
    if not out:
        raise missing
    return out


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("runs", nargs="*", type=Path, help="run directories of Kuhn or Leduc poker")
    ap.add_argument("--game", default=None, help="kuhn_poker or leduc_poker (with --temperatures)")
    ap.add_argument("--temperatures", type=float, nargs="+", default=None, help="in payoff units")
    ap.add_argument("--last", type=int, default=20, help="updates per learner to average over")
    ap.add_argument("--out", type=Path, default=None, help="also write the output here, with its provenance")
    args = ap.parse_args(argv)
    if not args.runs and args.game is None:
        raise SystemExit("give RUN_DIR ... or --game kuhn_poker|leduc_poker [--temperatures ...]")
    if args.temperatures is not None and any(t <= 0 for t in args.temperatures):
        raise SystemExit(f"--temperatures {args.temperatures}: every temperature must be > 0")
    if args.last < 1:
        raise SystemExit(f"--last {args.last}: average over at least one update")
    with recorded(args.out):
        if args.game is not None:
            temps = list(args.temperatures or DEFAULT_TEMPERATURES)
            print(f"\n{args.game}: NashConv of the soft equilibrium at each temperature (exact):")
            print_table(
                ["temperature", "NashConv", "residual", "iterations", "s"], floor_rows(args.game, temps)
            )
        for run in args.runs:
            game = RunReader(run).config.env.name
            rows = []
            for agent, (coef, std, temp) in learner_temperatures(run, args.last).items():
                soft = game_tree.soft_equilibrium(game, temp)
                floor = f"{soft.nash_conv:.4f}" + ("" if soft.residual <= CONVERGED else " (not converged)")
                rows.append([agent, f"{coef:.4g}", f"{std:.3f}", f"{temp:.4f}", floor])
            print(
                f"\n{run} ({game}): each learner's entropy bonus as a temperature, last {args.last} updates"
            )
            print_table(["learner", "entropy_coef", "advantage_std", "temperature", "floor NashConv"], rows)


if __name__ == "__main__":
    main()
