"""Paired games against unpaired ones: the spread of a payoff-table cell's estimate, side by side.

For each pair of members of a finished run (``--pairs A:B``; default: the newest main agent
against the newest snapshot of each other learner), plays ``--reps`` independent estimates of
the cell, each ``--games`` games per seat order, once unpaired (``evaluation.paired_games:
false``) and once paired (``true``, both seat orders from the same seeds), every repeat from its
own loop seed. Prints each cell's mean and standard deviation under both, the ratio of the
standard deviations, and the unpaired games that would give the paired spread (the variance
ratio). Both means estimate the same expected payoff; where the game has an exact evaluator
(poker) it is printed beside them.

    python bench/paired_games.py --run RUN_DIR --games 500 --reps 30
"""

from __future__ import annotations

import argparse
import time
from typing import Any

import numpy as np
from bench_output import recorded

from light_league.rollout.episode import EpisodeLoop
from light_league.run_reader import RunReader
from light_league.types import newest_snapshots


def default_pairs(reader: RunReader) -> list[tuple[str, str]]:
    """The newest main agent against the newest snapshot of each other learner and against the
    main lineage's middle snapshot."""
    members = reader.members()
    ids, roles = list(members), list(members.values())
    newest = [ids[i] for i in newest_snapshots(ids, roles)]
    main = next((m for m in newest if members[m] == "main_agent"), None)
    if main is None:
        raise SystemExit(f"{reader.root}: no main-agent snapshot; name members with --pairs A:B")
    lineage = [m for m in ids if members[m] == "main_agent" and m.split("-v")[0] == main.split("-v")[0]]
    older = sorted((m for m in lineage if m != main), key=lambda m: int(m.rsplit("-v", 1)[1]))
    picks = [m for m in newest if m != main] + older[len(older) // 2 : len(older) // 2 + 1]
    return [(main, o) for o in picks]


def exact_value(env_name: str, a: Any, b: Any) -> float | None:
    """``a``'s exact mean return over both seat orders against ``b`` (None without an evaluator)."""
    try:
        from light_league.algorithms.game_tree import expected_payoff_matrix

        values = expected_payoff_matrix(env_name, [a, b], [a, b])
    except (ValueError, KeyError, ImportError):
        return None
    return float((values[0, 1] - values[1, 0]) / 2)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--run", required=True, help="a run directory")
    ap.add_argument("--pairs", nargs="*", default=None, help="A:B member pairs (default: see above)")
    ap.add_argument("--games", type=int, default=500, help="games per seat order in one estimate")
    ap.add_argument("--reps", type=int, default=30, help="independent estimates per method")
    ap.add_argument("--envs", type=int, default=256, help="games stepped together")
    ap.add_argument("--out", default=None, help="also write the output here")
    args = ap.parse_args(argv)
    reader = RunReader(args.run)
    pairs = [tuple(p.split(":", 1)) for p in args.pairs] if args.pairs else default_pairs(reader)
    env_name = reader.config.env.name
    with recorded(args.out):
        print(
            f"run {args.run} ({env_name}); one estimate = {args.games} games per seat order; {args.reps} estimates per method"
        )
        print("a's mean return per game against b over both seat orders: mean and sd of the estimates")
        print(
            f"{'a':<24} {'b':<26} {'exact':>7} {'unpaired':>17} {'paired':>17} {'sd ratio':>8} {'worth':>6} {'time ratio':>10}"
        )
        for a, b in pairs:
            pols = reader.policies([a, b])
            est: dict[bool, list[float]] = {False: [], True: []}
            secs: dict[bool, float] = {False: 0.0, True: 0.0}
            for rep in range(args.reps):
                for paired in (False, True):  # interleaved, so load hits both alike
                    start = time.perf_counter()
                    loop = EpisodeLoop(reader.make_env(args.envs), seed=10_000 + rep)
                    out = loop.evaluate(pols, [(a, b, args.games), (b, a, args.games)], paired=paired)
                    secs[paired] += time.perf_counter() - start
                    ret = [r.player_return if r.player_id == a else -r.player_return for r in out.results]
                    est[paired].append(float(np.mean(ret)))
            u, p = np.array(est[False]), np.array(est[True])
            exact = exact_value(env_name, pols[a], pols[b])
            ratio = p.std(ddof=1) / u.std(ddof=1)
            print(
                f"{a:<24} {b:<26} {'' if exact is None else f'{exact:+.4f}':>7} "
                f"{u.mean():+.4f} ± {u.std(ddof=1):.4f} {p.mean():+.4f} ± {p.std(ddof=1):.4f} "
                f"{ratio:>8.2f} {1 / ratio**2:>5.1f}x {secs[True] / secs[False]:>10.2f}"
            )
        print(
            "\nsd ratio: paired over unpaired; worth: unpaired games that give the paired spread, "
            "per paired game (variance ratio); time ratio: paired seconds over unpaired"
        )


if __name__ == "__main__":
    main()
