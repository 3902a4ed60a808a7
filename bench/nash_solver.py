"""Nash solver: our ``solve_zero_sum`` against OpenSpiel's LP solver, on random population games.

For each size (10, 50, 100, 200 policies) and each kind of matrix:

* ``win-rate``: ``P - 0.5`` for a random win-rate matrix (``P + P^T = 1``, so antisymmetric, value
  0), what a league's payoff table looks like;
* ``general``: i.i.d. uniform entries in [-1, 1] (no symmetry, non-zero value);

both solvers get the same ``--repeats`` fresh matrices, timed alternately (so machine load hits
both alike). The table reports each one's median time, the ratio (OpenSpiel / ours), and the
largest ``|v_ours - v_openspiel|`` over the repeats ("value gap"). The column "HiGHS" times scipy's HiGHS LP
alone (our fallback path) for reference. OpenSpiel's game object is built outside the timed call.

    python bench/nash_solver.py               # full
    python bench/nash_solver.py --quick       # smoke run (sizes 10 and 50, two repeats)
    python bench/nash_solver.py --markdown    # the table as markdown (for notes/benchmarks.md)

Targets: ours >= 10x faster than OpenSpiel's LP at 200 policies; game values equal within 1e-6.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from bench_output import recorded

from light_league.game_theory import nash

SIZES = (10, 50, 100, 200)
KINDS = ("win-rate", "general")
TARGET_SPEEDUP = 10.0
TARGET_VALUE_GAP = 1e-6


@dataclass
class Row:
    kind: str
    n: int
    ours_s: float
    openspiel_s: float
    highs_s: float
    value_gap: float

    @property
    def speedup(self) -> float:
        return self.openspiel_s / self.ours_s


def random_game(kind: str, n: int, rng: np.random.Generator) -> np.ndarray:
    """A random ``(n, n)`` zero-sum game of the given kind."""
    if kind == "win-rate":
        upper = rng.uniform(0.0, 1.0, (n, n))
        win_rate = np.triu(upper, 1) + np.tril(1.0 - upper.T, -1) + 0.5 * np.eye(n)
        return np.asarray(win_rate - 0.5)
    return rng.uniform(-1.0, 1.0, (n, n))


def timed(fn: Callable[..., float], *args: np.ndarray) -> tuple[float, float]:
    """``(seconds, value)`` of one call ``fn(*args)``."""
    start = time.perf_counter()
    value = fn(*args)
    return time.perf_counter() - start, value


def openspiel_solver(payoff: np.ndarray) -> Callable[[], float]:
    """OpenSpiel's LP on the game ``(M, -M)``, built here, outside the timed call."""
    import pyspiel
    from open_spiel.python.algorithms import lp_solver

    game = pyspiel.create_matrix_game(payoff, -payoff)
    return lambda: float(lp_solver.solve_zero_sum_matrix_game(game)[2])


def measure(kind: str, n: int, repeats: int, seed: int) -> Row:
    rng = np.random.default_rng([seed, n, KINDS.index(kind)])
    ours, theirs, highs, gaps = [], [], [], []
    for _ in range(repeats):
        payoff = random_game(kind, n, rng)
        theirs_fn = openspiel_solver(payoff)
        t_ours, v_ours = timed(ours_value, payoff)
        t_theirs, v_theirs = timed(theirs_fn)
        t_highs, _ = timed(highs_value, payoff)
        ours.append(t_ours)
        theirs.append(t_theirs)
        highs.append(t_highs)
        gaps.append(abs(v_ours - v_theirs))
    return Row(
        kind, n, statistics.median(ours), statistics.median(theirs), statistics.median(highs), max(gaps)
    )


def ours_value(payoff: np.ndarray) -> float:
    return nash.solve_zero_sum(payoff)[2]


def highs_value(payoff: np.ndarray) -> float:
    """Game value from scipy's HiGHS LP alone (our fallback path)."""
    solved = nash.maximin_lp(payoff)
    if solved is None:
        raise RuntimeError("scipy's HiGHS failed on a random game; rerun with another --seed")
    return solved[2]


def print_table(rows: list[Row], markdown: bool) -> None:
    head = ("matrix", "policies", "ours ms", "OpenSpiel ms", "speed-up", "HiGHS ms", "value gap")
    cells = [
        (
            r.kind,
            str(r.n),
            f"{r.ours_s * 1e3:.2f}",
            f"{r.openspiel_s * 1e3:.1f}",
            f"{r.speedup:.1f}x",
            f"{r.highs_s * 1e3:.1f}",
            f"{r.value_gap:.1e}",
        )
        for r in rows
    ]
    if markdown:
        print("| " + " | ".join(head) + " |")
        print("|" + "|".join(["---"] * 2 + ["---:"] * (len(head) - 2)) + "|")
        for c in cells:
            print("| " + " | ".join(c) + " |")
        return
    widths = [max(len(h), *(len(c[i]) for c in cells)) for i, h in enumerate(head)]
    print("  ".join(h.rjust(w) for h, w in zip(head, widths)))
    for c in cells:
        print("  ".join(v.rjust(w) for v, w in zip(c, widths)))


def print_targets(rows: list[Row]) -> None:
    largest = SIZES[-1]
    at_largest = [r for r in rows if r.n == largest]
    if at_largest:
        speed_ok = all(r.speedup >= TARGET_SPEEDUP for r in at_largest)
        speeds = ", ".join(f"{r.kind} {r.speedup:.1f}x" for r in at_largest)
        verdict = f"{'met' if speed_ok else 'MISSED'} ({speeds})"
    else:
        verdict = "not measured (--quick)"
    print(f"target speed-up >= {TARGET_SPEEDUP:.0f}x at {largest} policies: {verdict}")
    gap = max(r.value_gap for r in rows)
    print(
        f"target game values equal within {TARGET_VALUE_GAP:.0e}: "
        f"{'met' if gap <= TARGET_VALUE_GAP else 'MISSED'} (largest gap {gap:.1e})"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="sizes 10 and 50, two repeats")
    parser.add_argument("--repeats", type=int, default=7, help="random matrices per size and kind (median)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the random matrices")
    parser.add_argument("--markdown", action="store_true", help="print the table as markdown")
    parser.add_argument("--out", type=Path, default=None, help="also write the output here (for docs/data/)")
    args = parser.parse_args()
    with recorded(args.out):
        try:
            import pyspiel  # noqa: F401
        except ImportError:
            raise SystemExit("open_spiel is not installed: pip install open_spiel cvxpy ecos") from None
        sizes, repeats = (SIZES[:2], 2) if args.quick else (SIZES, args.repeats)
        nash.solve_zero_sum(random_game("general", 5, np.random.default_rng(0)))  # warm-up: imports
        openspiel_solver(random_game("general", 5, np.random.default_rng(0)))()
        rows = [measure(kind, n, repeats, args.seed) for kind in KINDS for n in sizes]
        print(f"Nash of random zero-sum games: median of {repeats} matrices per row, timed alternately")
        print_table(rows, args.markdown)
        print_targets(rows)


if __name__ == "__main__":
    main()
