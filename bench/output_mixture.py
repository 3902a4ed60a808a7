"""What would finished poker runs have reported with the least exploitable mixture as their output?

A league's NashConv is measured on one mixture of its members: the meta-strategy (the Nash
mixture of the payoff table) by default, or, with ``evaluation.nash_conv: least_exploitable``,
the members' least exploitable mixture. This bench reads finished runs of a poker config (their
``generations.jsonl`` and frozen policies), solves every generation's least exploitable mixture
of that generation's members, and prints both curves at the wall-time marks, per run and over
the runs (mean / worst). The least exploitable curve's times include the solve time so far (the
run would have spent it), so the two curves are comparable at equal wall time. Training is the
same either way (the output mixture is not trained against), so this is what the same runs would
have reported.

    python bench/exploitability_per_minute.py expr_configs/league_leduc.yaml:10 --seeds 3 4 5 \\
        --set evaluation.nash_conv=auto --workdir /tmp/w
    python bench/output_mixture.py /tmp/w/ours_league_leduc_seed3 /tmp/w/ours_league_leduc_seed4 ...

A run that already reports ``least_exploitable`` is read as it is (its ``meta_nash_conv`` is the
meta-strategy's curve).
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np
from bench_output import recorded

from light_league.algorithms import game_tree
from light_league.run_reader import RunReader

MARKS = (30, 60, 120, 180, 300, 450, 600)


def at(points: list[tuple[float, float]], seconds: float) -> float:
    """The value of the last point at or before ``seconds`` (NaN before the first)."""
    values = [v for t, v in points if t <= seconds]
    return values[-1] if values else float("nan")


def curves(path: Path) -> tuple[list[tuple[float, float]], list[tuple[float, float]], float]:
    """(meta-strategy curve, least exploitable curve, seconds spent solving) of one run."""
    run = RunReader(path)
    env = run.config.env.name
    meta, best, spent, policies = [], [], 0.0, {}
    for rec in run.records():
        solved = None if rec.least_exploitable is None else rec.least_exploitable_nash_conv
        meta.append((rec.wall_s, rec.meta_nash_conv))
        if solved is not None:
            best.append((rec.wall_s, solved))
            continue
        ids = list(rec.member_roles)
        for pid in ids:
            if pid not in policies:
                policies[pid] = run.policy(pid)
        began = time.perf_counter()
        result = game_tree.least_exploitable(env, [policies[pid] for pid in ids])
        spent += time.perf_counter() - began
        best.append((rec.wall_s + spent, result.nash_conv))
    return meta, best, spent


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("runs", nargs="+", type=Path, help="run directories of a poker config")
    parser.add_argument("--out", type=Path, help="also write the output here (for docs/data/)")
    args = parser.parse_args()
    with recorded(args.out):
        rows: dict[str, list[list[float]]] = {"meta-strategy": [], "least exploitable": []}
        print("NashConv at wall-time marks " + " ".join(f"{m:>6d}s" for m in MARKS))
        for run in args.runs:
            meta, best, spent = curves(run)
            print(f"{run.name}: {len(meta)} generations, {spent:.1f} s solving")
            for name, points in (("meta-strategy", meta), ("least exploitable", best)):
                values = [at(points, m) for m in MARKS]
                rows[name].append(values)
                print(f"  {name:<26}" + " ".join(f"{v:7.3f}" for v in values))
        print("over the runs, mean / worst:")
        for name, values in rows.items():
            a = np.array(values)
            cells = "  ".join(f"{a[:, j].mean():.3f}/{a[:, j].max():.3f}" for j in range(len(MARKS)))
            print(f"  {name:<18} {cells}")


if __name__ == "__main__":
    main()
