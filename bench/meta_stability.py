"""Cost of the meta-strategy stability figure: 100 posterior draws solved per meta-solver and size.

For random win-rate tables of N members (entries uniform in [0.2, 0.8], 50 games per cell) it
prints the time of one solve, the draws solved within the budget (``league.meta_stability_max_s``)
and the seconds spent, as ``AgentManager.solve`` runs them every generation.

    python bench/meta_stability.py                  # nash and qre at N = 20, 50, 100, 200 (about 30 s)
    python bench/meta_stability.py --solvers nash prd alpharank --sizes 20 50 --budget 2
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

import numpy as np
from bench_output import recorded

from light_league.agents.meta_solvers import META_SOLVERS
from light_league.game_theory.uncertainty import meta_stability


def random_table(n: int, rng: np.random.Generator) -> np.ndarray:
    upper = np.triu(rng.uniform(0.2, 0.8, size=(n, n)), 1)
    return np.asarray(upper + np.tril(1.0 - upper.T, -1) + 0.5 * np.eye(n))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--solvers", nargs="+", default=["nash", "qre"], choices=sorted(META_SOLVERS))
    parser.add_argument("--sizes", nargs="+", type=int, default=[20, 50, 100, 200])
    parser.add_argument("--draws", type=int, default=100)
    parser.add_argument("--budget", type=float, default=2.0, help="seconds (league.meta_stability_max_s)")
    parser.add_argument("--out", type=Path, default=None, help="also write the output here (for docs/data/)")
    args = parser.parse_args()
    with recorded(args.out):
        rng = np.random.default_rng(0)
        print(
            f"meta stability cost on {os.cpu_count()} CPUs, {time.strftime('%Y-%m-%d %H:%M')}, load {os.getloadavg()[0]:.1f}"
        )
        print(f"{'solver':<12}{'N':>6}{'one solve s':>13}{'draws':>8}{'seconds':>9}")
        for name in args.solvers:
            solver = META_SOLVERS[name]
            for n in args.sizes:
                table = random_table(n, rng)
                began = time.perf_counter()
                mixture = solver(table)
                one = time.perf_counter() - began
                stab = meta_stability(
                    solver,
                    None,
                    table,
                    np.full((n, n), 50.0),
                    mixture,
                    draws=args.draws,
                    rng=rng,
                    max_seconds=args.budget,
                    solve_seconds=one,
                )
                draws, secs = (stab.draws, stab.seconds) if stab is not None else (0, 0.0)
                print(f"{name:<12}{n:>6}{one:>13.4f}{draws:>8}{secs:>9.2f}")
        print(f"load average at the end: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
