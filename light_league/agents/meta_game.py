"""The meta-game of a generation: the payoff table solved by the configured meta-solver, how
stable that solution is, and which cells more evaluation games would settle (:class:`MetaGame`);
what is logged of it (:class:`LeagueStats`). The math is :mod:`light_league.game_theory`'s; this
is where the AgentManager's choices (solver, options, stability draws, seed) are applied to it.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from light_league.agents.meta_solvers import META_SOLVERS, MetaSolver, checked_mixture
from light_league.config_base import Section
from light_league.game_theory.uncertainty import (
    Stability,
    cell_intervals,
    meta_stability,
    refinement_priorities,
)
from light_league.utils.checks import numbers, require


@dataclass
class LeagueStats:
    """The meta-game of one generation (what is logged and written to generations.jsonl)."""

    ids: list[str]
    roles: list[str]
    win_rates: np.ndarray
    games: np.ndarray
    #: the meta-strategy: the configured meta-solver's mixture (the Nash mixture by default)
    meta_strategy: np.ndarray
    meta_entropy: float
    #: sequential Elo (game by game, order-dependent): a secondary figure
    elo: dict[str, float]
    diversity: float | None
    #: the rating: Elo from a Bradley-Terry fit over all rated games (order-independent)
    rating: dict[str, float] = field(default_factory=dict)
    #: each rating's standard error (0 for the anchor); the 95% interval is ± Z95 of it
    rating_se: dict[str, float] = field(default_factory=dict)
    #: the member the rating holds fixed, and its rating
    rating_anchor: tuple[str, float] | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    meta_solver: str = "nash"
    #: (n, n) bounds of each cell's 95% interval (zero width for exact cells and the diagonal)
    ci_low: np.ndarray | None = None
    ci_high: np.ndarray | None = None
    stability: Stability | None = None


@dataclass
class Solved:
    """A table solved: the meta-strategy, each cell's 95% interval, its stability."""

    meta_strategy: np.ndarray
    ci_low: np.ndarray
    ci_high: np.ndarray
    stability: Stability | None


class MetaGame:
    """The configured meta-solver (``league.meta_solver``) and its stability draws."""

    def __init__(
        self,
        solver: tuple[MetaSolver, Section | None] | None = None,
        *,
        stability_draws: int = 0,
        stability_max_s: float = 2.0,
        seed: int = 0,
    ) -> None:
        self.solver, self.options = solver or (META_SOLVERS["nash"], None)
        self.stability_draws = stability_draws
        self.stability_max_s = stability_max_s
        self.seed = seed
        #: the last solution's meta-strategy, member id -> probability
        self.meta_strategy: dict[str, float] = {}

    def mixture(self, rates: np.ndarray) -> np.ndarray:
        """The meta-solver's mixture of the table ``rates`` (a solver that reads the game excepted)."""
        return checked_mixture(self.solver, self.solver(rates, self.options), rates.shape[0])

    def solve(
        self,
        ids: list[str],
        rates: np.ndarray,
        games: np.ndarray,
        exact: np.ndarray,
        generation: int,
        game: Callable[[], dict[str, Any]] | None = None,
        shared: np.ndarray | None = None,
    ) -> Solved:
        """The meta-strategy (``game()``: what a game meta-solver reads besides the table), the
        cells' intervals and the meta-strategy's stability under posterior draws (seeded by the
        generation) of the members ``ids``; kept as the last solution. ``shared``: the table the
        solver reads instead of ``rates`` (``evaluation.shared_games``); the intervals stay those
        of the played table, and no posterior draws are taken (the played games' spread is not
        the shared table's)."""
        n = rates.shape[0]
        solver = self.solver
        began = time.perf_counter()
        read = rates if shared is None else shared
        if solver.game:
            if game is None:
                raise RuntimeError(f"meta-solver {solver.name!r} reads the game; solve() was not given it")
            meta = checked_mixture(solver, solver(read, self.options, **game()), n)
        else:
            meta = self.mixture(read)
        solve_seconds = time.perf_counter() - began
        self.meta_strategy = dict(zip(ids, meta.tolist()))
        low, high = cell_intervals(rates, games, exact)
        stability = meta_stability(
            solver,
            self.options,
            rates,
            games,
            meta,
            draws=self.stability_draws if n > 1 and not solver.game and shared is None else 0,
            rng=np.random.default_rng([self.seed, generation]),
            exact=exact,
            max_seconds=self.stability_max_s,
            solve_seconds=solve_seconds,
        )
        return Solved(meta, low, high, stability)

    def refinement(
        self, rates: np.ndarray, games: np.ndarray, exact: np.ndarray, cap: float
    ) -> list[tuple[int, int, float]]:
        """Cells worth more evaluation games, by priority
        (:func:`~light_league.game_theory.uncertainty.refinement_priorities` of the meta-strategy)."""
        return refinement_priorities(rates, games, self.mixture(rates), exact, cap)

    def state_dict(self) -> dict[str, Any]:
        return {"meta_strategy": self.meta_strategy}

    @staticmethod
    def check_state(state: dict[str, Any]) -> None:
        require(numbers(_saved(state)), "agents.meta_strategy")

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.meta_strategy = {k: float(v) for k, v in _saved(state).items()}


def _saved(state: dict[str, Any]) -> Any:
    """The saved meta-strategy; a checkpoint written before it had one name kept it as ``meta``
    (empty under the default solver) beside the Nash mixture ``nash``."""
    if "meta_strategy" in state:
        return state["meta_strategy"]
    return state.get("meta") or state["nash"]
