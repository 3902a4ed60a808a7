"""The league API: population, match log, opponent selection, and the meta-game math.

The math lives in :mod:`light_league.game_theory`; it is re-exported here under the names the
league tutorial uses.
"""

from light_league.game_theory.diversity import (
    DiversityTracker,
    TrajectoryBatch,
    diversity_score,
    embed_trajectory,
    pairwise_cosine_distances,
)
from light_league.game_theory.nash import build_payoff_matrix, compute_nash_distribution, nash_entropy
from light_league.game_theory.payoff import DecayedPayoff
from light_league.league.agent_pool import AgentPool, AgentRecord, AgentType, UnknownAgentError
from light_league.league.elo_registry import EloRegistry
from light_league.league.match_database import MatchDatabase
from light_league.league.matchmaker import LeagueMatchmaker

__all__ = [
    "AgentPool",
    "AgentRecord",
    "AgentType",
    "DecayedPayoff",
    "DiversityTracker",
    "EloRegistry",
    "LeagueMatchmaker",
    "MatchDatabase",
    "TrajectoryBatch",
    "UnknownAgentError",
    "build_payoff_matrix",
    "compute_nash_distribution",
    "diversity_score",
    "embed_trajectory",
    "nash_entropy",
    "pairwise_cosine_distances",
]
