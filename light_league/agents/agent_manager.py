"""AgentManager: the population and everything measured about it.

It owns the :class:`~light_league.league.AgentPool` (frozen members), the match log, the
evaluation :class:`PayoffTable`, AlphaStar's decayed win-rate estimates of training games (which
gate snapshots and weight PFSP), the ratings (a Bradley-Terry fit of the evaluation games, and the
sequential Elo beside it), behaviour diversity and the Nash mixture. It is the
scheduler's read-only :class:`~light_league.scheduling.task_scheduler.LeagueView`.
"""

from __future__ import annotations

import time
from collections import defaultdict
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from scipy import special

from light_league.agents.meta_solvers import META_SOLVERS, MetaSolver, checked_mixture
from light_league.agents.payoff_table import PayoffTable
from light_league.config_base import Section
from light_league.game_theory.diversity import DiversityTracker, TrajectoryBatch
from light_league.game_theory.elo import DEFAULT_BASELINES, bradley_terry_ratings
from light_league.game_theory.nash import compute_nash_distribution, nash_entropy
from light_league.game_theory.payoff import DecayedPayoff
from light_league.game_theory.uncertainty import Stability, cell_intervals, meta_stability
from light_league.league.agent_pool import AgentPool
from light_league.league.elo_registry import EloRegistry
from light_league.league.match_database import MatchDatabase
from light_league.run_dir import RunDir
from light_league.types import AgentRecord, AgentType, Behaviour, MatchResult, learner_role
from light_league.utils.atomic import atomic_write_json


@dataclass
class LeagueStats:
    """The meta-game of one generation (what is logged and written to generations.jsonl)."""

    ids: list[str]
    roles: list[str]
    win_rates: np.ndarray
    games: np.ndarray
    nash: np.ndarray
    nash_entropy: float
    #: sequential Elo (game by game, order-dependent): a secondary figure
    elo: dict[str, float]
    diversity: float | None
    #: the rating: Elo from a Bradley-Terry fit over all rated games (order-independent)
    rating: dict[str, float] = field(default_factory=dict)
    extra: dict[str, Any] = field(default_factory=dict)
    #: the meta-strategy (the configured meta-solver's mixture; equal to ``nash`` by default)
    meta: np.ndarray | None = None
    meta_solver: str = "nash"
    #: (n, n) bounds of each cell's 95% interval (zero width for exact cells and the diagonal)
    ci_low: np.ndarray | None = None
    ci_high: np.ndarray | None = None
    stability: Stability | None = None

    @property
    def meta_strategy(self) -> np.ndarray:
        return self.nash if self.meta is None else self.meta


class AgentManager:
    def __init__(
        self,
        run_dir: RunDir,
        *,
        pool_max_size: int,
        payoff_decay: float,
        elo_k: float,
        baselines: list[str],
        num_actions: int,
        baseline_ratings: Mapping[str, float] | None = None,
        meta_solver: tuple[MetaSolver, Section | None] | None = None,
        stability_draws: int = 0,
        stability_max_s: float = 2.0,
        seed: int = 0,
    ) -> None:
        self.pool = AgentPool(pool_manifest=str(run_dir.pool), max_size=pool_max_size)
        self.matches = MatchDatabase(db_path=str(run_dir.matches))
        self.payoff_table = PayoffTable()
        self.training = DecayedPayoff(decay=payoff_decay)
        self._elo_path = run_dir.elo
        #: the fixed Elo of each baseline, as its env declares it (``envs.fixed_policy_ratings``)
        fixed = DEFAULT_BASELINES if baseline_ratings is None else baseline_ratings
        self.elo = EloRegistry(
            run_dir.elo, k_factor=elo_k, baselines={b: fixed.get(b, 1000.0) for b in baselines}
        )
        self.diversity = DiversityTracker(n_actions=num_actions)
        self._num_actions = num_actions
        self._learners: dict[str, AgentType] = {}
        self._steps_since: dict[str, int] = defaultdict(int)
        self._steps_total: dict[str, int] = defaultdict(int)
        self._snapshots: dict[str, int] = defaultdict(int)
        self._nash: dict[str, float] = {}
        self._meta: dict[str, float] = {}
        self._meta_solver, self._meta_options = meta_solver or (META_SOLVERS["nash"], None)
        self._stability_draws = stability_draws
        self._stability_max_s = stability_max_s
        self._seed = seed
        #: unordered pairs whose payoff is exact (record_exact): no sampling uncertainty
        self._exact: set[tuple[str, str]] = set()
        self._generation = 0
        #: incremented on every resume; stamped on match records so leaks of a killed run are visible
        self.session = 0
        #: games recorded in the current generation, by kind
        self.games_this_generation: dict[str, int] = defaultdict(int)

    # ------------------------------------------------------------------ LeagueView
    @property
    def generation(self) -> int:
        return self._generation

    def members(self) -> list[AgentRecord]:
        return self.pool.list()

    def member_ids(self) -> list[str]:
        return [r.agent_id for r in self.pool.list()]

    def learners(self) -> dict[str, AgentType]:
        return dict(self._learners)

    def win_rate(self, a: str, b: str) -> float:
        return self.training.win_rate(a, b)

    def games(self, a: str, b: str) -> float:
        return self.training.games(a, b)

    def nash(self) -> dict[str, float]:
        return dict(self._nash)

    def meta_strategy(self) -> dict[str, float]:
        return dict(self._meta or self._nash)

    def payoff(self) -> tuple[list[str], np.ndarray, np.ndarray]:
        ids = self.member_ids()
        rates, games = self.payoff_table.matrix(ids)
        return ids, rates, games

    def steps_since_checkpoint(self, learner_id: str) -> int:
        return self._steps_since[learner_id]

    # ------------------------------------------------------------------ population
    def register_learner(self, learner_id: str, role: AgentType) -> None:
        self._learners[learner_id] = learner_role(role)

    def add_baseline(self, name: str) -> AgentRecord:
        return self.pool.add(
            snapshot_path=f"fixed:{name}",
            agent_type=AgentType.BASELINE,
            agent_id=name,
            metadata={"generation": self._generation},
        )

    def next_member_id(self, learner_id: str) -> str:
        return f"{learner_id}-v{self._snapshots[learner_id]}"

    def add_snapshot(self, learner_id: str, snapshot_path: str) -> AgentRecord:
        """Freeze ``learner_id`` into the population (the weights were copied by the PolicyServer)."""
        member_id = self.next_member_id(learner_id)
        self._snapshots[learner_id] += 1
        self._steps_since[learner_id] = 0
        return self.pool.add(
            snapshot_path=snapshot_path,
            agent_type=self._learners[learner_id],
            agent_id=member_id,
            parent=learner_id,
            metadata={"generation": self._generation, "steps": self._steps_total[learner_id]},
        )

    def reset_learner(self, learner_id: str) -> None:
        self._steps_since[learner_id] = 0

    # ------------------------------------------------------------------ results
    def record_training(self, results: list[MatchResult], env_steps: Mapping[str, int]) -> None:
        for lid, steps in env_steps.items():
            self._steps_since[lid] += steps
            self._steps_total[lid] += steps
        self._record(results, kind="train")

    def record_evaluation(self, results: list[MatchResult], behaviour: Mapping[str, Behaviour]) -> None:
        self._record(results, kind="eval")
        by_pair: dict[tuple[str, str], list[float]] = defaultdict(list)
        for r in results:
            by_pair[(r.player_id, r.opponent_id)].append(r.outcome)
        for (a, b), outs in by_pair.items():
            self.payoff_table.add(a, b, float(sum(outs)), float(len(outs)))
        self._update_elo([(r.player_id, r.opponent_id, r.outcome) for r in results])
        self._update_diversity(behaviour)

    def record_exact(self, pairs: Mapping[tuple[str, str], float], games: int) -> None:
        """Exact expected outcomes (seat 0's, in [0, 1]) entered as ``games`` nominal games each."""
        for (a, b), value in pairs.items():
            self.payoff_table.add(a, b, value * games, float(games))
            self._exact.add((min(a, b), max(a, b)))
        # Elo sees the nominal games round-robin over the pairs (no pair's games all at once)
        self._update_elo([(a, b, value) for _ in range(games) for (a, b), value in pairs.items()])

    def _record(self, results: list[MatchResult], *, kind: str) -> None:
        if not results:
            return
        records = [
            {
                "a": r.player_id,
                "b": r.opponent_id,
                "outcome": r.outcome,
                "seat": r.player_seat,
                "generation": self._generation,
                "kind": kind,
                "session": self.session,
                **({"drawn_generation": r.drawn_generation} if kind == "train" else {}),
            }
            for r in results
        ]
        self.matches.record_many(records)
        self.games_this_generation[kind] += len(records)
        grouped: dict[tuple[str, str], list[float]] = defaultdict(list)
        for r in results:
            grouped[(r.player_id, r.opponent_id)].append(r.outcome)
        for (a, b), outs in grouped.items():
            self.training.update_many(a, b, np.asarray(outs))

    def _update_elo(self, games: list[tuple[str, str, float]]) -> None:
        """Standard Elo, one K-factor update per game in the order the games finished."""
        for a, b, outcome in games:
            if not self.elo.is_baseline(a):
                self.elo.update(a, b, outcome)
            elif not self.elo.is_baseline(b):
                self.elo.update(b, a, 1.0 - outcome)

    def _update_diversity(self, behaviour: Mapping[str, Behaviour]) -> None:
        members = set(self.member_ids())
        for pid, beh in behaviour.items():
            if pid not in members or self.pool.get(pid).agent_type == AgentType.BASELINE:
                continue
            actions, positions = beh.arrays()
            if actions.size == 0:
                continue
            self.diversity.update(pid, TrajectoryBatch(actions=actions, positions=positions, agent_id=pid))

    # ------------------------------------------------------------------ meta-game
    def missing_pairs(self) -> list[tuple[str, str]]:
        return self.payoff_table.missing(self.member_ids())

    def solve(self, game: Callable[[list[str]], dict[str, Any]] | None = None) -> LeagueStats:
        """Payoff table, Nash mixture, entropy, Elo and diversity of the current population.

        ``game(ids)`` gives a game meta-solver (``MetaSolver.game``) what it reads besides the
        table: ``{"game": ExactGame}`` for the members ``ids``."""
        records = self.pool.list()
        ids = [r.agent_id for r in records]
        rates, games = self.payoff_table.matrix(ids)
        if np.isnan(rates).any():
            missing = self.payoff_table.missing(ids)[:3]
            raise RuntimeError(f"payoff table has unplayed pairings {missing}; evaluation must cover them")
        nash = compute_nash_distribution(rates)
        self._nash = dict(zip(ids, nash.tolist()))
        solver, options = self._meta_solver, self._meta_options
        began = time.perf_counter()
        if solver is META_SOLVERS["nash"]:
            meta = nash
        elif solver.game:
            if game is None:
                raise RuntimeError(f"meta-solver {solver.name!r} reads the game; solve() was not given it")
            meta = checked_mixture(solver, solver(rates, options, **game(ids)), len(ids))
        else:
            meta = checked_mixture(solver, solver(rates, options), len(ids))
        solve_seconds = time.perf_counter() - began
        self._meta = dict(zip(ids, meta.tolist()))
        exact = np.array([[(min(a, b), max(a, b)) in self._exact for b in ids] for a in ids], dtype=bool)
        exact = exact.reshape(len(ids), len(ids))
        low, high = cell_intervals(rates, games, exact)
        rng = np.random.default_rng([self._seed, self._generation])
        stability = meta_stability(
            solver,
            options,
            rates,
            games,
            meta,
            draws=self._stability_draws if len(ids) > 1 and not solver.game else 0,
            rng=rng,
            exact=exact,
            max_seconds=self._stability_max_s,
            solve_seconds=solve_seconds,
        )
        diversity = self.diversity.diversity_score() if len(self.diversity) >= 2 else None
        return LeagueStats(
            ids,
            [r.agent_type.value for r in records],
            rates,
            games,
            nash,
            nash_entropy(nash),
            {i: self.elo.get_rating(i) for i in ids},
            diversity,
            meta=meta,
            meta_solver=solver.name,
            ci_low=low,
            ci_high=high,
            stability=stability,
            rating=self.ratings(ids),
        )

    def evaluation_games(self, a: str, b: str) -> float:
        """Games (evaluation and exact) recorded in the payoff table between ``a`` and ``b``."""
        return float(self.payoff_table.games(a, b))

    def refinement_pairs(self, cap: float) -> list[tuple[str, str]]:
        """Played pairs worth more evaluation games, most useful first (adaptive evaluation);
        :meth:`refinement_priorities` without the priorities."""
        return [(a, b) for a, b, _ in self.refinement_priorities(cap)]

    def refinement_priorities(self, cap: float) -> list[tuple[str, str, float]]:
        """Played pairs worth more evaluation games and their priority, highest first.

        With ``m`` the meta-strategy of the current table ``W``, member ``k`` scores
        ``u_k = sum_j m_j W[k, j]`` against it, and the mixture itself ``v = m W m`` (0.5 in a
        win-rate table). What decides the mixture is which side of ``v`` each ``u_k`` lies on
        (outside the support below it, inside equal to it). ``f_k`` is the probability that
        ``u_k`` lies on the other side (normal approximation, each cell's standard deviation
        from its 95% interval): 1/2 for support members, near 0 for members far outside. Cell
        ``(i, j)`` enters ``u_i`` with weight ``m_j`` and ``u_j`` with weight ``m_i``, so its
        priority is ``(f_i m_j + f_j m_i) * sd_ij``: cells between support members, and between
        the support and members that may belong to it. Cells no decision depends on (both
        members clearly outside the support), exact cells, cells with ``cap`` games or more and
        unplayed pairs are left out.
        """
        ids, rates, games = self.payoff()
        n = len(ids)
        played = ~np.isnan(rates)
        if n < 2 or not played.all():
            return []
        solver, options = self._meta_solver, self._meta_options
        meta = checked_mixture(solver, solver(rates, options), n)
        exact = np.array([[(min(a, b), max(a, b)) in self._exact for b in ids] for a in ids], dtype=bool)
        exact = exact.reshape(n, n)
        low, high = cell_intervals(rates, games, exact)
        sd = (high - low) / (2.0 * 1.959964)
        scores = rates @ meta
        value = float(meta @ scores)
        spread = np.sqrt((sd**2) @ (meta**2))
        gap = np.abs(scores - value)
        with np.errstate(divide="ignore", invalid="ignore"):
            flip = np.where(spread > 0, 0.5 * special.erfc(gap / (spread * np.sqrt(2.0))), 0.0)
        flip[gap <= 1e-9] = 0.5
        priority = (flip[:, None] * meta[None, :] + meta[:, None] * flip[None, :]) * sd
        priority[np.tril_indices(n)] = 0.0
        priority[(games >= cap) | exact] = 0.0
        order = np.argsort(-priority, axis=None, kind="stable")
        rows, cols = np.unravel_index(order, priority.shape)
        return [
            (ids[i], ids[j], float(priority[i, j]))
            for i, j in zip(rows.tolist(), cols.tolist())
            if priority[i, j] > 0.0
        ]

    def ratings(self, ids: list[str]) -> dict[str, float]:
        """Fitted Elo of ``ids``: Bradley-Terry over every evaluation (and exact) game so far.

        Every agent ever rated takes part (a member evicted from the pool still anchors those it
        played); baselines keep their fixed ratings.
        """
        everyone = list(dict.fromkeys([*self.payoff_table.agents(), *ids]))
        scores, games = self.payoff_table.scores(everyone)
        fixed = np.array([self.elo.baselines.get(a, np.nan) for a in everyone], dtype=np.float64)
        fitted = bradley_terry_ratings(scores, games, fixed, prior_rating=self.elo.initial_rating)
        wanted = set(ids)
        return {a: float(r) for a, r in zip(everyone, fitted.tolist()) if a in wanted}

    def advance(self) -> None:
        self._generation += 1
        self.games_this_generation = defaultdict(int)

    # ------------------------------------------------------------------ persistence
    def save(self) -> None:
        self.elo.save()
        self.matches.sync()

    def state_dict(self) -> dict[str, Any]:
        return {
            "generation": self._generation,
            "session": self.session,
            "learners": {k: v.value for k, v in self._learners.items()},
            "steps_since": dict(self._steps_since),
            "steps_total": dict(self._steps_total),
            "snapshots": dict(self._snapshots),
            "nash": self._nash,
            "meta": self._meta,
            "exact_pairs": sorted([a, b] for a, b in self._exact),
            "payoff": self.payoff_table.state_dict(),
            "training": self.training.state_dict(),
            "elo": self.elo.state_dict(),
            "diversity": self.diversity.state_dict(),
            "saved_at": time.time(),
        }

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self._generation = int(state["generation"])
        self.session = int(state.get("session", 0)) + 1
        self._learners = {k: learner_role(v) for k, v in state["learners"].items()}
        self._steps_since = defaultdict(int, {k: int(v) for k, v in state["steps_since"].items()})
        self._steps_total = defaultdict(int, {k: int(v) for k, v in state["steps_total"].items()})
        self._snapshots = defaultdict(int, {k: int(v) for k, v in state["snapshots"].items()})
        self._nash = {k: float(v) for k, v in state["nash"].items()}
        self._meta = {k: float(v) for k, v in state.get("meta", {}).items()}
        self._exact = {(str(a), str(b)) for a, b in state.get("exact_pairs", [])}
        self.payoff_table = PayoffTable.from_state_dict(state["payoff"])
        self.training = DecayedPayoff.from_state_dict(state["training"])
        self.diversity = DiversityTracker.from_state_dict(state["diversity"])
        # the Elo file may hold updates of the interrupted generation: restore the checkpointed ratings
        atomic_write_json(self._elo_path, state["elo"])
        self.elo = EloRegistry(self._elo_path, k_factor=self.elo.k_factor, baselines=self.elo.baselines)
