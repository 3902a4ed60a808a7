"""League throughput: a shipped config's env steps per second, training included, and how busy it
keeps the machine, which bounds what overlapping acting and learning could gain here.

Runs ``python main.py --config CONFIG`` for ``--generations`` generations (no wall-time stop) in
a fresh run directory and reads the machine's CPU counters (``/proc/stat``) whenever a
generation's line lands in ``generations.jsonl``. Generation 0 is left out of the figures (it
pays for the start: Ray, the first weights, the first evaluations of the baselines). For the
other generations it prints env steps per second (training and evaluation games, as the run's
``env_steps`` counts them), the split of each generation's wall time (rollouts, updates,
evaluation, the rest) and the share of the machine's cores that were busy.

Acting (rollout workers) and learning (the learners' updates) alternate in a generation; run
side by side they could at most use the idle share of the cores, so ``1 / busy`` is an upper
bound of the speed-up an overlap can give on this machine, whatever its implementation.

With ``--ab KEY=VALUE`` the config runs without and with that override, alternating,
``--repeats`` times each, and the figures of both come side by side with their ratio
(``--ab execution.overlap=true``: acting and learning overlapped against the sequential rounds).

    python bench/league_throughput.py                          # league.yaml, 6 generations
    python bench/league_throughput.py --config expr_configs/league_leduc.yaml --generations 10
    python bench/league_throughput.py --ab execution.overlap=true --repeats 2
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from bench_output import recorded

ROOT = Path(__file__).resolve().parents[1]


@dataclass
class CpuTicks:
    busy: int
    total: int

    @staticmethod
    def now() -> CpuTicks:
        fields = [int(v) for v in Path("/proc/stat").read_text().splitlines()[0].split()[1:]]
        idle = fields[3] + (fields[4] if len(fields) > 4 else 0)  # idle + iowait
        total = sum(fields[:8])  # user nice system idle iowait irq softirq steal
        return CpuTicks(total - idle, total)


def run_league(config: str, generations: int, overrides: list[str]) -> tuple[list[dict], list[CpuTicks]]:
    """The run's generation records and the CPU counters read as each one landed."""
    with tempfile.TemporaryDirectory() as tmp:
        run_dir = Path(tmp) / "run"
        cmd = [
            sys.executable,
            str(ROOT / "main.py"),
            "--config",
            config,
            "--run-dir",
            str(run_dir),
            f"stop.max_generations={generations}",
            "stop.max_wall_s=null",
            *overrides,
            "--quiet",
        ]
        env = {**os.environ, "RAY_USAGE_STATS_ENABLED": "0", "WANDB_MODE": "disabled"}
        proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        path = run_dir / "generations.jsonl"
        ticks: list[CpuTicks] = []
        while proc.poll() is None:
            lines = path.read_text().count("\n") if path.exists() else 0
            while len(ticks) < lines:
                ticks.append(CpuTicks.now())
            time.sleep(0.02)
        _, err = proc.communicate()
        if proc.returncode != 0:
            raise SystemExit(f"{' '.join(cmd)} failed ({proc.returncode}): {err.decode()[-2000:]}")
        records = [json.loads(line) for line in path.read_text().splitlines()]
        return records, ticks[: len(records)]


@dataclass
class Figures:
    steps_per_s: float
    steps: int
    wall: float
    per_gen: float
    rollout: float
    update: float
    evaluate: float
    busy: float


def measure(config: str, generations: int, overrides: list[str]) -> Figures:
    records, ticks = run_league(config, generations, overrides)
    first, last = records[0], records[-1]
    span = len(records) - 1
    wall = last["wall_s"] - first["wall_s"]
    steps = last["env_steps"] - first["env_steps"]
    later = records[1:]
    return Figures(
        steps_per_s=steps / wall,
        steps=steps,
        wall=wall,
        per_gen=wall / span,
        rollout=sum(r["train_split_s"]["rollout"] for r in later) / span,
        update=sum(r["train_split_s"]["update"] for r in later) / span,
        evaluate=sum(r["timings"].get("evaluate", 0.0) for r in later) / span,
        busy=(ticks[-1].busy - ticks[0].busy) / max(ticks[-1].total - ticks[0].total, 1),
    )


def report(f: Figures, cores: int) -> None:
    print(
        f"env steps/s, training included:     {f.steps_per_s:>10,.0f}   ({f.steps:,} steps in {f.wall:.1f} s)"
    )
    print(f"seconds per generation:              {f.per_gen:>10.2f}")
    print(f"  train: waiting for rollouts        {f.rollout:>10.2f}   ({f.rollout / f.per_gen:.0%})")
    print(f"  train: learners' updates           {f.update:>10.2f}   ({f.update / f.per_gen:.0%})")
    print(f"  evaluation                         {f.evaluate:>10.2f}   ({f.evaluate / f.per_gen:.0%})")
    rest = f.per_gen - f.rollout - f.update - f.evaluate
    print(f"  the rest (plan, solve, log, save)  {rest:>10.2f}   ({rest / f.per_gen:.0%})")
    print(f"busy share of the {cores} cores:          {f.busy:>10.2f}")
    print(f"upper bound of an acting/learning overlap here (1 / busy): {1 / max(f.busy, 1e-9):.2f}x")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--config", default="expr_configs/league.yaml")
    parser.add_argument("--generations", type=int, default=6, help="generations run (the first is left out)")
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", help="a config override")
    parser.add_argument(
        "--ab", default=None, metavar="KEY=VALUE", help="compare without and with this override"
    )
    parser.add_argument("--repeats", type=int, default=1, help="runs of each side with --ab (alternating)")
    parser.add_argument("--out", type=Path, default=None, help="also write the output here (for docs/data/)")
    args = parser.parse_args()
    if args.generations < 2:
        parser.error(f"--generations {args.generations}: at least 2 (generation 0 is left out)")
    if args.ab is not None and "=" not in args.ab:
        parser.error(f"--ab {args.ab}: write KEY=VALUE, e.g. --ab execution.overlap=true")
    cores = os.cpu_count() or 1
    with recorded(args.out):
        span = f"generations 1-{args.generations - 1} of {args.generations} (0 left out); {cores} cores"
        if args.ab is None:
            print(f"{args.config} {' '.join(args.set)}: {span}")
            report(measure(args.config, args.generations, args.set), cores)
            return
        sides: dict[str, list[Figures]] = {"without": [], "with": []}
        for _ in range(args.repeats):
            sides["without"].append(measure(args.config, args.generations, args.set))
            sides["with"].append(measure(args.config, args.generations, [*args.set, args.ab]))
        print(f"{args.config} {' '.join(args.set)}: {span}; without and with {args.ab}, alternating")
        for side, runs in sides.items():
            for i, f in enumerate(runs):
                print(f"\n-- {side} {args.ab}, run {i + 1}")
                report(f, cores)
        pairs = [w.steps_per_s / o.steps_per_s for o, w in zip(sides["without"], sides["with"])]
        print(
            f"\nenv steps/s with {args.ab} / without, per pair of runs: "
            + " ".join(f"{r:.2f}" for r in pairs)
            + f" (median {statistics.median(pairs):.2f}x)"
        )


if __name__ == "__main__":
    main()
