"""AgentManager: the population and everything measured about it.

A facade over its parts, each of which keeps (and checks) its own state: the
:class:`~light_league.league.AgentPool` (frozen members), the :class:`LearnerBook` (each learner's
role, steps and snapshots), the :class:`GameRecords` (match log, AlphaStar's decayed win rates of
training games, which gate snapshots and weight PFSP, the evaluation payoff table, the sequential
Elo, behaviour diversity), the :class:`MetaGame` (the meta-strategy, its stability, adaptive
evaluation's priorities) and the :class:`Archive` (members outside the active set, which is what
the scheduler, evaluation and meta-game see). It is the scheduler's read-only ``LeagueView``.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable, Collection, Mapping
from typing import Any

import numpy as np

from light_league.agents.agent_pool import AgentPool
from light_league.agents.archive import Archive, ArchiveChange
from light_league.agents.game_records import GameRecords
from light_league.agents.learner_book import LearnerBook
from light_league.agents.meta_game import LeagueStats, MetaGame
from light_league.agents.meta_solvers import MetaSolver
from light_league.config_base import Section
from light_league.game_theory.diversity import diversity_score
from light_league.game_theory.elo import DEFAULT_BASELINES
from light_league.game_theory.nash import nash_entropy
from light_league.run_dir import RunDir
from light_league.types import AgentRecord, AgentType, Behaviour, MatchResult
from light_league.utils.checks import is_int, require

__all__ = ["AgentManager", "LeagueStats"]


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
        archive: Archive | None = None,
    ) -> None:
        self.pool = AgentPool(pool_manifest=str(run_dir.pool), max_size=pool_max_size)
        #: the fixed Elo of each baseline, as its env declares it (``envs.fixed_policy_ratings``)
        fixed = DEFAULT_BASELINES if baseline_ratings is None else baseline_ratings
        self.results = GameRecords(
            run_dir,
            payoff_decay=payoff_decay,
            elo_k=elo_k,
            baselines={b: fixed.get(b, 1000.0) for b in baselines},
            num_actions=num_actions,
        )
        self.book = LearnerBook()
        self.meta_game = MetaGame(
            meta_solver, stability_draws=stability_draws, stability_max_s=stability_max_s, seed=seed
        )
        self.archive = archive or Archive()
        self._generation = 0
        #: incremented on every resume; stamped on match records so leaks of a killed run are visible
        self.session = 0

    # ------------------------------------------------------------------ LeagueView
    @property
    def generation(self) -> int:
        return self._generation

    def members(self) -> list[AgentRecord]:
        """The active members (all of the pool's unless ``league.active_set`` archived some)."""
        return [r for r in self.pool.list() if r.agent_id not in self.archive]

    def member_ids(self) -> list[str]:
        return [r.agent_id for r in self.members()]

    def all_members(self) -> list[AgentRecord]:
        return self.pool.list()  # the archived ones too (roles with ``opponents: history``)

    def learners(self) -> dict[str, AgentType]:
        return dict(self.book.roles)

    def win_rate(self, a: str, b: str) -> float:
        return self.results.training.win_rate(a, b)

    def games(self, a: str, b: str) -> float:
        return self.results.training.games(a, b)

    def meta_strategy(self) -> dict[str, float]:
        return dict(self.meta_game.meta_strategy)

    def payoff(self) -> tuple[list[str], np.ndarray, np.ndarray]:
        ids = self.member_ids()
        return (ids, *self.results.payoff_table.matrix(ids))

    def steps_since_checkpoint(self, learner_id: str) -> int:
        return self.book.steps_since[learner_id]

    # ------------------------------------------------------------------ population
    def register_learner(self, learner_id: str, role: AgentType) -> None:
        self.book.register(learner_id, role)

    def add_baseline(self, name: str) -> AgentRecord:
        meta = {"generation": self._generation}
        return self.pool.add(f"fixed:{name}", AgentType.BASELINE, meta, agent_id=name)

    def next_member_id(self, learner_id: str) -> str:
        return self.book.next_member_id(learner_id)

    def add_snapshot(self, learner_id: str, snapshot_path: str) -> AgentRecord:
        """Freeze ``learner_id`` into the population (the weights were copied by the PolicyServer)."""
        member_id, steps = self.book.snapshot(learner_id)
        meta, role = {"generation": self._generation, "steps": steps}, self.book.roles[learner_id]
        return self.pool.add(snapshot_path, role, meta, agent_id=member_id, parent=learner_id)

    def reset_learner(self, learner_id: str) -> None:
        self.book.steps_since[learner_id] = 0

    # ------------------------------------------------------------------ results
    @property
    def games_this_generation(self) -> dict[str, int]:
        """Games recorded in the current generation, by kind (``train``, ``eval``)."""
        return self.results.this_generation

    def record_training(self, results: list[MatchResult], env_steps: Mapping[str, int]) -> None:
        self.book.add_steps(env_steps)
        self.results.record(results, kind="train", generation=self._generation, session=self.session)

    def record_evaluation(self, results: list[MatchResult], behaviour: Mapping[str, Behaviour]) -> None:
        self.results.record(results, kind="eval", generation=self._generation, session=self.session)
        learned = {r.agent_id for r in self.pool.list() if r.agent_type != AgentType.BASELINE}
        self.results.record_evaluation(results, behaviour, learned)

    def record_exact(self, pairs: Mapping[tuple[str, str], float], games: int) -> None:
        """Exact expected outcomes (seat 0's, in [0, 1]) entered as ``games`` nominal games each."""
        self.results.record_exact(pairs, games)

    # ------------------------------------------------------------------ meta-game
    def missing_pairs(self) -> list[tuple[str, str]]:
        """Unplayed pairs of the active set, then of the new members with :meth:`Archive.sample`."""
        table, gen = self.results.payoff_table, self._generation
        new = [r.agent_id for r in self.members() if r.metadata.get("generation") == gen]
        return table.missing(self.member_ids()) + self.archive.pairs(table, new, gen)

    def solve(
        self,
        game: Callable[[list[str]], dict[str, Any]] | None = None,
        shared: Callable[[list[str]], np.ndarray] | None = None,
    ) -> LeagueStats:
        """Payoff table, meta-strategy and its entropy, Elo and diversity of the current population.
        ``game(ids)``: what a game meta-solver (``MetaSolver.game``) reads besides the table
        (``{"game": ExactGame}``); ``shared(ids)``: the table the meta-solver reads instead of the
        played one (``evaluation.shared_games``; the reported table, ratings and intervals stay played)."""
        records = self.members()
        ids = [r.agent_id for r in records]
        table = self.results.payoff_table
        rates, games = table.matrix(ids)
        if np.isnan(rates).any():
            raise RuntimeError(f"payoff table has unplayed pairings {table.missing(ids)[:3]}; evaluate them")
        read_game = None if game is None else functools.partial(game, ids)
        exact, shared_rates = table.exact_cells(ids), None if shared is None else shared(ids)
        solved = self.meta_game.solve(ids, rates, games, exact, self._generation, read_game, shared_rates)
        active = set(ids)  # diversity and ratings over the active set (all members with no archive)
        embedded = self.results.diversity.embeddings(active)
        rating, rating_se, anchor = self.results.ratings(ids, everyone=not self.archive.members)
        return LeagueStats(
            ids,
            [r.agent_type.value for r in records],
            rates,
            games,
            solved.meta_strategy,
            nash_entropy(solved.meta_strategy),
            {i: self.results.elo.get_rating(i) for i in ids},
            diversity_score(embedded) if len(embedded) >= 2 else None,
            meta_solver=self.meta_game.solver.name,
            ci_low=solved.ci_low,
            ci_high=solved.ci_high,
            stability=solved.stability,
            rating=rating,
            rating_se=rating_se,
            rating_anchor=anchor,
        )

    def evaluation_games(self, a: str, b: str) -> float:
        """Games (evaluation and exact) recorded in the payoff table between ``a`` and ``b``."""
        return float(self.results.payoff_table.games(a, b))

    def refinement_pairs(self, cap: float) -> list[tuple[str, str]]:
        return [(a, b) for a, b, _ in self.refinement_priorities(cap)]

    def update_archive(self, stats: LeagueStats, keep: Collection[str] = ()) -> ArchiveChange:
        """The archive after this generation's solve (:meth:`Archive.settle`)."""
        return self.archive.settle(stats, self.results, self.pool, self._generation, keep)

    def refinement_priorities(self, cap: float) -> list[tuple[str, str, float]]:
        """Played pairs worth more games, highest priority first (:meth:`MetaGame.refinement`)."""
        ids, rates, games = self.payoff()
        if len(ids) < 2 or np.isnan(rates).any():
            return []
        ranked = self.meta_game.refinement(rates, games, self.results.payoff_table.exact_cells(ids), cap)
        return [(ids[i], ids[j], priority) for i, j, priority in ranked]

    def advance(self) -> None:
        self._generation += 1
        self.results.next_generation()

    # ------------------------------------------------------------------ persistence
    def save(self) -> None:
        self.results.save()

    def state_dict(self) -> dict[str, Any]:
        return {
            "generation": self._generation,
            "session": self.session,
            **self.book.state_dict(),
            **self.meta_game.state_dict(),
            **self.results.state_dict(),
            **self.archive.state_dict(),
            "saved_at": time.time(),
        }

    @staticmethod
    def check_state(state: Any, roles: set[AgentType]) -> None:
        """Raise (``TypeError``, ``KeyError``, ``ValueError``) unless :meth:`load_state_dict` restores
        ``state`` with learners of ``roles``: each part checked by its owner; nothing changes."""
        require(isinstance(state, dict), "'agents' is not an object")
        require(is_int(state["generation"]) and is_int(state.get("session", 0)), "agents.generation/session")
        LearnerBook.check_state(state, roles)
        MetaGame.check_state(state)
        GameRecords.check_state(state)
        Archive.check_state(state)

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self._generation = int(state["generation"])
        self.session = int(state.get("session", 0)) + 1
        self.book.load_state_dict(state)
        self.meta_game.load_state_dict(state)
        self.results.load_state_dict(state)
        self.archive.load_state_dict(state)
        self.pool.mark_archived(self.archive.members)  # the manifest may be a killed generation's
