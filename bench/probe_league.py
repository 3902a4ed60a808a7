"""How exploitable is what ``league.yaml`` hands over, beside plain self-play and a direct learner?

For each seed, one step after the other, each alone on the machine:

1. ``main.py --config CONFIG`` as shipped (its own wall budget, ``stop.max_wall_s``);
2. the same config with ``scheduler.name=self_play`` for the same wall time (the generation limit
   lifted), so both spend the same seconds;
3. a direct learner: one learner with the config's main-agent settings and rollout shape, trained
   against ``--baseline`` (``scripted_l5``) alone for as many env steps as the league's main agent
   trained in step 1;

then the config's default probe (``evaluation.probe``: a fresh learner, its env steps and games)
against four targets: the league's newest main agent, the league's meta-strategy, the self-play
run's newest main agent and the direct learner. Each probe's win rate over its fresh evaluation
games is printed with its 95% interval, per seed and as mean / worst (highest) over seeds: the
output a probe beats least is the most robust. The probe's own seconds are printed too (the
budget a user waits for).

    python bench/probe_league.py expr_configs/league.yaml --seeds 0 1 2 --work /tmp/pl
    python bench/probe_league.py expr_configs/league.yaml --seeds 0 1 2 --work /tmp/pl --markdown
    python bench/probe_league.py ... --credibility   # first: can the probe find what is there?

Every step is skipped when ``--work`` already holds its output (an interrupted bench goes on where
it stopped, and a second call only prints the table).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
from bench_output import print_table, recorded

ROOT = Path(__file__).resolve().parents[1]
TARGETS = ("league main", "league meta", "self-play main", "direct learner")


def run_main(argv: list[str], log: Path) -> None:
    """``main.py ARGV`` in a child process (with its own Ray instance), output to ``log``."""
    with log.open("w", encoding="utf-8") as sink:
        proc = subprocess.run(
            [sys.executable, "main.py", *argv], cwd=ROOT, stdout=sink, stderr=subprocess.STDOUT, check=False
        )
    if proc.returncode != 0:
        raise SystemExit(f"main.py {' '.join(argv)} failed with status {proc.returncode}; see {log}")


def league_runs(config: Path, seed: int, work: Path) -> tuple[Path, Path]:
    """The shipped config's run and the self-play run of the same wall time."""
    from light_league.config import load_config
    from light_league.run_dir import RunDir

    league, self_play = work / f"league_s{seed}", work / f"self_play_s{seed}"
    common = ["--config", str(config), "--quiet", f"experiment.seed={seed}"]
    if not RunDir(league).generations.exists():
        run_main([*common, "--run-dir", str(league)], work / f"league_s{seed}.log")
    if not RunDir(self_play).generations.exists():
        wall = load_config(config, []).stop.max_wall_s
        extra = ["scheduler.name=self_play", "stop.max_generations=100000", f"stop.max_wall_s={wall}"]
        run_main([*common, "--run-dir", str(self_play), *extra], work / f"self_play_s{seed}.log")
    return league, self_play


def main_agent_steps(run: Path) -> int:
    """Env steps the run's main agents trained, over the whole run."""
    from light_league.run_reader import RunReader

    records = RunReader(run).records()
    return sum(t.env_steps for r in records for t in r.tasks if t.role == "main_agent")


def direct_learner(config: Path, league: Path, baseline: str, seed: int, work: Path) -> Path:
    """A learner trained against ``baseline`` alone for the league's main-agent env steps; the
    path of its saved policy (``<work>/direct_s<seed>.pt`` + ``.json``)."""
    from light_league import envs
    from light_league.build import probe_settings
    from light_league.config import load_config
    from light_league.data_buffer.policy_files import policy_paths, save_policy
    from light_league.evaluation.probe import Probe
    from light_league.seeding import derive_seed

    path = work / f"direct_s{seed}"
    if policy_paths(path)[1].exists():
        return path
    cfg = load_config(config, ["evaluation.probe.role=main_agent", "evaluation.probe.learner={}"])
    steps = main_agent_steps(league)
    settings = probe_settings(cfg, env_steps=steps)
    opponent = envs.make_fixed_policy(cfg.env.name, baseline, **cfg.env.options)
    start = time.perf_counter()
    learner, _, _ = Probe(cfg.env.name, cfg.env.options, settings).train(
        {baseline: opponent}, {baseline: 1.0}, derive_seed(seed, "direct_learner"), None
    )
    save_policy(path, learner.get_weights(), learner.policy_meta())
    print(
        f"# seed {seed}: direct learner, {steps:,} env steps against {baseline}, {time.perf_counter() - start:.0f} s"
    )
    return path


def probe(
    config: Path,
    name: str,
    run: Path | None,
    policy: Path | None,
    seed: int,
    out: Path,
    generation: int | None = None,
) -> dict[str, Any]:
    """The config's default probe against ``run``'s ``name`` target (at ``generation``, default the
    last) or a saved ``policy``."""
    if out.exists():
        return json.loads(out.read_text())
    from light_league.algorithms.mappo.serialization import load_policy
    from light_league.build import probe_settings
    from light_league.config import load_config
    from light_league.evaluation.probe import Probe, ProbeTarget
    from light_league.run_reader import RunReader

    cfg = load_config(config, [])
    if run is not None:
        reader = RunReader(run)
        target = reader.target(name, generation)
        policies = reader.policies(list(target.weights))
    else:
        assert policy is not None
        target, policies = ProbeTarget(name, 0, {name: 1.0}), {name: load_policy(policy)}
    result = Probe(cfg.env.name, cfg.env.options, probe_settings(cfg)).run(target, policies, seed=seed)
    reading = result.to_json()
    out.write_text(json.dumps(reading))
    print(
        f"# {out.stem}: win rate {result.probe_win_rate:.3f} over {result.games} games, "
        f"{result.env_steps:,} env steps, {result.seconds:.0f} s",
        flush=True,
    )
    return reading


def measure(config: Path, seed: int, args: argparse.Namespace) -> dict[str, dict[str, Any]]:
    work: Path = args.work
    league, self_play = league_runs(config, seed, work)
    direct = direct_learner(config, league, args.baseline, seed, work)
    sources: dict[str, tuple[str, Path | None, Path | None]] = {
        "league main": ("main", league, None),
        "league meta": ("meta", league, None),
        "self-play main": ("main", self_play, None),
        "direct learner": ("direct", None, direct),
    }
    readings = {}
    for label, (name, run, policy) in sources.items():
        out = work / f"probe_s{seed}_{label.replace(' ', '_').replace('-', '_')}.json"
        readings[label] = probe(config, name, run, policy, args.probe_seed, out)
    return readings


#: the credibility targets: (label, target name, generation) in the first seed's league run
CREDIBILITY = (
    ("random", "random", None),
    ("scripted_l1", "scripted_l1", None),
    ("generation 0's main agent", "main", 0),
    ("scripted_l5", "scripted_l5", None),
)


def credibility(config: Path, seed: int, args: argparse.Namespace) -> None:
    """Can the probe find what is there? The default probe against the random and scripted
    level-1 baselines and generation 0's main agent (all beaten easily by a real learner), and
    against scripted_l5 (the best measured against it so far: 0.52-0.56)."""
    league, _ = league_runs(config, seed, args.work)
    print(
        f"\nThe default probe against easy targets and scripted_l5 (seed {seed}'s league run, probe seed {args.probe_seed}):"
    )
    for label, name, generation in CREDIBILITY:
        out = args.work / f"probe_s{seed}_credibility_{name}_{generation}.json"
        reading = probe(config, name, league, None, args.probe_seed, out, generation)
        print(f"  {label:<28} {cell(reading)} over {reading['games']} games, {reading['seconds']:.0f} s")


def cell(reading: dict[str, Any]) -> str:
    low, high = reading["probe_win_rate_ci95"]
    return f"{reading['probe_win_rate']:.3f} [{low:.3f}, {high:.3f}]"


def report(config: Path, readings: dict[int, dict[str, dict[str, Any]]], args: argparse.Namespace) -> None:
    from light_league.run_reader import RunReader

    print(
        f"\n{config.name}, seeds {', '.join(map(str, readings))}: the default probe's win rate (95% interval)"
    )
    print(f"against each output; lower is harder to exploit. Probe seed {args.probe_seed}.")
    head = ["seed", *TARGETS, "league / self-play: gens, env steps"]
    rows = []
    for seed, per in readings.items():
        runs = [RunReader(args.work / f"{kind}_s{seed}").records() for kind in ("league", "self_play")]
        sizes = " / ".join(f"{len(r)}, {r[-1].env_steps / 1e6:.1f} M" for r in runs)
        rows.append([str(seed), *(cell(per[t]) for t in TARGETS), sizes])
    for label, fn in (("mean", np.mean), ("worst", np.max)):
        rows.append(
            [
                label,
                *(f"{fn([per[t]['probe_win_rate'] for per in readings.values()]):.3f}" for t in TARGETS),
                "",
            ]
        )
    seconds = [per[t]["seconds"] for per in readings.values() for t in TARGETS]
    env_steps = readings[next(iter(readings))][TARGETS[0]]["env_steps"]
    games = readings[next(iter(readings))][TARGETS[0]]["games"]
    print_table(head, rows, args.markdown)
    print(
        f"each probe: {env_steps:,} env steps of training, {games} evaluation games; "
        f"{min(seconds):.0f}-{max(seconds):.0f} s per probe"
    )
    for seed, per in readings.items():
        meta = per["league meta"]
        support = ", ".join(f"{m} {w:.2f}" for m, w in sorted(meta["weights"].items(), key=lambda kv: -kv[1]))
        main = ", ".join(per["league main"]["weights"])
        print(
            f"seed {seed}: league meta-strategy at generation {meta['generation']}: {support}; newest main: {main}"
        )


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("config", type=Path, nargs="?", default=ROOT / "expr_configs" / "league.yaml")
    ap.add_argument("--seeds", nargs="+", type=int, default=[0, 1, 2])
    ap.add_argument("--work", type=Path, required=True, help="run directories and readings go here")
    ap.add_argument("--baseline", default="scripted_l5", help="the direct learner's opponent")
    ap.add_argument("--probe-seed", type=int, default=0)
    ap.add_argument("--markdown", action="store_true")
    ap.add_argument(
        "--credibility",
        action="store_true",
        help="first, probe easy targets and scripted_l5 in the first seed's run",
    )
    ap.add_argument("--out", type=Path, help="also write the output to this file")
    args = ap.parse_args(argv)
    args.work.mkdir(parents=True, exist_ok=True)
    with recorded(args.out):
        if args.credibility:
            credibility(args.config, args.seeds[0], args)
        readings = {seed: measure(args.config, seed, args) for seed in args.seeds}
        report(args.config, readings, args)


if __name__ == "__main__":
    main()
