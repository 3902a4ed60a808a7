"""League quality over seeds: how strong and how hard to exploit a shipped config's league gets.

Runs ``main.py --config CONFIG experiment.seed=S`` for each seed, one after the other, with the
config's own stop rules (or a wall budget given as ``CONFIG:MINUTES``, which replaces the stop
rules), then reads each run directory back and prints, per seed and as mean / worst over seeds:

* games with fixed baselines (``evaluation.baselines``, e.g. battalion's scripted ladder): for the
  newest main-agent snapshot of every generation, its evaluation win rate against the strongest
  baseline; the first generation from which that rate is at least ``--beat`` (0.75) while every
  later snapshot keeps at least ``--hold`` (0.65); and the Nash mass of learned members at the
  end;
* games with exact NashConv (poker): NashConv against the run's own clock (wall seconds minus
  the NashConv computation, as ``bench/exploitability_per_minute.py`` counts it) at marks, and
  the stability of the last 5 generations (worst / best).

    python bench/league_quality.py expr_configs/league.yaml --seeds 0 1 2
    python bench/league_quality.py expr_configs/league_leduc.yaml:10 --seeds 0 1 2
    python bench/league_quality.py --from-runs RUN_DIR [RUN_DIR ...]   # analyse finished runs
    python bench/league_quality.py ... --markdown                       # tables as markdown
    python bench/league_quality.py --from-runs RUN_DIR --explain        # per generation: who holds
        # the Nash mass, and how each new snapshot scores against the previous Nash mixture (an
        # exploiter that does its job scores above 0.5 there)
    python bench/league_quality.py --from-runs RUN_DIR --reevaluate 512 # each of those snapshots
        # against the run's reference opponent again, 512 games (half per seat), with a 95% interval: the
        # run's own reading is 2 x episodes_per_pair games (32 for league.yaml, about +-0.17)

The output starts with the date, the machine (cores, load average) and the library versions.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from bench_output import machine_line

from light_league.rollout.head_to_head import match
from light_league.run_reader import RunReader

ROOT = Path(__file__).resolve().parents[1]
MARKS_S = (60, 120, 180, 300, 450, 600)
LAST_K = 5


@dataclass
class RunSummary:
    seed: str
    run_dir: Path
    generations: int = 0
    wall_s: float = 0.0
    env_steps: int = 0
    #: battalion-like: newest main snapshot's win rate vs the run's reference opponent, per generation
    vs_best: list[float] = field(default_factory=list)
    best_baseline: str = ""
    #: the newest main-agent snapshot's id, per generation (where ``vs_best`` is read)
    newest_main: list[str] = field(default_factory=list)
    learned_nash_mass: float | None = None
    #: poker-like: (clock seconds, nash_conv) per generation
    nash_conv: list[tuple[float, float]] = field(default_factory=list)
    #: poker-like: (clock seconds, NashConv) of the newest main agent and of the average policy,
    #: per generation (where recorded)
    main_nash_conv: list[tuple[float, float]] = field(default_factory=list)
    average_nash_conv: list[tuple[float, float]] = field(default_factory=list)


def read_run(run_dir: Path, seed: str) -> RunSummary:
    out = RunSummary(seed, run_dir)
    run = RunReader(run_dir)
    records = run.records()
    out.generations = len(records)
    if not records:
        return out
    out.wall_s = float(records[-1].wall_s or 0.0)
    out.env_steps = int(records[-1].env_steps or 0)
    nash_conv_s = 0.0
    for rec in records:
        nash_conv_s += float(rec.timings.get("exploitability", 0.0))
        clock = float(rec.wall_s or 0.0) - nash_conv_s
        for value, values in (
            (rec.meta_nash_conv, out.nash_conv),
            (rec.main_nash_conv, out.main_nash_conv),
            (rec.average_nash_conv, out.average_nash_conv),
        ):
            if value is not None:
                values.append((clock, float(value)))
        roles = rec.member_roles
        baselines = [pid for pid, role in roles.items() if role == "baseline"]
        if baselines:
            table = run.payoff(rec.generation)
            ids = table.agent_ids
            # the run's fixed reference opponent; the highest-rated baseline only in runs without one
            # (that one can change from generation to generation as the ratings move)
            best = (
                rec.reference
                if rec.reference in baselines
                else max(baselines, key=lambda b: rec.rating.get(b, 0.0))
            )
            mains = [pid for pid in ids if roles.get(pid) == "main_agent"]
            newest = mains[-1]
            out.best_baseline = best
            out.vs_best.append(float(table.win_rates[ids.index(newest), ids.index(best)]))
            out.newest_main.append(newest)
    roles = run.members()
    out.learned_nash_mass = float(
        sum(p for pid, p in run.target("meta").weights.items() if roles.get(pid) not in ("baseline", None))
    )
    return out


def explain(run_dir: Path) -> None:
    """Per generation: the Nash support, and each new member's expected win rate against the
    previous generation's Nash mixture."""
    print(f"\n{run_dir}: Nash support, and new members' win rate against the previous Nash mixture")
    run = RunReader(run_dir)
    previous: tuple[list[str], np.ndarray] | None = None
    for record in run.records():
        table = run.payoff(record.generation)
        ids, nash, rates = (
            table.agent_ids,
            table.meta_strategy,
            table.win_rates,
        )  # the Nash mixture by default
        support = ", ".join(f"{ids[i]} {nash[i]:.2f}" for i in np.argsort(-nash) if nash[i] >= 0.01)
        line = f"  gen {table.generation:3d}  support: {support}"
        if previous is not None:
            old_ids, old_nash = previous
            cols = [ids.index(pid) for pid in old_ids]
            scores = {pid: float(rates[ids.index(pid), cols] @ old_nash) for pid in ids if pid not in old_ids}
            line += "\n           new vs previous Nash: " + ", ".join(
                f"{k} {v:.3f}" for k, v in scores.items()
            )
        print(line)
        previous = (ids, nash)


def reevaluate(run: RunSummary, games: int, seed: int = 2027) -> list[tuple[float, float, float]]:
    """Every generation's newest main-agent snapshot against ``run.best_baseline`` again:
    ``games`` games (half per seat) each, as ``(win rate, low, high)`` (wins + draws / 2, with the
    equal-tailed 95% Jeffreys interval of the payoff tables)."""
    reader = RunReader(run.run_dir)
    env = reader.make_env(min(games, 128))
    baseline = reader.policy(run.best_baseline)
    out = []
    for newest in run.newest_main:
        result = match(env, reader.policy(newest), baseline, games, seed=seed)
        out.append((result.score, *result.score_ci95))
    return out


def report_reevaluated(runs: list[RunSummary], games: int, beat: float, hold: float) -> None:
    ladder = [r for r in runs if r.vs_best]
    if not ladder:
        return
    best = ladder[0].best_baseline
    print(f"\nThe same snapshots against {best} again, {games} games each (half per seat):")
    for r in ladder:
        scores = reevaluate(r, games)
        rates = [x for x, _, _ in scores]
        g = first_held(rates, beat, hold)
        print(f"  {r.seed}: " + " ".join(f"{x:.2f}" for x in rates))
        top = int(np.argmax(rates))
        _, low, high = scores[top]
        print(
            f"  {r.seed}: best generation {top}: {rates[top]:.3f} (95% {low:.3f}-{high:.3f}), run's own "
            f"reading there {r.vs_best[top]:.2f}; mean over generations {np.mean(rates):.3f}; first held "
            f"generation (>= {beat}, later >= {hold}) {'never' if g is None else g}"
        )
        gaps = np.abs(np.array(rates) - np.array(r.vs_best[: len(rates)]))
        print(f"  {r.seed}: |own reading - re-evaluated| mean {gaps.mean():.3f}, largest {gaps.max():.3f}")


def first_held(rates: list[float], beat: float, hold: float) -> int | None:
    """First generation g with rates[g] >= beat and every later rate >= hold (None if none)."""
    for g, r in enumerate(rates):
        if r >= beat and all(x >= hold for x in rates[g:]):
            return g
    return None


def nash_conv_at(points: list[tuple[float, float]], seconds: float) -> float | None:
    values = [v for t, v in points if t <= seconds]
    return values[-1] if values else None


def run_seed(config: Path, minutes: float | None, seed: str, work: Path, extra: list[str]) -> RunSummary:
    run_dir = work / f"{config.stem}_seed{seed}"
    command = [sys.executable, "main.py", "--config", str(config), "--run-dir", str(run_dir), "--quiet"]
    command.append(f"experiment.seed={seed}")
    if minutes is not None:
        command += [
            f"stop.max_wall_s={minutes * 60}",
            "stop.max_generations=1000000",
            "stop.max_env_steps=null",
            "stop.target_nash_conv=null",
        ]
    command += extra
    log = work / f"{config.stem}_seed{seed}.log"
    start = time.perf_counter()
    with log.open("w", encoding="utf-8") as sink:
        proc = subprocess.run(command, cwd=ROOT, stdout=sink, stderr=subprocess.STDOUT, check=False)
    if proc.returncode != 0:
        raise SystemExit(f"seed {seed} failed with status {proc.returncode}; see {log}")
    print(f"# seed {seed}: {time.perf_counter() - start:.0f} s, {run_dir}", flush=True)
    return read_run(run_dir, seed)


def fmt(x: float | None, digits: int = 3) -> str:
    return "–" if x is None else f"{x:.{digits}f}"


def row_printer(markdown: bool) -> Callable[[list[str]], str]:
    """A table row as text: markdown cells, or columns two spaces apart."""
    if markdown:
        return lambda cols: "| " + " | ".join(cols) + " |"
    return lambda cols: "  ".join(cols)


def report(
    runs: list[RunSummary],
    beat: float,
    hold: float,
    markdown: bool,
    target: float | None = None,
    marks_s: tuple[float, ...] | None = None,
) -> None:
    """``marks_s``: the clock marks of the NashConv tables; given, the average policy gets one
    too (None: ``MARKS_S``, the Nash mixture and the newest main agent only)."""
    head = row_printer(markdown)
    ladder = [r for r in runs if r.vs_best]
    if ladder:
        best = ladder[0].best_baseline
        print(f"\nNewest main-agent snapshot vs {best} (evaluation win rate), per generation:")
        for r in ladder:
            print(f"  {r.seed}: " + " ".join(f"{x:.2f}" for x in r.vs_best))
        cols = ["seed", "generations", "env steps", "wall s", f"first gen >= {beat} (later >= {hold})"]
        cols += [f"last vs {best}", f"min vs {best} after it", "learned Nash mass"]
        print()
        print(head(cols))
        if markdown:
            print("|" + "---|" * len(cols))
        held = []
        for r in ladder:
            g = first_held(r.vs_best, beat, hold)
            held.append(g)
            after = min(r.vs_best[g:]) if g is not None else None
            row = [
                r.seed,
                str(r.generations),
                str(r.env_steps),
                f"{r.wall_s:.0f}",
                "never" if g is None else str(g),
            ]
            row += [fmt(r.vs_best[-1], 2), fmt(after, 2), fmt(r.learned_nash_mass, 3)]
            print(head(row))
        masses = [r.learned_nash_mass or 0.0 for r in ladder]
        worst_gen = None if any(g is None for g in held) else max(g for g in held if g is not None)
        print(
            f"\nworst seed: first held generation {worst_gen if worst_gen is not None else 'never'}; "
            f"learned Nash mass mean {np.mean(masses):.3f}, worst {min(masses):.3f}"
        )
    exact = [r for r in runs if r.nash_conv]
    if exact:
        runs = exact
        print("\nNashConv of the Nash mixture, per generation:")
        for r in runs:
            print(f"  {r.seed}: " + " ".join(f"{v:.3f}" for _, v in r.nash_conv))
        for title, attr in (("newest main agent", "main_nash_conv"), ("average policy", "average_nash_conv")):
            if any(getattr(r, attr) for r in runs):
                print(f"\nNashConv of the {title}, per generation:")
                for r in runs:
                    print(f"  {r.seed}: " + " ".join(f"{v:.3f}" for _, v in getattr(r, attr)))
        marks = [m for m in marks_s or MARKS_S if any(r.nash_conv[-1][0] >= m * 0.8 for r in runs)]
        tables = [("Nash mixture", "nash_conv"), ("newest main agent", "main_nash_conv")]
        tables += [("average policy", "average_nash_conv")] if marks_s else []
        for title, attr in tables:
            if all(getattr(r, attr) for r in runs):
                print(f"\nThe {title}:")
                marks_table(runs, [getattr(r, attr) for r in runs], marks, target, markdown)


def marks_table(
    runs: list[RunSummary],
    series: list[list[tuple[float, float]]],
    marks: list[float],
    target: float | None,
    markdown: bool,
) -> None:
    """One row per run: a NashConv series (clock seconds, value) at each mark, the stability of its
    last generations and, with ``target``, when it first reached it; then mean and worst."""
    head = row_printer(markdown)
    cols = ["seed", "generations", *[f"NashConv @{m:g}s" for m in marks], f"last {LAST_K}: worst/best"]
    if target is not None:
        cols += [f"first s with NashConv <= {target}", "largest NashConv after it"]
    print(head(cols))
    if markdown:
        print("|" + "---|" * len(cols))
    ratios = []
    for r, points in zip(runs, series):
        tail = [v for _, v in points[-LAST_K:]]
        ratio = max(tail) / max(min(tail), 1e-12) if tail else None
        ratios.append(ratio)
        row = [r.seed, str(r.generations), *[fmt(nash_conv_at(points, m), 4) for m in marks]]
        row.append(fmt(ratio, 2))
        if target is not None:
            hit = next((i for i, (_, v) in enumerate(points) if v <= target), None)
            row.append("never" if hit is None else f"{points[hit][0]:.1f}")
            row.append("–" if hit is None else fmt(max(v for _, v in points[hit:]), 4))
        print(head(row))
    at = [[nash_conv_at(points, m) for points in series] for m in marks]
    mean = [fmt(float(np.mean(v)) if None not in v else None, 4) for v in at]
    worst = [fmt(max(v) if None not in v else None, 4) for v in at]  # type: ignore[type-var]
    pad = ["", ""] if target is not None else []
    print(head(["mean", "", *mean, fmt(float(np.mean([x for x in ratios if x is not None])), 2), *pad]))
    print(head(["worst", "", *worst, fmt(max(x for x in ratios if x is not None), 2), *pad]))


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("config", nargs="?", help="CONFIG or CONFIG:MINUTES (minutes replace the stop rules)")
    parser.add_argument("--seeds", nargs="+", default=["0", "1", "2"])
    parser.add_argument("--from-runs", nargs="+", type=Path, help="analyse finished run directories")
    parser.add_argument("--beat", type=float, default=0.75)
    parser.add_argument("--hold", type=float, default=0.65)
    parser.add_argument("--target", type=float, help="NashConv target: when each seed first reached it")
    parser.add_argument("--work", type=Path, help="where run directories go (default: a temp dir)")
    parser.add_argument("--markdown", action="store_true")
    parser.add_argument(
        "--explain", action="store_true", help="Nash support and exploiter scores per generation"
    )
    parser.add_argument(
        "--reevaluate",
        type=int,
        metavar="GAMES",
        help="play every generation's newest main-agent snapshot against the run's reference opponent again",
    )
    parser.add_argument(
        "--marks",
        type=float,
        nargs="+",
        metavar="S",
        help=f"clock seconds of the NashConv tables (default {' '.join(map(str, MARKS_S))}); "
        "given, the average policy gets a table too",
    )
    parser.add_argument("overrides", nargs="*", default=[], help="extra key=value overrides for every seed")
    args, extra = parser.parse_known_args()
    print(f"# command: python bench/league_quality.py {' '.join(sys.argv[1:])}")
    print(f"# {machine_line()}")
    if args.from_runs:
        # a directory named like the bench's own (league_seed3) is labelled by its seed, as when made here
        runs = [read_run(d, re.sub(r"^.*seed(\d+)$", r"\1", d.name)) for d in args.from_runs]
        for r in runs:  # how each run was made, from its manifest
            made = json.loads((r.run_dir / "manifest.json").read_text(encoding="utf-8"))
            print(
                f"# seed {r.seed}: {r.wall_s:.0f} s, {r.run_dir}: {' '.join(made.get('argv', []))}, started "
                f"{made.get('created', '?')}, git {str(made.get('git_revision', '?'))[:12]}"
            )
    else:
        if not args.config:
            parser.error("give a CONFIG or --from-runs")
        path, _, minutes = args.config.partition(":")
        work = args.work or Path(tempfile.mkdtemp(prefix="league_quality_"))
        work.mkdir(parents=True, exist_ok=True)
        print(f"# {args.config}, seeds {' '.join(args.seeds)}, runs under {work}")
        runs = [
            run_seed(Path(path), float(minutes) if minutes else None, s, work, [*args.overrides, *extra])
            for s in args.seeds
        ]
    report(runs, args.beat, args.hold, args.markdown, args.target, tuple(args.marks) if args.marks else None)
    if args.reevaluate:
        report_reevaluated(runs, args.reevaluate, args.beat, args.hold)
    if args.explain:
        for r in runs:
            explain(r.run_dir)
    print(f"# finished {machine_line()}")


if __name__ == "__main__":
    main()
