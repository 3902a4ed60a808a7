"""League scale: time per generation, memory, disk and resume as the population grows to 200, 1,000
and 2,000 members.

A real Runner (rock-paper-scissors, the AlphaStar league scheduler with its three roles, local
backend, TensorBoard logging on) runs its own generation loop, ``Runner.run_generation``, with the
games replaced: training and evaluation games are synthesised from a hidden strength + cycle
model instead of played, so every other part of a generation runs as in a real run — planning
(PFSP and Nash weighting over the whole population), recording the training games, snapshots
(weights frozen to disk, pool manifest), evaluation scheduling (missing pairs, pairings),
recording the evaluation games (match log, payoff table, Elo, diversity), the payoff table and
Nash LP, the payoff files, the TensorBoard payoff logging (markdown table, heatmap, Nash chart)
and the checkpoint.

Each N runs in a process of its own. The population is first grown to N members (weights
frozen; with the full meta-game every pair evaluated at once, with an active set
(``league.active_set``) in steps of ``GROW_STEP`` members, each step evaluated, solved and
archived as a run does), then ``--generations`` generations are timed (each adds the three
learners' snapshots); the table shows the median seconds per phase, taken from the Runner's own
phase timer, split further where one phase holds several parts. Recording evaluation games costs
the same per game at every N, so it is shown per game and left out of the scale target. Then:
the process's peak RSS, the run directory's bytes added per generation (from the end of the first
timed generation over ``--disk-generations`` more, ten by default: one period of
``league.active_set.tables_every``), the checkpoint's size, and the seconds a fresh Runner takes
to resume from the checkpoint.

    python bench/league_scale.py                                  # N = 200, 1000, 2000
    python bench/league_scale.py --sizes 200 1000 --set league.active_set.size=0   # the full table
    python bench/league_scale.py --quick                          # N = 10, 20 (smoke run)
    python bench/league_scale.py --profile 200                    # also cProfile one generation at N = 200
"""

from __future__ import annotations

import argparse
import cProfile
import dataclasses
import importlib
import io
import itertools
import json
import os
import pstats
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from bench_output import recorded

from light_league.config import load_config
from light_league.rollout.episode import Behaviour, EvaluationResult, MatchResult
from light_league.rollout.rollout_manager import RolloutManager
from light_league.run_dir import RunDir
from light_league.runner import Runner
from light_league.scheduling.task_scheduler import TrainingTask
from light_league.tracking.console import Console
from light_league.training.training_manager import TrainingManager, TrainingOutcome
from light_league.types import GenerationDecisions

CONFIG = "expr_configs/rps_tiny.yaml"
OVERRIDES = [
    "logging.console=quiet",
    "logging.tensorboard=true",
    "league.pool_max_size=100000",
    "evaluation.episodes_per_pair=50",
    "execution.envs_per_worker=8",
    "stop.max_generations=1000000",
    # every learner is snapshotted every generation (steps_per_generation is 2048)
    *(
        f"scheduler.{role}.checkpoint_max_steps=2048"
        for role in ("main_agent", "main_exploiter", "league_exploiter")
    ),
]
#: synthetic training games recorded per learner and generation (independent of N, as in a run)
TRAIN_GAMES = 512
#: games per pair when the population is first grown to N (the timed generations play 50)
GROW_GAMES_PER_PAIR = 2
#: members added between two evaluations, solves and archive updates while an active set grows
GROW_STEP = 100
#: actions per member and evaluation call fed to the behaviour-diversity tracker
BEHAVIOUR_ACTIONS = 256


class Model:
    """Hidden win probabilities: a strength per member plus a rock-paper-scissors cycle."""

    def __init__(self, seed: int) -> None:
        self.rng = np.random.default_rng(seed)
        self._params: dict[str, tuple[float, int]] = {}

    def _param(self, agent: str) -> tuple[float, int]:
        if agent not in self._params:
            self._params[agent] = (float(self.rng.normal()), int(self.rng.integers(3)))
        return self._params[agent]

    def p_win(self, a: str, b: str) -> float:
        (sa, ca), (sb, cb) = self._param(a), self._param(b)
        cycle = {0: 0.0, 1: 1.0, 2: -1.0}[(ca - cb) % 3]
        return float(1.0 / (1.0 + np.exp(-(sa - sb + cycle))))

    def games(self, a: str, b: str, n: int, seat: int = 0) -> list[MatchResult]:
        wins = self.rng.random(n) < self.p_win(a, b)
        return [MatchResult(a, b, seat, float(w), 1.0 if w else -1.0) for w in wins.tolist()]


class SyntheticTraining(TrainingManager):
    """The training phase without rollouts or updates: synthetic games against the task's opponents."""

    def __init__(self, real: TrainingManager, model: Model) -> None:
        super().__init__(real.executor, real.rollout, real.learners, steps_per_call=real.steps_per_call)
        self.model = model

    def run(
        self,
        tasks: list[TrainingTask],
        progress: Callable[[int], None] | None = None,
        *,
        generation: int = 0,
    ) -> TrainingOutcome:
        out = TrainingOutcome()
        for task in tasks:
            ids = list(task.opponents)
            probs = np.array([task.opponents[o] for o in ids])
            drawn = self.model.rng.choice(len(ids), size=TRAIN_GAMES, p=probs / probs.sum())
            for idx, count in zip(*np.unique(drawn, return_counts=True), strict=True):
                out.results.extend(self.model.games(task.learner_id, ids[int(idx)], int(count)))
            out.env_steps[task.learner_id] = task.env_steps
        return out


class SyntheticGames(RolloutManager):
    """Evaluation without playing: each pairing's quota of games drawn from the hidden model."""

    def __init__(self, real: RolloutManager, model: Model) -> None:
        super().__init__(real.executor, real.workers, max_restarts=real.max_restarts)
        self.model = model
        self.seconds = 0.0
        self.count = 0

    def evaluate(
        self,
        pairings: list[tuple[str, str, int]],
        progress: Callable[[int], None] | None = None,
        *,
        paired: bool = False,
    ) -> EvaluationResult:
        start = time.perf_counter()
        results = [r for a, b, n in pairings for r in self.model.games(a, b, n)]
        behaviour: dict[str, Behaviour] = defaultdict(Behaviour)
        for pid in {p for a, b, _ in pairings for p in (a, b)}:
            behaviour[pid].add(self.model.rng.integers(0, 3, size=BEHAVIOUR_ACTIONS), None)
        self.seconds += time.perf_counter() - start
        self.count += len(results)
        return EvaluationResult(results, len(results), dict(behaviour))


class Probe:
    """Seconds spent in chosen callables (wrapped on their owner for the duration of a block)."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = defaultdict(float)

    @contextmanager
    def wrap(self, targets: dict[str, tuple[Any, str]]) -> Iterator[None]:
        originals = {label: getattr(owner, name) for label, (owner, name) in targets.items()}

        def timed(label: str, fn: Callable[..., Any]) -> Callable[..., Any]:
            def call(*args: Any, **kwargs: Any) -> Any:
                start = time.perf_counter()
                try:
                    return fn(*args, **kwargs)
                finally:
                    self.seconds[label] += time.perf_counter() - start

            return call

        own = {label: name in vars(owner) for label, (owner, name) in targets.items()}
        for label, (owner, name) in targets.items():
            setattr(owner, name, timed(label, originals[label]))
        try:
            yield
        finally:
            for label, (owner, name) in targets.items():
                if own[label]:
                    setattr(owner, name, originals[label])
                else:
                    delattr(owner, name)  # a method: drop the instance attribute again


def build_runner(root: Path, seed: int, overrides: list[str]) -> tuple[Runner, SyntheticGames]:
    config = load_config(CONFIG, [*OVERRIDES, f"experiment.seed={seed}", *overrides])
    runner = Runner.build(config, RunDir(root), resume=False, argv=["bench/league_scale.py"])
    runner.console = Console(config.logging, file=io.StringIO())  # the one line per generation
    model = Model(seed)
    games = SyntheticGames(runner.evaluation.rollout, model)
    runner.training = SyntheticTraining(runner.training, model)
    runner.evaluation.rollout = games
    return runner, games


def archiving(runner: Runner) -> bool:
    """The league keeps an active set (``league.active_set``) rather than the full table."""
    return bool(getattr(getattr(runner.agents, "archive", None), "enabled", False))


def grow(runner: Runner, size: int) -> None:
    """Freeze learners round-robin until the pool has ``size`` members. The full meta-game then
    evaluates every pair at once; an active set grows in steps of ``GROW_STEP`` members, each step
    evaluated, solved and archived as a run's generations are."""
    learners = itertools.cycle(runner.agents.learners())
    per_pair = runner.evaluation.episodes_per_pair
    runner.evaluation.episodes_per_pair = GROW_GAMES_PER_PAIR
    step = GROW_STEP if archiving(runner) else size
    while len(runner.agents.pool) < size:
        target = min(size, len(runner.agents.pool) + step)
        while len(runner.agents.pool) < target:
            runner.apply(GenerationDecisions(snapshot=[next(learners)]))
        runner.evaluation.run(runner.agents)
        if archiving(runner):
            runner.agents.update_archive(runner.agents.solve())
    runner.evaluation.episodes_per_pair = per_pair


def probe_targets(runner: Runner) -> dict[str, tuple[Any, str]]:
    """The calls of one generation that are timed, by label: the Runner's phases and their parts."""
    runner_module = importlib.import_module("light_league.runner")
    return {
        "plan": (runner.scheduler, "next_tasks"),
        "record_training": (runner.agents, "record_training"),
        "after_training": (runner.scheduler, "after_training"),
        "apply": (runner, "apply"),
        "planned_games": (runner.evaluation, "planned_games"),
        "evaluate": (runner.evaluation, "run"),
        "record_evaluation": (runner.agents, "record_evaluation"),
        "solve": (runner.agents, "solve"),
        "matrix": (runner.agents.results.payoff_table, "matrix"),
        "nash": (runner.agents.meta_game, "mixture"),  # the meta-strategy's one solve (the Nash LP)
        "payoff_files": (runner_module, "save_payoff_snapshot"),
        "log_payoff": (runner.logger, "log_payoff"),
        "checkpoint": (runner.checkpointer, "save"),
        **({"archive": (runner.agents, "update_archive")} if archiving(runner) else {}),
    }


def generation(runner: Runner, games: SyntheticGames) -> tuple[dict[str, float], int]:
    """One generation of the Runner's loop: seconds per part, and the evaluation games it recorded."""
    probe = Probe()
    games.seconds = 0.0
    games.count = 0
    with probe.wrap(probe_targets(runner)):
        phases = runner.run_generation()
    p = probe.seconds
    p["finish"] = phases["checkpoint"]  # record, log and checkpoint
    parts = {
        "plan (scheduler.next_tasks)": p["plan"],
        "train: record games": p["record_training"],
        "snapshot: after_training": p["after_training"],
        "snapshot: freeze, pool": p["apply"],
        "eval: missing pairs, pairings": (
            p["planned_games"] + p["evaluate"] - games.seconds - p["record_evaluation"]
        ),
        "eval: record games": p["record_evaluation"],
        "solve: payoff matrix": p["matrix"],
        "solve: Nash LP": p["nash"],
        "solve: Elo, diversity, rest": p["solve"] - p["matrix"] - p["nash"],
        "archive: active set": p["archive"],
        "log: payoff json+npy": p["payoff_files"],
        "log: TensorBoard payoff": p["log_payoff"],
        "log: record, scalars": p["finish"] - p["payoff_files"] - p["log_payoff"] - p["checkpoint"],
        "checkpoint": p["checkpoint"],
    }
    return parts, games.count


@dataclass
class Scale:
    size: int
    seconds: dict[str, float]
    eval_games: int
    peak_rss_mb: float
    run_dir_mb_per_generation: float
    checkpoint_mb: float
    resume_s: float
    grow_s: float


def dir_bytes(path: Path) -> int:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file())


def measure(
    size: int, generations: int, seed: int, profile: bool, overrides: list[str], disk_generations: int = 0
) -> Scale:
    """One N, in this process: grow, time ``generations`` generations, run ``disk_generations``
    more (the run directory's growth is measured from the end of the first), resume."""
    with tempfile.TemporaryDirectory(prefix="league_scale_") as tmp:
        root = Path(tmp) / "run"
        began = time.perf_counter()
        runner, games = build_runner(root, seed, overrides)
        try:
            grow(runner, size)
            grow_s = time.perf_counter() - began
            runs = [generation(runner, games)]
            before = dir_bytes(root)  # from the first generation on: its latest payoff files are there
            runs += [generation(runner, games) for _ in range(generations - 1)]
            for _ in range(disk_generations):
                runner.run_generation()
            added = (dir_bytes(root) - before) / max(generations - 1 + disk_generations, 1)
            if profile:
                profiler = cProfile.Profile()
                profiler.runcall(generation, runner, games)
                out = io.StringIO()
                pstats.Stats(profiler, stream=out).sort_stats("cumulative").print_stats(25)
                print(f"cProfile of one generation at N = {size} (top entries by cumulative time):")
                print(out.getvalue())
            config = runner.config
        finally:
            runner.close()
        checkpoint = dir_bytes(root / "checkpoint")
        start = time.perf_counter()
        resumed = Runner.build(config, RunDir(root), resume=True, argv=["bench/league_scale.py"])
        resume_s = time.perf_counter() - start
        resumed.close()
    seconds = {k: statistics.median(r[0][k] for r in runs) for k in runs[0][0]}
    eval_games = int(statistics.median(r[1] for r in runs))
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux
    return Scale(size, seconds, eval_games, peak, added / 2**20, checkpoint / 2**20, resume_s, grow_s)


def measure_apart(size: int, args: argparse.Namespace) -> Scale:
    """:func:`measure` in a process of its own (its peak RSS is that N's alone)."""
    command = [sys.executable, __file__, "--one", str(size), "--generations", str(args.generations)]
    command += ["--seed", str(args.seed), "--profile", str(args.profile)]
    command += ["--disk-generations", str(args.disk_generations)]
    command += [f"--set={o}" for o in args.set]
    # the checkout this bench is in is the one measured (not an installed light_league)
    paths = [str(Path(__file__).resolve().parents[1]), os.environ.get("PYTHONPATH", "")]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in paths if p)}
    done = subprocess.run(command, check=True, stdout=subprocess.PIPE, text=True, env=env)  # stderr: shown
    *printed, last = done.stdout.rstrip("\n").split("\n")
    if printed:
        print("\n".join(printed))
    return Scale(**json.loads(last))


def print_table(scales: list[Scale]) -> None:
    first, last = scales[0], scales[-1]
    head = f"{'phase':<36}" + "".join(f"{'N=' + str(s.size):>10}" for s in scales)
    print(head + f"{f'{last.size}/{first.size}':>10}")
    for part in first.seconds:
        cells = "".join(f"{s.seconds.get(part, 0.0):>10.4f}" for s in scales)
        print(f"{part:<36}{cells}{_ratio(last.seconds.get(part, 0.0), first.seconds[part]):>10}")
    totals = [sum(v for k, v in s.seconds.items() if k != "eval: record games") for s in scales]
    cells = "".join(f"{t:>10.3f}" for t in totals)
    print(f"{'total (without recording eval games)':<36}{cells}{_ratio(totals[-1], totals[0]):>10}")
    per_game = [1e6 * s.seconds["eval: record games"] / max(s.eval_games, 1) for s in scales]
    print(f"{'eval games recorded':<36}" + "".join(f"{s.eval_games:>10}" for s in scales))
    cells = "".join(f"{g:>10.1f}" for g in per_game)
    print(f"{'  recording, us per game':<36}{cells}{_ratio(per_game[-1], per_game[0]):>10}")
    rows = (
        ("peak RSS, MB", "peak_rss_mb", ".0f"),
        ("run dir added per generation, MB", "run_dir_mb_per_generation", ".2f"),
        ("checkpoint, MB", "checkpoint_mb", ".1f"),
        ("resume (a fresh Runner), s", "resume_s", ".2f"),
        ("grow to N (not timed above), s", "grow_s", ".0f"),
    )
    for label, key, fmt in rows:
        values = [float(getattr(s, key)) for s in scales]
        cells = "".join(f"{v:>10{fmt}}" for v in values)
        print(f"{label:<36}{cells}{_ratio(values[-1], values[0]):>10}")
    verdict = "met" if totals[-1] <= 1.5 * totals[0] else "missed"
    print(f"target: N={last.size} costs <= 1.5x N={first.size} (without recording eval games): {verdict}")


def _ratio(a: float, b: float) -> str:
    return f"{a / b:.2f}x" if b > 0 else "-"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[200, 1000, 2000], help="member counts N")
    parser.add_argument("--quick", action="store_true", help="N = 10, 20 and one generation each")
    parser.add_argument("--generations", type=int, default=3, help="timed generations per N (median)")
    parser.add_argument("--profile", type=int, default=0, metavar="N", help="cProfile a generation at this N")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--set", action="append", default=[], metavar="KEY=VALUE", help="a config override (repeatable)"
    )
    parser.add_argument(
        "--disk-generations",
        type=int,
        default=8,
        help="generations run after the timed ones; the run dir's growth is measured from the end of the first "
        "timed one (default 8: over ten, one league.active_set.tables_every period)",
    )
    parser.add_argument("--one", type=int, default=0, help=argparse.SUPPRESS)  # one N, as JSON
    parser.add_argument("--out", type=Path, default=None, help="also write the output here (for docs/data/)")
    args = parser.parse_args()
    if args.one:
        scale = measure(
            args.one, args.generations, args.seed, args.one == args.profile, args.set, args.disk_generations
        )
        print(json.dumps(dataclasses.asdict(scale)))
        return
    with recorded(args.out):
        sizes = (10, 20) if args.quick else tuple(args.sizes)
        if args.quick:
            args.generations, args.disk_generations = 1, 0
        overrides = "".join(f" {o}" for o in args.set)
        print(
            f"rps league (3 learners), episodes_per_pair=50, {args.generations} timed generation(s) per N "
            f"(median), run dir growth over {args.generations - 1 + args.disk_generations}"
            f"{', overrides:' + overrides if overrides else ''}"
        )
        print_table([measure_apart(n, args) for n in sizes])


if __name__ == "__main__":
    main()
