"""Game-theory math on arrays: Nash of zero-sum games, meta-solvers, PFSP weights, Elo, decayed
payoffs, diversity, payoff uncertainty.

numpy and scipy only (``tests/unit/test_layering.py``); nothing here knows about files, configs,
managers or executors. The meta-solvers' names, options and plugins are
:mod:`light_league.agents.meta_solvers`'; Elo ratings kept in a file are
:class:`light_league.league.EloRegistry`.
"""

from light_league.game_theory.diversity import (
    DiversityTracker,
    TrajectoryBatch,
    behaviour_features,
    diversity_score,
    embed_trajectory,
    pairwise_cosine_distances,
)
from light_league.game_theory.elo import DEFAULT_BASELINES, bradley_terry_ratings, elo_delta, expected_score
from light_league.game_theory.nash import (
    build_payoff_matrix,
    compute_nash_distribution,
    nash_entropy,
    regret_matching,
    solve_zero_sum,
)
from light_league.game_theory.payoff import DecayedPayoff
from light_league.game_theory.pfsp import pfsp_probabilities, pfsp_weights

__all__ = [
    "DEFAULT_BASELINES",
    "DecayedPayoff",
    "DiversityTracker",
    "TrajectoryBatch",
    "behaviour_features",
    "bradley_terry_ratings",
    "build_payoff_matrix",
    "compute_nash_distribution",
    "diversity_score",
    "elo_delta",
    "embed_trajectory",
    "expected_score",
    "nash_entropy",
    "pairwise_cosine_distances",
    "pfsp_probabilities",
    "pfsp_weights",
    "regret_matching",
    "solve_zero_sum",
]
