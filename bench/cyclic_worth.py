"""Where a league's worth shows: a cyclic matrix game, league against plain self-play.

On the disc game (Balduzzi et al. 2019, "Open-ended learning in symmetric zero-sum games";
``light_league/envs/matrix_games.py``) every strategy beats the ones up to half a turn behind it, so a single
agent that only plays itself has nothing to hold on to: a learner that samples its own actions
stops learning once it plays one point (against itself every game is a draw, and no other action
is ever tried). A league keeps the population and mixes it by the Nash of its payoff table.

For each seed, ``CONFIG`` (default ``expr_configs/rps_tiny.yaml``, its settings unchanged) on the
game with the league scheduler and with ``scheduler.name=self_play``, each for the same wall time
(``--wall``), one after the other. Then, exactly (the game is a matrix: no games are played):

* the NashConv of each run's newest main agent and of its meta-strategy after every generation
  (0 at an equilibrium; a pure strategy of the 7-point disc game is at 1.950), read at the wall
  clock marks ``--marks`` (the last generation finished by then), at the end, and averaged over
  the last quarter of the run;
* the league's newest main agent against the self-play run's, and meta-strategy against
  meta-strategy: the expected score (win 1, draw 0.5) of the league's side, half the games in
  each seat; 0.5 is even.

``--set KEY=VALUE`` overrides a setting in both runs.

    python bench/cyclic_worth.py --seeds 3 4 5 --wall 60 --marks 15 30 45 --work /tmp/cw
    python bench/cyclic_worth.py --set learner.by_role.main_agent.entropy_coef=0.1 ... --work /tmp/cw2
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
from bench_output import print_table, recorded

ROOT = Path(__file__).resolve().parents[1]
SIDES = ("league", "self_play")
OUTPUTS = ("main", "meta")


def run(config: str, side: str, seed: int, args: argparse.Namespace) -> Path:
    """``main.py`` with ``side``'s scheduler on the game; an existing run is read, not rerun."""
    from light_league.run_dir import RunDir

    run_dir = args.work / f"{side}_s{seed}"
    if RunDir(run_dir).generations.exists():
        return run_dir
    overrides = [f"env.name={args.env}", f"scheduler.name={side}", f"experiment.seed={seed}"]
    if args.env == "disc":
        overrides.append(f"env.options.num_points={args.num_points}")
    overrides += [*args.set, f"stop.max_generations={args.max_generations}", f"stop.max_wall_s={args.wall}"]
    args.work.mkdir(parents=True, exist_ok=True)
    log = args.work / f"{side}_s{seed}.log"
    with log.open("w") as sink:
        proc = subprocess.run(
            [sys.executable, "main.py", "--config", config, "--quiet", "--run-dir", str(run_dir), *overrides],
            cwd=ROOT,
            stdout=sink,
            stderr=subprocess.STDOUT,
            check=False,
        )
    if proc.returncode != 0:
        raise SystemExit(f"main.py failed with status {proc.returncode} for {run_dir}; see {log}")
    return run_dir


def nash_conv(payoff: np.ndarray, seat0: np.ndarray, seat1: np.ndarray) -> float:
    """What a best response gains, summed over both seats, against the profile (seat 0 receives
    ``payoff[a0, a1]``, seat 1 its negation)."""
    value = float(seat0 @ payoff @ seat1)
    return float(np.max(payoff @ seat1) - value + np.max(-(seat0 @ payoff)) + value)


def score(
    payoff: np.ndarray, ours: tuple[np.ndarray, np.ndarray], theirs: tuple[np.ndarray, np.ndarray]
) -> float:
    """``ours``' expected outcome against ``theirs`` (1 win, 0.5 draw, 0 loss), half the games in
    each seat: the env's outcome, seat 0's payoff mapped linearly from [min, max] to [0, 1]."""
    low, high = float(payoff.min()), float(payoff.max())
    as_seat0 = (float(ours[0] @ payoff @ theirs[1]) - low) / (high - low)
    as_seat1 = 1.0 - (float(theirs[0] @ payoff @ ours[1]) - low) / (high - low)
    return (as_seat0 + as_seat1) / 2.0


class Strategies:
    """A run's members as action distributions, per seat (the observation is constant)."""

    def __init__(self, run_dir: Path) -> None:
        from light_league.run_reader import RunReader

        self.reader = RunReader(run_dir)
        step = self.reader.make_env(1).reset(seed=0)
        self.obs = step.obs[0].astype(np.float32)  # (seats, obs_dim)
        self.mask = step.action_mask[0]
        self._cache: dict[str, tuple[np.ndarray, np.ndarray]] = {}

    def member(self, member_id: str) -> tuple[np.ndarray, np.ndarray]:
        if member_id not in self._cache:
            policy = self.reader.policy(member_id)
            # each seat is a team of one: position 0 of its team
            logp = policy.log_probs(self.obs, self.mask, np.zeros(len(self.obs), dtype=np.int64))
            probs = np.exp(np.asarray(logp, dtype=np.float64))
            self._cache[member_id] = (probs[0] / probs[0].sum(), probs[1] / probs[1].sum())
        return self._cache[member_id]

    def output(self, name: str, generation: int) -> tuple[np.ndarray, np.ndarray]:
        """``main`` (newest main agent) or ``meta`` (the meta-strategy mixture) at ``generation``."""
        weights = self.reader.target(name, generation).weights
        total = sum(weights.values())
        mixed = [sum(w / total * self.member(m)[seat] for m, w in weights.items()) for seat in (0, 1)]
        return mixed[0], mixed[1]


def measure(seed: int, config: str, payoff: np.ndarray, args: argparse.Namespace) -> dict[str, Any]:
    """One seed: both runs' NashConv curves and the head-to-head scores at the end."""
    runs = {side: Strategies(run(config, side, seed, args)) for side in SIDES}
    result: dict[str, Any] = {"seed": seed}
    for side, strategies in runs.items():
        records = strategies.reader.records()
        curve = {name: [] for name in OUTPUTS}  # type: dict[str, list[tuple[float, float]]]
        for record in records:
            gen, wall = record.generation, float(record.wall_s or 0.0)
            for name in OUTPUTS:
                curve[name].append((wall, nash_conv(payoff, *strategies.output(name, gen))))
        result[side] = {"generations": len(records), "curves": curve}
    last = {side: runs[side].reader.records()[-1].generation for side in SIDES}
    for name in OUTPUTS:
        result[f"{name}_vs_{name}"] = score(
            payoff,
            runs["league"].output(name, last["league"]),
            runs["self_play"].output(name, last["self_play"]),
        )
    return result


def at_mark(curve: list[tuple[float, float]], mark: float) -> float | None:
    """The value of the last generation finished by ``mark`` seconds (None: none was)."""
    done = [v for t, v in curve if t <= mark]
    return done[-1] if done else None


def window_mean(curve: list[tuple[float, float]]) -> float:
    """The mean over the generations finished in the run's last quarter of wall time."""
    end = curve[-1][0]
    tail = [v for t, v in curve if t >= 0.75 * end]
    return float(np.mean(tail))


def fmt(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


def report(results: list[dict[str, Any]], args: argparse.Namespace, payoff: np.ndarray) -> None:
    pure = max(nash_conv(payoff, np.eye(len(payoff))[i], np.eye(len(payoff))[i]) for i in range(len(payoff)))
    uniform = np.full(len(payoff), 1.0 / len(payoff))
    print(
        f"{args.env}{f' ({args.num_points} points)' if args.env == 'disc' else ''}: league against "
        f"scheduler.name=self_play on {args.config}'s settings{''.join(f', {kv}' for kv in args.set)}, "
        f"{args.wall:g} s a run; exact NashConv "
        f"(uniform play {nash_conv(payoff, uniform, uniform):.3f}, the worst pure strategy {pure:.3f})"
    )
    head = ["seed", "run", "generations", *[f"@{m:g}s" for m in args.marks], "end", "last quarter"]
    for name, title in (("main", "The newest main agent"), ("meta", "The meta-strategy")):
        print(f"\n{title}:")
        rows, ends = [], {side: [] for side in SIDES}  # type: list[list[str]], dict[str, list[float]]
        for r in results:
            for side in SIDES:
                curve = r[side]["curves"][name]
                ends[side].append(window_mean(curve))
                rows.append(
                    [
                        str(r["seed"]),
                        side,
                        str(r[side]["generations"]),
                        *[fmt(at_mark(curve, m)) for m in args.marks],
                        fmt(curve[-1][1]),
                        fmt(window_mean(curve)),
                    ]
                )
        print_table(head, rows)
        for side in SIDES:
            print(f"{side}: last quarter mean {np.mean(ends[side]):.3f}, worst seed {max(ends[side]):.3f}")
    print(
        "\nHead to head at the end (the league's output's expected score against the self-play run's; 0.5 is even):"
    )
    print_table(
        ["seed", "main vs main", "meta vs meta"],
        [[str(r["seed"]), f"{r['main_vs_main']:.3f}", f"{r['meta_vs_meta']:.3f}"] for r in results],
    )
    for name in OUTPUTS:
        scores = [r[f"{name}_vs_{name}"] for r in results]
        print(f"{name} vs {name}: mean {np.mean(scores):.3f}, worst seed {min(scores):.3f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("config", nargs="?", default="expr_configs/rps_tiny.yaml")
    parser.add_argument("--env", default="disc", choices=["disc", "rps", "biased_rps"])
    parser.add_argument("--num-points", type=int, default=7, help="the disc game's points (3-64)")
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--wall", type=float, default=45.0, help="seconds a run (stop.max_wall_s)")
    parser.add_argument("--max-generations", type=int, default=100000, help="also stop after this many")
    parser.add_argument("--marks", type=float, nargs="*", default=[10.0, 20.0, 30.0])
    parser.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="a config override for both runs (repeatable)",
    )
    parser.add_argument("--work", type=Path, required=True, help="runs go here (existing ones are read)")
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    from light_league.envs.matrix_games import payoff_matrix

    payoff = np.array(payoff_matrix(args.env, args.num_points))
    with recorded(args.out):
        results = [measure(seed, args.config, payoff, args) for seed in args.seeds]
        (args.work / "cyclic_worth.json").write_text(json.dumps(results))
        report(results, args, payoff)


if __name__ == "__main__":
    main()
