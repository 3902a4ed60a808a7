"""A long league run, read back: generation time, population and NashConv per window of wall time.

Reads a finished (or running) run directory's ``generations.jsonl`` one line at a time and prints,
for each ``--window`` seconds of wall time: the generations that ended in it, the members at its
end (active and archived), the median generation time and its phases, and the exact NashConv of
the outputs where the game records one (the newest main agent, the meta-strategy, the average
policy). Then the two checks of a league meant to run for days: the median generation time of the
last ``--window`` seconds against that of the 10th minute (generations ending in 540-600 s), and
each output's NashConv at the end against its value at ``--mark`` seconds. Then the archive's
churn: the members brought back, and how many of them were archived again within ``--churn``
generations (a member brought back on luck leaves again soon). It times
``main.py report`` on the run and prints the run directory's size.

    python main.py --config expr_configs/league_kuhn.yaml stop.max_wall_s=7200 \\
        stop.max_generations=100000 --run-dir runs/kuhn_long
    python bench/long_run.py runs/kuhn_long
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

try:
    from bench_output import print_table, recorded
except ImportError:  # imported by a test rather than run as a script
    from bench.bench_output import print_table, recorded

from light_league.run_reader import RunReader

ROOT = Path(__file__).resolve().parents[1]
OUTPUTS = ("main_nash_conv", "meta_nash_conv", "average_nash_conv")
PHASES = ("train", "evaluate", "solve", "average")


@dataclass
class Generation:
    """What this bench reads of one generation record."""

    generation: int
    wall_s: float
    seconds: float  # this generation's wall time (from the previous record's end)
    active: int
    archived: int
    timings: dict[str, float]
    nash_conv: dict[str, float] = field(default_factory=dict)
    archived_now: tuple[str, ...] = ()
    restored_now: tuple[str, ...] = ()


def read(run_dir: Path) -> list[Generation]:
    """The run's generations, oldest first."""
    out: list[Generation] = []
    previous = 0.0
    for record in RunReader(run_dir, command="bench/long_run.py").records():
        values = {k: getattr(record, k) for k in OUTPUTS}
        out.append(
            Generation(
                generation=record.generation,
                wall_s=record.wall_s or 0.0,
                seconds=(record.wall_s or 0.0) - previous,
                active=len(record.population),
                archived=record.archived or 0,
                timings=dict(record.timings),
                nash_conv={k: float(v) for k, v in values.items() if v is not None},
                archived_now=tuple(record.archived_now or ()),
                restored_now=tuple(record.restored_now or ()),
            )
        )
        previous = record.wall_s or 0.0
    return out


def _median(values: list[float]) -> float:
    return statistics.median(values) if values else float("nan")


def window_rows(gens: list[Generation], window: float) -> list[list[str]]:
    """One row per ``window`` seconds of wall time."""
    rows = []
    end = window
    while gens and end - window < gens[-1].wall_s:
        inside = [g for g in gens if end - window < g.wall_s <= end]
        if inside:
            last = inside[-1]
            phases = [f"{_median([g.timings.get(p, 0.0) for g in inside]):.2f}" for p in PHASES]
            nash = [f"{last.nash_conv[k]:.4f}" if k in last.nash_conv else "-" for k in OUTPUTS]
            rows.append(
                [
                    f"{(end - window) / 60:.0f}-{end / 60:.0f}",
                    f"{inside[0].generation}-{last.generation}",
                    str(last.active + last.archived),
                    str(last.archived),
                    f"{_median([g.seconds for g in inside]):.2f}",
                    *phases,
                    *nash,
                ]
            )
        end += window
    return rows


def _at(gens: list[Generation], seconds: float) -> Generation:
    """The last generation that ended by ``seconds`` (the first one if none did)."""
    before = [g for g in gens if g.wall_s <= seconds]
    return before[-1] if before else gens[0]


def checks(gens: list[Generation], mark: float) -> list[str]:
    """The two checks: the generation time of the last 10 minutes against the 10th minute's, and
    each output's NashConv at the end against ``mark`` seconds (the medians over the last 10
    minutes and over the minute before ``mark``, then the single generations)."""
    last = gens[-1]
    tenth = _median([g.seconds for g in gens if 540.0 < g.wall_s <= 600.0])
    tail = _median([g.seconds for g in gens if g.wall_s > last.wall_s - 600.0])
    lines = [
        f"generation time, last 10 minutes / 10th minute: {tail:.2f} s / {tenth:.2f} s = {tail / tenth:.2f}x "
        "(bar: at most 1.5x)"
    ]
    early = _at(gens, mark)
    for key in OUTPUTS:
        before = [g.nash_conv[key] for g in gens if mark - 60.0 < g.wall_s <= mark and key in g.nash_conv]
        end = [g.nash_conv[key] for g in gens if g.wall_s > last.wall_s - 600.0 and key in g.nash_conv]
        if not before or not end or key not in early.nash_conv or key not in last.nash_conv:
            continue
        verdict = "no worse" if _median(end) <= _median(before) else "WORSE"
        lines.append(
            f"{key}: median {_median(before):.4f} in the minute to {mark:.0f} s, {_median(end):.4f} in the "
            f"last 10 minutes: {verdict} (single generations: {early.nash_conv[key]:.4f} at "
            f"{early.wall_s:.0f} s, {last.nash_conv[key]:.4f} at the end)"
        )
    return lines


def churn(gens: list[Generation], within: int) -> str:
    """The members brought back from the archive, and the share of them archived again within
    ``within`` generations (counted where the run went on that long after)."""
    back = [(g.generation, m) for g in gens for m in g.restored_now]
    if not back:
        return "archive: no member brought back"
    out_at: dict[str, list[int]] = {}
    for g in gens:
        for m in g.archived_now:
            out_at.setdefault(m, []).append(g.generation)
    last = gens[-1].generation
    judged = [(gen, m) for gen, m in back if gen + within <= last]
    again = sum(any(gen < o <= gen + within for o in out_at.get(m, [])) for gen, m in judged)
    share = f"{again / len(judged):.0%}" if judged else "none yet"
    return (
        f"archive: {len(back)} members brought back ({len(back) / len(gens):.2f} a generation), "
        f"{share} of them archived again within {within} generations"
    )


def _dir_mb(path: Path) -> float:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file()) / 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("run_dir", type=Path)
    parser.add_argument("--window", type=float, default=600.0, help="seconds of wall time per row")
    parser.add_argument("--mark", type=float, default=120.0, help="the early NashConv to compare with")
    parser.add_argument("--churn", type=int, default=10, help="generations a member brought back is followed")
    parser.add_argument("--no-report", action="store_true", help="do not time main.py report")
    parser.add_argument("--out", type=Path, help="also write the output here, with its provenance")
    args = parser.parse_args()
    gens = read(args.run_dir)
    if not gens:
        sys.exit(f"{args.run_dir}: no completed generation in generations.jsonl")
    with recorded(args.out):
        config = RunReader(args.run_dir).config
        last = gens[-1]
        print(
            f"run: {len(gens)} generations in {last.wall_s / 60:.1f} min, {last.active + last.archived} "
            f"members ({last.active} active, {last.archived} archived); {config.experiment.name} on {config.env.name}"
        )
        print()
        head = ["minutes", "generations", "members", "archived", "gen s", *[f"{p} s" for p in PHASES]]
        head += ["main NashConv", "meta NashConv", "average NashConv"]
        print_table(head, window_rows(gens, args.window))
        print("(gen s and the phases: medians over the window's generations; NashConv: its last generation)")
        print()
        for line in checks(gens, args.mark):
            print(line)
        print(churn(gens, args.churn))
        size = _dir_mb(args.run_dir)
        print(f"run directory: {size:.0f} MB, {size / len(gens):.2f} MB a generation")
        if not args.no_report:
            start = time.perf_counter()
            done = subprocess.run(
                [sys.executable, str(ROOT / "main.py"), "report", str(args.run_dir)],
                capture_output=True,
                text=True,
                check=False,
            )
            seconds = time.perf_counter() - start
            print(
                f"main.py report: exit {done.returncode}, {seconds:.1f} s, "
                f"{len(done.stdout.splitlines())} lines, widest {max(map(len, done.stdout.splitlines()), default=0)} characters"
            )


if __name__ == "__main__":
    main()
