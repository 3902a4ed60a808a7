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
bound of the speed-up an overlap can give on this machine, whatever its implementation. It also prints the bytes of
match log (``matches.jsonl``) the run wrote per generation.

With ``--ab KEY=VALUE`` the config also runs with that override (``--ab execution.overlap=true``:
acting and learning overlapped against the sequential rounds), and with ``--against REV`` also on
git revision ``REV``'s code (a temporary worktree; the code of the time a target was set): the
sides run one after the other, ``--repeats`` times, and each ratio to the first side is printed
per repeat (the runs of one repeat are minutes apart, so they see about the same machine).

    python bench/league_throughput.py                          # league.yaml, 6 generations
    python bench/league_throughput.py --config expr_configs/league_leduc.yaml --generations 10
    python bench/league_throughput.py --ab execution.overlap=true --against 9494929 --repeats 2
"""

from __future__ import annotations

import argparse
import contextlib
import math
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from bench_output import recorded

from light_league.run_dir import RunDir
from light_league.run_reader import RunReader

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


def run_league(
    config: str, generations: int, overrides: list[str], root: Path = ROOT
) -> tuple[list[dict], list[CpuTicks], int]:
    """The run's generation records, the CPU counters read as each one landed and the bytes of
    its match log (``root``: the source tree whose ``main.py`` and package run, this checkout by
    default)."""
    with tempfile.TemporaryDirectory() as tmp:
        run_dir = Path(tmp) / "run"
        cmd = [
            sys.executable,
            str(root / "main.py"),
            "--config",
            config,
            "--run-dir",
            str(run_dir),
            f"stop.max_generations={generations}",
            "stop.max_wall_s=null",
            *overrides,
            "--quiet",
        ]
        env = {
            **os.environ,
            "RAY_USAGE_STATS_ENABLED": "0",
            "WANDB_MODE": "disabled",
            "PYTHONPATH": str(root),
        }
        proc = subprocess.Popen(cmd, cwd=root, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        path = RunDir(run_dir).generations  # its lines are counted as they land, not read
        ticks: list[CpuTicks] = []
        while proc.poll() is None:
            lines = path.read_text().count("\n") if path.exists() else 0
            while len(ticks) < lines:
                ticks.append(CpuTicks.now())
            time.sleep(0.02)
        _, err = proc.communicate()
        if proc.returncode != 0:
            raise SystemExit(f"{' '.join(cmd)} failed ({proc.returncode}): {err.decode()[-2000:]}")
        records = RunReader(run_dir).records()
        matches = RunDir(run_dir).matches
        return records, ticks[: len(records)], matches.stat().st_size if matches.exists() else 0


@dataclass
class Figures:
    steps_per_s: float
    steps: int
    wall: float
    per_gen: float
    rollout: float  #: NaN for code that does not record the split (before train_split_s)
    update: float
    evaluate: float
    busy: float
    log_bytes: float  #: the match log's bytes per generation (generation 0 included)


def measure(config: str, generations: int, overrides: list[str], root: Path = ROOT) -> Figures:
    records, ticks, log_bytes = run_league(config, generations, overrides, root)
    first, last = records[0], records[-1]
    span = len(records) - 1
    wall = last.wall_s - first.wall_s
    steps = last.env_steps - first.env_steps
    later = records[1:]
    return Figures(
        steps_per_s=steps / wall,
        steps=steps,
        wall=wall,
        per_gen=wall / span,
        rollout=sum(r.train_split_s.get("rollout", math.nan) for r in later) / span,
        update=sum(r.train_split_s.get("update", math.nan) for r in later) / span,
        evaluate=sum(r.timings.get("evaluate", 0.0) for r in later) / span,
        busy=(ticks[-1].busy - ticks[0].busy) / max(ticks[-1].total - ticks[0].total, 1),
        log_bytes=log_bytes / len(records),
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
    print(f"match log written per generation:    {f.log_bytes / 1e3:>10,.1f} kB")
    print(f"busy share of the {cores} cores:          {f.busy:>10.2f}")
    print(f"upper bound of an acting/learning overlap here (1 / busy): {1 / max(f.busy, 1e-9):.2f}x")


def git_revision(root: Path) -> str:
    out = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=root, capture_output=True, text=True)
    return out.stdout.strip() or "unknown"


@contextlib.contextmanager
def worktree(rev: str) -> Iterator[Path]:
    """A detached git worktree of ``rev`` in a temporary folder, removed afterwards."""
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "tree"
        subprocess.run(["git", "worktree", "add", "--detach", "-q", str(path), rev], cwd=ROOT, check=True)
        try:
            yield path
        finally:
            subprocess.run(["git", "worktree", "remove", "--force", str(path)], cwd=ROOT, check=False)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--config", default="expr_configs/league.yaml")
    parser.add_argument("--generations", type=int, default=6, help="generations run (the first is left out)")
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", help="a config override")
    parser.add_argument("--ab", default=None, metavar="KEY=VALUE", help="also run with this override")
    parser.add_argument("--against", default=None, metavar="REV", help="also run git revision REV's code")
    parser.add_argument("--repeats", type=int, default=1, help="runs of each side (one after the other)")
    parser.add_argument("--out", type=Path, default=None, help="also write the output here (for docs/data/)")
    args = parser.parse_args()
    if args.generations < 2:
        parser.error(f"--generations {args.generations}: at least 2 (generation 0 is left out)")
    if args.ab is not None and "=" not in args.ab:
        parser.error(f"--ab {args.ab}: write KEY=VALUE, e.g. --ab execution.overlap=true")
    cores = os.cpu_count() or 1
    span = f"generations 1-{args.generations - 1} of {args.generations} (0 left out); {cores} cores"
    with recorded(args.out), contextlib.ExitStack() as stack:
        # (label, source tree, overrides), run in this order in every repeat
        here = git_revision(ROOT)
        sides: list[tuple[str, Path, list[str]]] = []
        if args.against is not None:
            sides.append((f"revision {args.against}", stack.enter_context(worktree(args.against)), args.set))
        sides.append((f"this checkout ({here})", ROOT, args.set))
        if args.ab is not None:
            sides.append((f"this checkout ({here}) with {args.ab}", ROOT, [*args.set, args.ab]))
        runs: dict[str, list[Figures]] = {label: [] for label, _, _ in sides}
        for _ in range(args.repeats):
            for label, root, overrides in sides:
                runs[label].append(measure(args.config, args.generations, overrides, root))
        print(f"{args.config} {' '.join(args.set)}: {span}")
        for label, figures in runs.items():
            for i, f in enumerate(figures):
                print(f"\n-- {label}, run {i + 1} of {args.repeats}")
                report(f, cores)
        first = sides[0][0]
        if len(sides) > 1:
            print()
        for label, figures in list(runs.items())[1:]:
            pairs = [f.steps_per_s / b.steps_per_s for b, f in zip(runs[first], figures)]
            print(
                f"env steps/s, {label} / {first}, per repeat: "
                + " ".join(f"{r:.2f}" for r in pairs)
                + f" (median {statistics.median(pairs):.2f}x)"
            )


if __name__ == "__main__":
    main()
