"""Can the probe be trusted? The default probe against policies whose exploitability is known exactly.

The exploitability probe (``main.py exploit``, ``evaluation.probe``) trains a fresh learner
against a frozen target and reports what it wins. On a game with an exact evaluator (Leduc poker)
what an exact best response wins against the same target is known, so the probe can be scored:
this bench takes policies of real runs (``--runs``: members, each generation's newest main agent
and meta-strategy, and the least exploitable mixture where a run recorded one) plus uniform play,
computes every candidate's exact NashConv, picks ``--policies`` of them spread evenly in log
NashConv between ``--low`` and ``--high`` (the closest candidate to each point, no policy twice),
and runs the probe of ``--config`` (its ``evaluation.probe`` settings, as shipped) against each.
For every policy it prints the exact best response's payoff (seats alternated: NashConv / 2),
the probe's payoff computed exactly and measured over its evaluation games (95% interval), and
the share of the best response's payoff the probe reached; then the median share and the Spearman
rank correlation between what the probe wins and what a best response wins.

    python main.py --config expr_configs/league_leduc.yaml --run-dir /tmp/pv/league
    python main.py --config expr_configs/psro_leduc.yaml --run-dir /tmp/pv/psro
    python bench/probe_validity.py --runs /tmp/pv/league /tmp/pv/psro --policies 12 --jobs 2

The probe's own payoff is scored exactly here (``probe_payoff_exact``), so the share is not blurred
by its evaluation games; the games' reading is printed beside it.

``--jobs N`` runs N probes at a time, one process each.
"""

from __future__ import annotations

import argparse
import json
import math
import multiprocessing
import os
import sys
import time
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from bench_output import recorded

ROOT = Path(__file__).resolve().parents[1]


@dataclass(frozen=True)
class Candidate:
    """A policy to probe: a mixture of members of a run (one member: weight 1), or uniform play."""

    label: str
    run: Path | None  #: None for uniform play
    weights: dict[str, float]
    nash_conv: float


def candidates(runs: list[Path], every: int) -> list[Candidate]:
    """Every ``every``-th generation's newest main agent, meta-strategy and the least exploitable
    mixture of its members (solved here with exact best responses where the run did not record
    it: a measurement, as everything in this bench) of each run, each mixture once, and uniform
    play, with their exact NashConv."""
    from light_league import envs
    from light_league.algorithms import game_tree
    from light_league.run_reader import RunReader

    out: list[Candidate] = []
    env_name = ""
    for path in runs:
        run = RunReader(path)
        env_name = run.config.env.name
        seen: set[tuple[tuple[str, float], ...]] = set()
        records = run.records()
        picked = records[::every] + ([records[-1]] if (len(records) - 1) % every else [])
        for record in picked:
            gen = record.generation
            mixtures = {"meta": run.target("meta", gen).weights}
            if any(r == "main_agent" for r in run.members(gen).values()):
                mixtures["main"] = run.target("main", gen).weights
            if record.least_exploitable is not None:
                mixtures["least_exploitable"] = {k: v for k, v in record.least_exploitable.items() if v > 0}
            else:
                members = list(run.members(gen))
                solved = game_tree.least_exploitable(env_name, list(run.policies(members).values()))
                mixtures["least_exploitable"] = {
                    k: float(w) for k, w in zip(members, solved.weights.tolist(), strict=True) if w > 0
                }
            for kind, weights in mixtures.items():
                key = tuple(sorted((k, round(w, 6)) for k, w in weights.items()))
                if key in seen:
                    continue
                seen.add(key)
                policies = run.policies(list(weights))
                value = game_tree.nash_conv(env_name, list(policies.values()), list(weights.values()))
                label = next(iter(weights)) if len(weights) == 1 else f"{kind} of gen {gen}"
                out.append(Candidate(f"{path.name}: {label}", path, weights, float(value)))
    uniform = envs.make_fixed_policy(env_name, "random")
    out.append(Candidate("uniform play", None, {"random": 1.0}, game_tree.nash_conv(env_name, uniform)))
    return out


def spread(pool: list[Candidate], count: int, low: float, high: float) -> list[Candidate]:
    """``count`` candidates closest (in log NashConv) to points spaced evenly from ``low`` to ``high``."""
    chosen: list[Candidate] = []
    for point in np.geomspace(low, high, count):
        left = [c for c in pool if c not in chosen and c.nash_conv > 0]
        chosen.append(min(left, key=lambda c: abs(math.log(c.nash_conv / point))))
    return sorted(chosen, key=lambda c: c.nash_conv)


def probe_one(config_path: str, candidate: Candidate, seed: int) -> dict[str, Any]:
    """Run the config's default probe against ``candidate`` (in a process of its own)."""
    from light_league import envs
    from light_league.build import probe_settings
    from light_league.config import load_config
    from light_league.evaluation.probe import Probe, ProbeTarget
    from light_league.run_reader import RunReader

    config = load_config(config_path, [])
    if candidate.run is None:
        policies = {"random": envs.make_fixed_policy(config.env.name, "random")}
    else:
        policies = RunReader(candidate.run).policies(list(candidate.weights))
    probe = Probe(config.env.name, config.env.options, probe_settings(config))
    result = probe.run(ProbeTarget(candidate.label, 0, candidate.weights), policies, seed=seed)
    return result.to_json()


def probe_all(chosen: list[Candidate], args: argparse.Namespace) -> list[dict[str, Any]]:
    """Every candidate's probe reading, ``args.jobs`` at a time; with ``--work`` each reading is
    kept in a file as it ends (a rerun skips the readings already there)."""
    work: Path | None = args.work
    if work is not None:
        work.mkdir(parents=True, exist_ok=True)

    def kept(c: Candidate) -> Path | None:
        name = "".join(ch if ch.isalnum() else "_" for ch in c.label)
        return None if work is None else work / f"{name}_seed{args.seed}.json"

    results: dict[int, dict[str, Any]] = {}
    todo = []
    for i, c in enumerate(chosen):
        path = kept(c)
        if path is not None and path.exists():
            results[i] = json.loads(path.read_text())
        else:
            todo.append(i)
    # spawned, not forked: a fork of a process whose torch thread pools are running can hang
    context = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(max_workers=max(1, args.jobs), mp_context=context) as pool:
        futures = {pool.submit(probe_one, args.config, chosen[i], args.seed): i for i in todo}
        for future in as_completed(futures):
            i = futures[future]
            results[i] = future.result()
            path = kept(chosen[i])
            if path is not None:
                path.write_text(json.dumps(results[i]))
            share = results[i]["probe_payoff_exact"] / results[i]["best_response_payoff"]
            print(
                f"# {chosen[i].label}: share {share:.2f}, {results[i]['seconds']:.0f} s",
                file=sys.stderr,
                flush=True,
            )
    return [results[i] for i in range(len(chosen))]


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", nargs="+", type=Path, required=True, help="run directories of one exact game")
    ap.add_argument(
        "--config", default="expr_configs/league_leduc.yaml", help="whose evaluation.probe to test"
    )
    ap.add_argument("--policies", type=int, default=12, help="policies besides uniform play")
    ap.add_argument("--low", type=float, default=0.1, help="lowest NashConv to aim at")
    ap.add_argument("--high", type=float, default=3.0, help="highest NashConv to aim at")
    ap.add_argument("--every", type=int, default=5, help="read every N-th generation of each run")
    ap.add_argument("--seed", type=int, default=0, help="the probes' seed")
    ap.add_argument("--jobs", type=int, default=1, help="probes at a time (one process each)")
    ap.add_argument("--work", type=Path, help="keep each probe's reading here (a rerun skips those done)")
    ap.add_argument("--out", type=Path, help="also write the output to this file")
    args = ap.parse_args(argv)
    with recorded(args.out):
        run(args)


def run(args: argparse.Namespace) -> None:
    from scipy.stats import spearmanr

    from light_league.build import probe_settings
    from light_league.config import load_config

    settings = probe_settings(load_config(args.config, []))
    pool = candidates(list(args.runs), args.every)
    chosen = spread([c for c in pool if c.run is not None], args.policies, args.low, args.high)
    chosen.append(next(c for c in pool if c.run is None))
    print(
        f"{len(pool)} candidate policies from {len(args.runs)} runs; {len(chosen)} probed with the default probe of"
    )
    print(
        f"{args.config}: {settings.learner_kind}, {settings.env_steps:,} env steps "
        f"({settings.num_envs} games x {settings.steps_per_update} steps per update), "
        f"{settings.games:,} evaluation games, seed {args.seed}; {args.jobs} probe(s) at a time"
    )
    start = time.perf_counter()
    # spawned, not forked: a fork of a process whose torch thread pools are running can hang
    results = probe_all(chosen, args)
    print(
        f"\n{'policy':<44} {'NashConv':>8} {'best resp.':>10} {'probe exact':>11} {'share':>6}"
        f" {'probe over games [95%]':>26} {'s':>5}"
    )
    shares, exact, played, best = [], [], [], []
    for c, r in zip(chosen, results, strict=True):
        share = r["probe_payoff_exact"] / r["best_response_payoff"]
        shares.append(share)
        exact.append(r["probe_payoff_exact"])
        played.append(r["probe_payoff"])
        best.append(r["best_response_payoff"])
        low, high = r["probe_payoff_ci95"]
        games = f"{r['probe_payoff']:.3f} [{low:.3f}, {high:.3f}]"
        print(
            f"{c.label[:44]:<44} {c.nash_conv:>8.3f} {r['best_response_payoff']:>10.3f} "
            f"{r['probe_payoff_exact']:>11.3f} {share:>6.2f} {games:>26} {r['seconds']:>5.0f}"
        )
    print(f"\nmedian share of the best response's payoff (probe exact): {np.median(shares):.2f}")
    print(
        f"worst share: {min(shares):.2f}; shares at NashConv >= 1: "
        f"{', '.join(f'{s:.2f}' for s, c in zip(shares, chosen) if c.nash_conv >= 1)}"
    )
    print(
        f"Spearman rank correlation with the best response's payoff: probe exact {spearmanr(exact, best)[0]:.3f}, "
        f"probe over its games {spearmanr(played, best)[0]:.3f}"
    )
    print(f"{len(chosen)} probes in {time.perf_counter() - start:.0f} s on {os.cpu_count()} CPUs")


if __name__ == "__main__":
    main()
