"""Learner and policy kinds by name.

``LEARNERS`` maps a learner kind (the config's ``learner.kind``) to its config section and
learner class; ``POLICY_LOADERS`` maps a policy meta's ``kind`` to a function that rebuilds the
policy from ``(weights, meta)``. Add a kind by adding one entry to each table.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any, cast

import numpy as np

from envs.base import EnvSpec
from light_league.algorithms.base import Learner, Policy
from light_league.algorithms.mappo.learner import MAPPOLearner
from light_league.algorithms.mappo.policy import MAPPOPolicy
from light_league.algorithms.tabular import TabularPolicy
from light_league.config_base import Section
from light_league.errors import ConfigError, unknown_name
from light_league.plugins import PluginKind, resolve

PolicyLoader = Callable[[dict[str, np.ndarray], dict[str, Any]], Policy]

#: built-in RL learners by ``learner.kind`` (the exact best-response oracle ``exact_br`` is wired
#: separately by the runner: it needs no rollouts)
LEARNERS: dict[str, type[Learner]] = {"mappo": MAPPOLearner}

LEARNER_PLUGINS = PluginKind(
    label="learner",
    builtins=LEARNERS,
    group="light_league.learners",
    base=Learner,
    base_path="light_league.algorithms.base.Learner",
    implement="policy, update, get_weights, set_weights, policy_meta, state_dict, load_state_dict",
    also=("exact_br",),
)

POLICY_LOADERS: dict[str, PolicyLoader] = {
    "mappo": lambda weights, meta: MAPPOPolicy.from_meta(meta, weights),
    "tabular": lambda weights, meta: TabularPolicy.from_weights(weights, meta),
}


def learner_class(kind: str) -> type[Learner]:
    """The learner class of ``kind``: built-in, ``module:Class`` or entry point."""
    return cast(type[Learner], resolve(LEARNER_PLUGINS, kind))


def takes_device(cls: type) -> bool:
    """True when ``cls``'s constructor takes a ``device`` keyword (it trains on ``learner.device``).

    Read from the signature, not inherited: a plugin that subclasses MAPPOLearner without passing
    ``device`` on keeps training on the CPU, as before ``learner.device`` existed.
    """
    try:
        parameters = inspect.signature(cls).parameters
    except (TypeError, ValueError):
        return False
    device = parameters.get("device")
    return device is not None and device.kind in (device.KEYWORD_ONLY, device.POSITIONAL_OR_KEYWORD)


def make_learner(kind: str, spec: EnvSpec, config: Section, *, seed: int, device: str = "cpu") -> Learner:
    """Build a learner of ``kind`` (its constructor is ``(spec, config, *, seed)``, plus ``device``
    when it takes one, see :func:`takes_device`; any other learner trains on the CPU)."""
    cls = learner_class(kind)
    if not isinstance(config, cls.Config):
        raise ConfigError(f"learner {kind!r} needs a {cls.Config.__name__}, got {type(config).__name__}")
    if takes_device(cls):
        return cls(spec, config, seed=seed, device=device)  # type: ignore[call-arg]
    if device != "cpu":
        raise ConfigError(
            f"learner.device={device}: learner {kind!r} trains on the CPU only; set learner.device=cpu (or auto)"
        )
    return cls(spec, config, seed=seed)  # type: ignore[call-arg]


def build_policy(weights: dict[str, np.ndarray], meta: dict[str, Any]) -> Policy:
    """Rebuild a policy from its weights and ``policy_meta``."""
    kind = meta.get("kind")
    if kind not in POLICY_LOADERS:
        raise unknown_name("policy kind", str(kind), POLICY_LOADERS)
    return POLICY_LOADERS[str(kind)](weights, meta)
