"""The league tutorial's API: population, match log, opponent selection, and the meta-game math,
under the names the tutorial uses (``from light_league.league import AgentPool, ...``).

This package is the tutorial's door, not a part of the framework: the population, the match log
and the Elo registry the framework runs on live in :mod:`light_league.agents`, the math in
:mod:`light_league.game_theory`; both are re-exported here. The tutorial's matchmaker
(:class:`LeagueMatchmaker`, opponent selection by PFSP or a Nash mixture for a script of one's
own) lives here: a run picks opponents through its scheduler instead (:mod:`light_league.scheduling`).
"""

from light_league.agents.agent_pool import AgentPool, AgentRecord, AgentType, UnknownAgentError
from light_league.agents.elo_registry import EloRegistry
from light_league.agents.match_database import MatchDatabase
from light_league.game_theory.diversity import (
    DiversityTracker,
    TrajectoryBatch,
    diversity_score,
    embed_trajectory,
    pairwise_cosine_distances,
)
from light_league.game_theory.nash import build_payoff_matrix, compute_nash_distribution, nash_entropy
from light_league.game_theory.payoff import DecayedPayoff
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
