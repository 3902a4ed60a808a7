"""Adaptive evaluation vs a fixed count of games per pair, on a battalion league's population.

The population (the six scripted baselines and learned snapshots of a finished ``league.yaml``
run) grows as it did in the run: members join in the generation they joined there, and every
generation is evaluated by the framework's own :class:`EvaluationManager` (missing pairs, and for
``episodes_per_pair: adaptive`` the refinement rounds that :meth:`AgentManager.refinement_pairs`
ranks) and recorded and solved by a real :class:`AgentManager` (payoff table, the run's
``league.meta_solver``). At the end of the replay, the meta-strategy is compared with the one of a
reference table of ``--reference-games`` games per pair (half in each seat order) by its
total-variation distance, and the evaluation games of the whole replay are counted.

Games are real battalion games played by a :class:`RolloutWorker`. Each seed has its own bank of
games per ordered pair, played on demand (and cached under ``--cache``); every replay of that
seed takes its games from the start of the bank, so the fixed counts and the adaptive budgets of
one seed see the same games (common random numbers: a comparison within a seed is not blurred
by which games each method happened to draw; every replay alone is an ordinary evaluation). The
reference games come from a separate worker seed, so they share no game with any bank.

For each method the output gives, per setting, the games spent and the TV distance per seed; the
"fewest games" of a method is its cheapest setting from which on (this one and every more
expensive one) the worst seed is within ``--target``; the ratio is fixed / adaptive.

    python bench/adaptive_evaluation.py --run runs/docs_league --out notes/data/adaptive_evaluation.txt
    python bench/adaptive_evaluation.py --quick            # baselines only, tiny (a smoke run)

The reference table is cached in ``--reference`` (JSON, with how it was made); a rerun with the
same members and games per pair reads it instead of playing it again.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from light_league import envs
from light_league.agents.agent_manager import AgentManager
from light_league.agents.meta_solvers import build_meta_solver
from light_league.data_buffer.episode_server import EpisodeServer
from light_league.data_buffer.policy_server import PolicyServer
from light_league.evaluation.evaluation_manager import EvaluationManager
from light_league.execution import build_executor
from light_league.rollout.episode import EvaluationResult, MatchResult
from light_league.rollout.rollout_manager import RolloutManager
from light_league.rollout.rollout_worker import RolloutWorker
from light_league.run_dir import RunDir
from light_league.run_reader import RunReader
from light_league.types import AgentType

ROOT = Path(__file__).resolve().parents[1]

BASELINES = ("random", "scripted_l1", "scripted_l2", "scripted_l3", "scripted_l4", "scripted_l5")
#: learned members: the two that joined the run in every fifth generation (5, 10, ..., 25) and in
#: its last one (29); the run's final Nash support (league_exploiter_0-v12, -v14) is among them
RUN_GENERATIONS = (5, 10, 15, 20, 25, 29)
FIXED = (16, 32, 64, 128, 256, 512, 768, 1000)
BUDGETS = (250, 375, 500, 750, 1000, 1500, 2000)
REFERENCE_SEED = 1_000_003
CHUNK = 64  #: a bank plays at least this many games of a pair when it runs short


@dataclass(frozen=True)
class Member:
    agent_id: str
    role: str  #: AgentType value
    generation: int  #: the run generation it joined in
    path: str | None = None  #: its policy files (None for a baseline)


@dataclass
class Replay:
    """One replay's result: the final meta-strategy and the games spent."""

    meta: dict[str, float]
    games: int
    cell_games: dict[tuple[str, str], float] = field(default_factory=dict)


# ---------------------------------------------------------------------------- population


def members_from_run(run: RunReader, generations: Sequence[int], per_generation: int = 2) -> list[Member]:
    """The baselines and the learned members that joined ``run`` in ``generations`` (join order)."""
    out: list[Member] = []
    for agent_id, (role, gen) in run.joined().items():
        if role == AgentType.BASELINE.value:
            out.append(Member(agent_id, role, 0))
        elif gen in generations:
            out.append(Member(agent_id, role, gen, str(run.policy_path(agent_id))))
    picked = [m for m in out if m.role != AgentType.BASELINE.value]
    if len(picked) != per_generation * len(generations):
        raise SystemExit(
            f"{run.root}: expected {per_generation} members per generation {list(generations)}, got {picked}"
        )
    return out


def growth(members: Sequence[Member]) -> list[list[Member]]:
    """Members grouped by the generation they joined in, in generation order."""
    gens = sorted({m.generation for m in members})
    return [[m for m in members if m.generation == g] for g in gens]


def tv(p: dict[str, float], q: dict[str, float]) -> float:
    """Total-variation distance of two mixtures over the same members."""
    keys = set(p) | set(q)
    return 0.5 * sum(abs(p.get(k, 0.0) - q.get(k, 0.0)) for k in keys)


# ---------------------------------------------------------------------------- games


class Games:
    """A local policy server with the members' policies and one rollout worker per seed."""

    def __init__(
        self, env_name: str, env_options: dict[str, Any], members: Sequence[Member], envs: int
    ) -> None:
        self.env_name, self.env_options, self.envs = env_name, dict(env_options), envs
        self.executor = build_executor("local")
        self.server = self.executor.create(PolicyServer, name="policy_server", storage_dir=None)
        self.episodes = self.executor.create(EpisodeServer, name="episode_server")
        ps = self.executor.client(self.server)
        for m in members:
            if m.path is None:
                ps.add_fixed(m.agent_id, "fixed", {"name": m.agent_id, "env": env_name})
            else:
                ps.load_frozen(m.agent_id, Path(m.path))
        self.policy_server = ps

    def rollout(self, seed: int) -> RolloutManager:
        worker = self.executor.create(
            RolloutWorker,
            self.env_name,
            self.env_options,
            name=f"rollout_worker_{seed}",
            num_envs=self.envs,
            seed=seed,
            policy_server=self.policy_server,
            episode_server=self.executor.client(self.episodes),
        )
        return RolloutManager(self.executor, [worker], max_restarts=0)


class GameBank(RolloutManager):
    """Evaluation games served from a per-seed bank of real games, played on demand.

    ``evaluate`` hands out each ordered pair's next games; a pair short of games first plays
    ``max(shortfall, CHUNK)`` more on the real rollout (all short pairs of a call in one batch).
    ``restart`` rewinds every pair to its first game (the next replay of the seed).
    """

    def __init__(self, real: RolloutManager, path: Path | None = None) -> None:
        super().__init__(real.executor, real.workers, max_restarts=0)
        self.real, self.path = real, path
        self.outcomes: dict[tuple[str, str], list[float]] = {}
        self.cursor: dict[tuple[str, str], int] = {}
        self.played = 0
        if path is not None and path.exists():
            stored = json.loads(path.read_text(encoding="utf-8"))
            self.outcomes = {tuple(k.split("|", 1)): v for k, v in stored["outcomes"].items()}  # type: ignore[misc]

    def restart(self) -> None:
        self.cursor = {}

    def evaluate(
        self, pairings: list[tuple[str, str, int]], progress: Any = None, *, paired: bool = False
    ) -> EvaluationResult:
        short = []
        for a, b, n in pairings:
            need = self.cursor.get((a, b), 0) + n - len(self.outcomes.get((a, b), []))
            if need > 0:
                short.append((a, b, max(need, CHUNK)))
        if short:
            played = self.real.evaluate(short)
            for r in played.results:
                self.outcomes.setdefault((r.player_id, r.opponent_id), []).append(r.outcome)
            self.played += len(played.results)
        results = []
        for a, b, n in pairings:
            start = self.cursor.get((a, b), 0)
            self.cursor[(a, b)] = start + n
            results.extend(MatchResult(a, b, 0, o, 0.0) for o in self.outcomes[(a, b)][start : start + n])
        return EvaluationResult(results, 0, {})

    def save(self) -> None:
        if self.path is not None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            data = {"outcomes": {f"{a}|{b}": v for (a, b), v in self.outcomes.items()}}
            self.path.write_text(json.dumps(data), encoding="utf-8")


# ---------------------------------------------------------------------------- league parts


@dataclass
class Setup:
    """What every replay shares: the env spec, the meta-solver config and the baselines."""

    spec: Any
    env_name: str
    meta_solver: dict[str, Any]
    baselines: list[str]


def new_agents(root: Path, setup: Setup, seed: int, stability_draws: int = 0) -> AgentManager:
    return AgentManager(
        RunDir(root),
        pool_max_size=10**6,
        payoff_decay=0.99,
        elo_k=32.0,
        baselines=setup.baselines,
        num_actions=setup.spec.num_actions,
        meta_solver=build_meta_solver(setup.meta_solver),
        stability_draws=stability_draws,
        stability_max_s=60.0,
        seed=seed,
    )


def join(agents: AgentManager, member: Member) -> None:
    if member.role == AgentType.BASELINE.value:
        agents.add_baseline(member.agent_id)
    else:
        agents.pool.add(
            member.path or "",
            AgentType(member.role),
            {"generation": member.generation},
            agent_id=member.agent_id,
        )


def replay(
    generations: Sequence[Sequence[Member]],
    bank: GameBank,
    games: Games,
    setup: Setup,
    *,
    episodes_per_pair: int | str,
    budget: int = 2000,
    batch: int = 16,
    cap: int = 1000,
    seed: int = 0,
) -> Replay:
    """Grow the population generation by generation, evaluating each with the framework's code."""
    bank.restart()
    with tempfile.TemporaryDirectory(prefix="adaptive_eval_") as tmp:
        agents = new_agents(Path(tmp), setup, seed)
        evaluation = EvaluationManager(
            bank,
            games.policy_server,
            setup.spec,
            setup.env_name,
            episodes_per_pair=episodes_per_pair,
            exact="never",
            nash_conv="never",
            adaptive_budget=budget,
            adaptive_batch=batch,
            adaptive_cap=cap,
        )
        spent = 0
        for joiners in generations:
            for member in joiners:
                join(agents, member)
            spent += evaluation.run(agents).games
            agents.advance()
        stats = agents.solve()
        agents.results.matches.sync()
    cells = {
        (a, b): float(stats.games[i, j])
        for i, a in enumerate(stats.ids)
        for j, b in enumerate(stats.ids)
        if i < j
    }
    return Replay(dict(zip(stats.ids, stats.meta_strategy.tolist())), spent, cells)


# ---------------------------------------------------------------------------- reference


def reference(
    members: Sequence[Member], games: Games, setup: Setup, per_pair: int, path: Path | None
) -> dict[str, Any]:
    """The reference table: ``per_pair`` games of every pair, half in each seat order, its
    meta-strategy (the framework's AgentManager.solve) and the stability of that mixture."""
    ids = [m.agent_id for m in members]
    if path is not None and path.exists():
        cached = json.loads(path.read_text(encoding="utf-8"))
        if cached["ids"] == ids and cached["games_per_pair"] == per_pair:
            return dict(cached)
        print(f"# {path} holds another population or game count; playing the reference again", flush=True)
    start = time.perf_counter()
    rollout = games.rollout(REFERENCE_SEED)
    half = per_pair // 2
    pairings = [
        p for i, a in enumerate(ids) for b in ids[i + 1 :] for p in ((a, b, half), (b, a, per_pair - half))
    ]
    with tempfile.TemporaryDirectory(prefix="adaptive_ref_") as tmp:
        agents = new_agents(Path(tmp), setup, REFERENCE_SEED, stability_draws=200)
        for member in members:
            join(agents, member)
        result = rollout.evaluate(pairings)
        agents.record_evaluation(result.results, {})
        stats = agents.solve()
        agents.results.matches.sync()
    seat0: dict[str, list[float]] = {}
    for r in result.results:
        seat0.setdefault(f"{r.player_id}|{r.opponent_id}", []).append(r.outcome)
    data = {
        "ids": ids,
        "games_per_pair": per_pair,
        "seed": REFERENCE_SEED,
        "win_rates": np.round(stats.win_rates, 6).tolist(),
        "games": stats.games.tolist(),
        "seat0_mean": {k: round(float(np.mean(v)), 6) for k, v in seat0.items()},
        "meta_solver": setup.meta_solver,
        "meta": dict(zip(ids, [round(x, 8) for x in stats.meta_strategy.tolist()])),
        "stability_tv_mean": None if stats.stability is None else round(stats.stability.tv_mean, 6),
        "stability_draws": None if stats.stability is None else stats.stability.draws,
        "seconds": round(time.perf_counter() - start, 1),
        "made": f"{dt.datetime.now(dt.UTC).strftime('%Y-%m-%d %H:%M UTC')}; {machine_line()}",
    }
    if path is not None:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")
    return data


# ---------------------------------------------------------------------------- summary


def fewest(rows: Sequence[tuple[int, list[float]]], target: float) -> int | None:
    """Games of the cheapest row from which on every row's worst TV is within ``target``.

    ``rows`` are ``(games, tv per seed)``; None when the most expensive row misses the target.
    """
    ordered = sorted(rows, key=lambda r: r[0])
    best = None
    for games, tvs in reversed(ordered):
        if max(tvs) > target:
            break
        best = games
    return best


def machine_line(git: bool = True) -> str:
    import torch

    from light_league.run_dir import git_revision

    load = os.getloadavg()
    rev = str(git_revision()) if git else ""
    return (
        (f"light_league git {rev[:12]}{'-dirty' if rev.endswith('-dirty') else ''}; " if git else "")
        + f"{os.cpu_count()} CPUs ({platform.platform()}), load average {load[0]:.1f} / {load[1]:.1f} / "
        f"{load[2]:.1f}; Python {platform.python_version()}, torch {torch.__version__}, numpy {np.__version__}"
    )


def spend_by_support(
    cells: dict[tuple[str, str], float], meta: dict[str, float]
) -> tuple[float, float, float]:
    """Shares of the games in cells with both members in the reference support, one, none."""
    total = sum(cells.values()) or 1.0
    counts = [0.0, 0.0, 0.0]
    for (a, b), n in cells.items():
        inside = (meta.get(a, 0.0) > 1e-3) + (meta.get(b, 0.0) > 1e-3)
        counts[2 - inside] += n
    return counts[0] / total, counts[1] / total, counts[2] / total


def undecided(ref: dict[str, Any], support: dict[str, float]) -> list[str]:
    """``a-b rate [low, high] (games)`` for the reference cells of a support member whose 95%
    interval holds 0.5."""
    from light_league.game_theory.uncertainty import cell_intervals

    ids = ref["ids"]
    rates, games = np.array(ref["win_rates"]), np.array(ref["games"])
    low, high = cell_intervals(rates, games)
    return [
        f"{a}-{b} {rates[i, j]:.3f} [{low[i, j]:.3f}, {high[i, j]:.3f}] ({games[i, j]:.0f} games)"
        for i, a in enumerate(ids)
        for j, b in enumerate(ids)
        if i != j and a in support and (b not in support or i < j) and low[i, j] <= 0.5 <= high[i, j]
    ]


def run_bench(
    members: Sequence[Member],
    games: Games,
    setup: Setup,
    *,
    reference_games: int,
    reference_path: Path | None,
    cache: Path | None,
    seeds: Sequence[int],
    fixed: Sequence[int],
    budgets: Sequence[int],
    batch: int,
    cap: int,
    target: float,
    emit: Any = print,
) -> dict[str, Any]:
    """Reference, replays over seeds and settings, and the report lines (through ``emit``)."""
    ref = reference(members, games, setup, reference_games, reference_path)
    ref_meta = ref["meta"]
    generations = growth(members)
    support = {k: v for k, v in ref_meta.items() if v > 1e-3}
    emit(
        f"Population: {len(members)} members ({sum(m.path is None for m in members)} baselines), joining over "
        f"{len(generations)} generations ({', '.join(str(len(g)) for g in generations)} members); "
        f"{len(members) * (len(members) - 1) // 2} pairs."
    )
    emit(
        f"Reference: {ref['games_per_pair']} games per pair (half in each seat order), meta-solver "
        f"{ref['meta_solver'].get('name')}, played in {ref['seconds']} s ({ref['made']}); "
        f"its own posterior stability (mean TV over {ref['stability_draws']} redrawn tables): "
        f"{ref['stability_tv_mean']}."
    )
    emit(
        "Reference cells of a support member whose 95% interval holds 0.5 (what decides its mixture): "
        + (", ".join(undecided(ref, support)) or "none")
    )
    emit(
        "Reference meta-strategy: "
        + ", ".join(f"{k} {v:.3f}" for k, v in sorted(support.items(), key=lambda kv: -kv[1]))
    )
    emit("")
    results: dict[str, list[tuple[int, list[float], list[Replay]]]] = {"fixed": [], "adaptive": []}
    settings = [("fixed", n) for n in fixed] + [("adaptive", b) for b in budgets]
    banks = {s: GameBank(games.rollout(s), cache / f"bank_seed{s}.json" if cache else None) for s in seeds}
    for method, value in settings:
        runs = []
        for s in seeds:
            if method == "fixed":
                runs.append(replay(generations, banks[s], games, setup, episodes_per_pair=value, seed=s))
            else:
                runs.append(
                    replay(
                        generations,
                        banks[s],
                        games,
                        setup,
                        episodes_per_pair="adaptive",
                        budget=value,
                        batch=batch,
                        cap=cap,
                        seed=s,
                    )
                )
        tvs = [tv(r.meta, ref_meta) for r in runs]
        spent = max(r.games for r in runs)
        results[method].append((value, tvs, runs))
        emit(
            f"{method:<8} {'n=' if method == 'fixed' else 'B='}{value:<6} games {spent:>7}  TV per seed "
            + " ".join(f"{t:.3f}" for t in tvs)
            + f"  worst {max(tvs):.3f}  (games in support cells: both / one / none "
            + "/".join(f"{x:.2f}" for x in spend_by_support(runs[int(np.argmax(tvs))].cell_games, ref_meta))
            + ")"
        )
    for bank in banks.values():
        bank.save()
    emit("")
    best = {
        m: fewest([(max(r.games for r in runs), tvs) for _, tvs, runs in rows], target)
        for m, rows in results.items()
    }
    for m in [m for m in ("fixed", "adaptive") if results[m]]:
        emit(
            f"fewest games with TV <= {target} in every seed ({m}): "
            + ("not reached in the grid" if best[m] is None else str(best[m]))
        )
    if best["fixed"] and best["adaptive"]:
        emit(f"ratio fixed / adaptive: {best['fixed'] / best['adaptive']:.2f}x")
    return {"reference": ref, "results": results, "best": best}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--run", type=Path, default=ROOT / "runs" / "docs_league", help="a finished league.yaml run"
    )
    parser.add_argument("--generations", type=int, nargs="+", default=list(RUN_GENERATIONS))
    parser.add_argument("--reference-games", type=int, default=1000, help="games per pair of the reference")
    parser.add_argument("--reference", type=Path, help="reference table cache (JSON)")
    parser.add_argument("--cache", type=Path, help="folder for each seed's bank of games")
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2, 3, 4])
    parser.add_argument(
        "--fixed", type=int, nargs="*", default=list(FIXED), help="episodes_per_pair values (none: skip)"
    )
    parser.add_argument(
        "--budgets", type=int, nargs="*", default=list(BUDGETS), help="adaptive_budget values (none: skip)"
    )
    parser.add_argument("--batch", type=int, default=16, help="adaptive_batch")
    parser.add_argument("--cap", type=int, default=1000, help="adaptive_cap")
    parser.add_argument("--target", type=float, default=0.05, help="TV distance to the reference")
    parser.add_argument("--envs", type=int, default=256, help="games played at once")
    parser.add_argument("--quick", action="store_true", help="baselines only, tiny grid (a smoke run)")
    parser.add_argument("--out", type=Path, help="also write the output here")
    args = parser.parse_args(argv)
    lines: list[str] = []

    def emit(line: str) -> None:
        print(line, flush=True)
        lines.append(line)

    emit(f"# command: python bench/adaptive_evaluation.py {' '.join(sys.argv[1:] if argv is None else argv)}")
    emit(f"# {dt.datetime.now(dt.UTC).strftime('%Y-%m-%d %H:%M UTC')}; {machine_line()}")
    if args.quick:
        members = [Member(b, AgentType.BASELINE.value, g) for b, g in zip(BASELINES[1:], (0, 0, 1, 2, 2))]
        setup = Setup(
            envs.make_spec("battalion", team_size=2), "battalion", {"name": "nash"}, list(BASELINES[1:])
        )
        games = Games("battalion", {"team_size": 2}, members, min(args.envs, 32))
        fixed, budgets, seeds, ref_games = [4, 16], [20, 80], args.seeds[:2], min(args.reference_games, 40)
    else:
        run = RunReader(args.run)
        config = run.config
        members = members_from_run(run, args.generations)
        spec = envs.make_spec(config.env.name, **config.env.options)
        setup = Setup(
            spec, config.env.name, dict(config.league.meta_solver), list(config.evaluation.baselines)
        )
        games = Games(config.env.name, dict(config.env.options), members, args.envs)
        fixed, budgets, seeds, ref_games = args.fixed, args.budgets, args.seeds, args.reference_games
    start = time.perf_counter()
    run_bench(
        members,
        games,
        setup,
        reference_games=ref_games,
        reference_path=args.reference,
        cache=args.cache,
        seeds=seeds,
        fixed=fixed,
        budgets=budgets,
        batch=args.batch,
        cap=args.cap,
        target=args.target,
        emit=emit,
    )
    emit(
        f"# finished {dt.datetime.now(dt.UTC).strftime('%Y-%m-%d %H:%M UTC')} after {time.perf_counter() - start:.0f} s; {machine_line(git=False)}"
    )
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
