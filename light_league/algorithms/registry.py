"""Learner and policy kinds by name.

``LEARNERS`` maps a learner kind (the config's ``learner.kind``) to its config section and
learner class; ``POLICY_LOADERS`` maps a policy meta's ``kind`` to a function that rebuilds the
policy from ``(weights, meta)``. Add a kind by adding one entry to each table.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from envs.base import EnvSpec
from light_league.algorithms.base import Learner, Policy
from light_league.algorithms.mappo.config import MAPPOConfig
from light_league.algorithms.mappo.learner import MAPPOLearner
from light_league.algorithms.mappo.policy import MAPPOPolicy
from light_league.algorithms.tabular import TabularPolicy
from light_league.config_base import Section
from light_league.errors import ConfigError, unknown_name

PolicyLoader = Callable[[dict[str, np.ndarray], dict[str, Any]], Policy]

LEARNERS: dict[str, tuple[type[Section], type[Learner]]] = {
    "mappo": (MAPPOConfig, MAPPOLearner),
}

POLICY_LOADERS: dict[str, PolicyLoader] = {
    "mappo": lambda weights, meta: MAPPOPolicy.from_meta(meta, weights),
    "tabular": lambda weights, meta: TabularPolicy.from_weights(weights, meta),
}


def learner_kind(kind: str) -> tuple[type[Section], type[Learner]]:
    """``(config class, learner class)`` of ``kind``; an unknown kind lists the valid ones."""
    if kind not in LEARNERS:
        raise unknown_name("learner", kind, LEARNERS)
    return LEARNERS[kind]


def make_learner(kind: str, spec: EnvSpec, config: Section, *, seed: int) -> Learner:
    """Build a learner of ``kind`` (its constructor is ``(spec, config, *, seed)``)."""
    config_cls, learner_cls = learner_kind(kind)
    if not isinstance(config, config_cls):
        raise ConfigError(f"learner {kind!r} needs a {config_cls.__name__}, got {type(config).__name__}")
    return learner_cls(spec, config, seed=seed)  # type: ignore[call-arg]


def build_policy(weights: dict[str, np.ndarray], meta: dict[str, Any]) -> Policy:
    """Rebuild a policy from its weights and ``policy_meta``."""
    kind = meta.get("kind")
    if kind not in POLICY_LOADERS:
        raise unknown_name("policy kind", str(kind), POLICY_LOADERS)
    return POLICY_LOADERS[str(kind)](weights, meta)
