"""MAPPO (Yu et al. 2022): decentralised actor, centralised critic, PPO with value normalisation."""

from light_league.algorithms.mappo.config import MAPPOConfig
from light_league.algorithms.mappo.learner import MAPPOLearner
from light_league.algorithms.mappo.policy import MAPPOPolicy
from light_league.algorithms.mappo.serialization import load_policy, load_policy_files, save_policy
from light_league.algorithms.mappo.valuenorm import ValueNorm

__all__ = [
    "MAPPOConfig",
    "MAPPOLearner",
    "MAPPOPolicy",
    "ValueNorm",
    "load_policy",
    "load_policy_files",
    "save_policy",
]
