"""Sampled regret minimisation with function approximation, whose deployable policy is an
average-strategy network (ESCHER's estimator; docs/regret.md).

The config imports at once; the learner and the policy (which need torch) on first use.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from light_league.algorithms.regret.config import RegretConfig

if TYPE_CHECKING:
    from light_league.algorithms.regret.learner import RegretLearner
    from light_league.algorithms.regret.policy import RegretPolicy

_LAZY = {"RegretLearner": "learner", "RegretPolicy": "policy"}

__all__ = ["RegretConfig", "RegretLearner", "RegretPolicy"]


def __getattr__(name: str) -> Any:
    if name not in _LAZY:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{_LAZY[name]}"), name)
    globals()[name] = value
    return value
