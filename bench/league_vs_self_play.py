"""Is a league worth its compute? Its newest main agent against a plain self-play run's.

For each seed, ``CONFIG`` as shipped and the same config with ``scheduler.name=self_play`` for the
same wall time: the runs ``bench/probe_league.py`` makes in its ``--work`` folder (run it first,
with the same ``--work`` and seeds; this bench reads them). Then, from fresh games (half per seat, one fixed seed per reading):

* the league's newest main agent against the self-play run's (``--games`` games): above 0.5
  means the league's compute bought a stronger agent;
* each of the two against every fixed opponent the env ships (``random``, ``scripted_l1`` ...);
* the default probe's win rate against each (read from ``bench/probe_league.py``'s readings in
  ``--work`` where they are there; lower is harder to exploit);
* with ``--marks S [S ...]``, the same duel at earlier wall-clock marks: the newest main-agent
  snapshot each run had made by ``S`` seconds (its ``wall_s``), league against self-play. It shows
  when the league's compute starts to pay, and how much that depends on the seed.

Scores are wins + draws / 2 from the named agent's side, with 95% Jeffreys intervals; the last
rows give the mean and the worst seed (lowest for the league's scores, highest for the probe's).

    python bench/probe_league.py expr_configs/league.yaml --seeds 11 12 13 --work /tmp/pl
    python bench/league_vs_self_play.py expr_configs/league.yaml --seeds 11 12 13 --work /tmp/pl
    python bench/league_vs_self_play.py ... --marks 60 120 180 240
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path
from typing import Any

import numpy as np
from bench_output import print_table, recorded

ROOT = Path(__file__).resolve().parents[1]

#: the fixed seed of every reading's games (one per reading kind, so readings are comparable)
SEED = 2029


def main_snapshot(run: Path, generation: int | None = None) -> tuple[str, Any]:
    """The run's newest main-agent snapshot as of ``generation`` (None: the last completed):
    (member id, policy)."""
    from light_league.run_reader import RunReader

    reader = RunReader(run)
    weights = reader.target("main", generation).weights
    if len(weights) != 1:
        raise SystemExit(f"{run} has {len(weights)} main agents; this bench compares runs with one")
    member = next(iter(weights))
    return member, reader.policy(member)


def measure(seed: int, args: argparse.Namespace) -> dict[str, Any]:
    """One seed's readings (cached as ``<work>/worth_s<seed>.json``)."""
    out = args.work / f"worth_s{seed}.json"
    if out.exists():
        return dict(json.loads(out.read_text()))
    from light_league import envs
    from light_league.rollout.head_to_head import match
    from light_league.run_dir import RunDir
    from light_league.run_reader import RunReader

    league, self_play = args.work / f"league_s{seed}", args.work / f"self_play_s{seed}"
    for run in (league, self_play):
        if not RunDir(run).generations.exists():
            raise SystemExit(
                f"{run} holds no run: make it first with bench/probe_league.py --work {args.work}"
            )
    (league_id, league_main), (self_id, self_main) = main_snapshot(league), main_snapshot(self_play)
    reader = RunReader(league)
    env = reader.make_env(min(args.games, 256))
    start = time.perf_counter()
    try:
        duel = match(env, league_main, self_main, args.games, seed=SEED).to_json()
        fixed: dict[str, dict[str, Any]] = {}
        names = envs.fixed_policy_names(reader.config.env.name)
        for name in names:
            baseline = envs.make_fixed_policy(reader.config.env.name, name, **reader.config.env.options)
            fixed[name] = {
                "league": match(env, league_main, baseline, args.games, seed=SEED).to_json(),
                "self_play": match(env, self_main, baseline, args.games, seed=SEED).to_json(),
            }
    finally:
        env.close()
    runs = {kind: RunReader(path).records() for kind, path in (("league", league), ("self_play", self_play))}
    reading = {
        "league_main": league_id,
        "self_play_main": self_id,
        "duel": duel,
        "fixed": fixed,
        "runs": {
            kind: {"generations": len(r), "env_steps": r[-1].env_steps, "wall_s": r[-1].wall_s}
            for kind, r in runs.items()
        },
        "seconds": round(time.perf_counter() - start, 1),
    }
    out.write_text(json.dumps(reading))
    return reading


def snapshot_by(run: Path, mark_s: float) -> tuple[str, Any]:
    """The newest main-agent snapshot of the last generation that ended by ``mark_s`` seconds of
    the run's clock: (member id, policy)."""
    from light_league.run_reader import RunReader

    done = [r.generation for r in RunReader(run).records() if float(r.wall_s or 0.0) <= mark_s]
    if not done:
        raise SystemExit(f"{run} ended no generation by {mark_s:g} s; give later --marks")
    return main_snapshot(run, max(done))


def measure_marks(seed: int, args: argparse.Namespace) -> list[dict[str, Any]]:
    """One seed's duels at ``args.marks`` (cached as ``<work>/marks_s<seed>.json`` per mark)."""
    out = args.work / f"marks_s{seed}.json"
    cached: dict[str, Any] = json.loads(out.read_text()) if out.exists() else {}
    keys = {mark: f"{mark:g}:{args.games}" for mark in args.marks}
    todo = [mark for mark in args.marks if keys[mark] not in cached]
    if todo:
        from light_league.rollout.head_to_head import match
        from light_league.run_reader import RunReader

        league, self_play = args.work / f"league_s{seed}", args.work / f"self_play_s{seed}"
        env = RunReader(league).make_env(min(args.games, 256))
        try:
            for mark in todo:
                (league_id, league_main), (self_id, self_main) = (
                    snapshot_by(league, mark),
                    snapshot_by(self_play, mark),
                )
                duel = match(env, league_main, self_main, args.games, seed=SEED).to_json()
                cached[keys[mark]] = {"league_main": league_id, "self_play_main": self_id, **duel}
                out.write_text(json.dumps(cached, indent=1))
        finally:
            env.close()
    return [{"mark_s": mark, **cached[keys[mark]]} for mark in args.marks]


def report_marks(marks: dict[int, list[dict[str, Any]]], args: argparse.Namespace) -> None:
    print(
        "\nAt earlier marks: the newest main-agent snapshot each run had made by then, league against"
        " self-play (score, league / self-play member):"
    )
    rows = [
        [
            str(seed),
            *(f"{d['score']:.3f} ({short(d['league_main'])} / {short(d['self_play_main'])})" for d in duels),
        ]
        for seed, duels in marks.items()
    ]
    columns = list(zip(*([d["score"] for d in duels] for duels in marks.values()), strict=True))
    rows.append(["mean", *(f"{np.mean(c):.3f}" for c in columns)])
    rows.append(["worst", *(f"{min(c):.3f}" for c in columns)])
    print_table(["seed", *(f"by {m:g} s" for m in args.marks)], rows)


def short(member: str) -> str:
    """``main_agent_0-v13`` as ``v13``."""
    return member.rsplit("-", 1)[-1]


def probe_reading(work: Path, seed: int, label: str) -> dict[str, Any] | None:
    path = work / f"probe_s{seed}_{label}.json"
    return dict(json.loads(path.read_text())) if path.exists() else None


def cell(score: float, ci: list[float]) -> str:
    return f"{score:.3f} [{ci[0]:.3f}, {ci[1]:.3f}]"


def report(config: Path, readings: dict[int, dict[str, Any]], args: argparse.Namespace) -> None:
    seeds = list(readings)
    print(
        f"\n{config.name} against the same config with scheduler.name=self_play for the same wall time,"
        f" seeds {', '.join(map(str, seeds))};\n{args.games} fresh games per reading (half per seat),"
        " score = wins + draws / 2 from the named agent's side (95% interval)."
    )
    print("\nThe league's newest main agent against the self-play run's:")
    rows = []
    for seed, r in readings.items():
        sides = r["runs"]
        rows.append(
            [
                str(seed),
                cell(r["duel"]["score"], r["duel"]["score_ci95"]),
                f"{r['league_main']} / {r['self_play_main']}",
                f"{sides['league']['generations']}, {sides['league']['env_steps'] / 1e6:.1f} M / "
                f"{sides['self_play']['generations']}, {sides['self_play']['env_steps'] / 1e6:.1f} M",
            ]
        )
    duels = [r["duel"]["score"] for r in readings.values()]
    rows.append(["mean", f"{np.mean(duels):.3f}", "", ""])
    rows.append(["worst", f"{min(duels):.3f}", "", ""])
    print_table(
        ["seed", "league main vs self-play main", "members", "gens, env steps (league / self-play)"], rows
    )

    names = list(next(iter(readings.values()))["fixed"])
    print("\nEach newest main agent against every fixed opponent (league / self-play):")
    rows = []
    for seed, r in readings.items():
        rows.append(
            [
                str(seed),
                *(
                    f"{r['fixed'][n]['league']['score']:.3f} / {r['fixed'][n]['self_play']['score']:.3f}"
                    for n in names
                ),
            ]
        )
    for label, fn in (("mean", np.mean), ("worst", np.min)):
        rows.append(
            [
                label,
                *(
                    f"{fn([r['fixed'][n]['league']['score'] for r in readings.values()]):.3f} / "
                    f"{fn([r['fixed'][n]['self_play']['score'] for r in readings.values()]):.3f}"
                    for n in names
                ),
            ]
        )
    print_table(["seed", *names], rows)

    probes = {
        seed: (
            probe_reading(args.work, seed, "league_main"),
            probe_reading(args.work, seed, "self_play_main"),
        )
        for seed in seeds
    }
    if all(a is not None and b is not None for a, b in probes.values()):
        print(
            "\nThe default probe's win rate against each (bench/probe_league.py's readings; lower is harder to exploit):"
        )
        rows = []
        for seed, (a, b) in probes.items():
            assert a is not None and b is not None
            rows.append(
                [
                    str(seed),
                    cell(a["probe_win_rate"], a["probe_win_rate_ci95"]),
                    cell(b["probe_win_rate"], b["probe_win_rate_ci95"]),
                ]
            )
        for label, fn in (("mean", np.mean), ("worst", np.max)):
            rows.append(
                [
                    label,
                    *(f"{fn([p[k]['probe_win_rate'] for p in probes.values() if p[k]]):.3f}" for k in (0, 1)),  # type: ignore[index]
                ]
            )
        print_table(["seed", "probe vs league main", "probe vs self-play main"], rows)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("config", type=Path, nargs="?", default=ROOT / "expr_configs" / "league.yaml")
    ap.add_argument("--seeds", nargs="+", type=int, default=[0, 1, 2])
    ap.add_argument("--work", type=Path, required=True, help="run directories and readings go here")
    ap.add_argument("--games", type=int, default=512)
    ap.add_argument("--out", type=Path, help="also write the output to this file")
    ap.add_argument(
        "--marks",
        type=float,
        nargs="+",
        default=[],
        help="also duel the snapshots made by these wall seconds",
    )
    args = ap.parse_args(argv)
    args.work.mkdir(parents=True, exist_ok=True)
    with recorded(args.out):
        readings = {seed: measure(seed, args) for seed in args.seeds}
        report(args.config, readings, args)
        if args.marks:
            report_marks({seed: measure_marks(seed, args) for seed in args.seeds}, args)


if __name__ == "__main__":
    main()
