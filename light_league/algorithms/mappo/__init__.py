"""MAPPO (Yu et al. 2022): decentralised actor, centralised critic, PPO with value normalisation.

The config imports at once; the learner, policy and serialization (which need torch) on first
use, so that reading or checking an experiment config does not pay torch's import.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from light_league.algorithms.mappo.config import MAPPOConfig

if TYPE_CHECKING:
    from light_league.algorithms.mappo.learner import MAPPOLearner
    from light_league.algorithms.mappo.policy import MAPPOPolicy
    from light_league.algorithms.mappo.serialization import load_policy, load_policy_files, save_policy
    from light_league.algorithms.mappo.valuenorm import ValueNorm

#: name -> the submodule that defines it (imported on first access)
_LAZY = {
    "MAPPOLearner": "learner",
    "MAPPOPolicy": "policy",
    "ValueNorm": "valuenorm",
    "load_policy": "serialization",
    "load_policy_files": "serialization",
    "save_policy": "serialization",
}

__all__ = [
    "MAPPOConfig",
    "MAPPOLearner",
    "MAPPOPolicy",
    "ValueNorm",
    "load_policy",
    "load_policy_files",
    "save_policy",
]


def __getattr__(name: str) -> Any:
    if name not in _LAZY:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{_LAZY[name]}"), name)
    globals()[name] = value
    return value
