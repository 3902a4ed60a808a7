"""Learner and policy kinds by name.

:func:`learner_class` resolves a plugin learner (``module:Class`` or an entry point); the
built-in kinds and what each ``learner.kind`` is built from (component, learner class, settings,
device) are the learner table's, ``light_league/learner_kinds.py``. ``POLICY_LOADERS`` maps a policy meta's ``kind`` to a
function that rebuilds the policy from ``(weights, meta)``; a plugin learner whose policies are of
a new kind registers their loader under the entry-point group ``light_league.policy_loaders``.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterable, Mapping
from typing import Any, cast

import numpy as np

from light_league.algorithms.base import Learner, Policy
from light_league.algorithms.mappo.policy import MAPPOPolicy
from light_league.algorithms.regret.policy import RegretPolicy
from light_league.algorithms.tabular import TabularPolicy
from light_league.config_base import Section
from light_league.envs.base import EnvSpec
from light_league.errors import ConfigError, unknown_name
from light_league.plugins import PluginKind, entry_points, resolve

PolicyLoader = Callable[[dict[str, np.ndarray], dict[str, Any]], Policy]

#: entry-point group under which an installed package registers a plugin learner class
LEARNER_GROUP = "light_league.learners"

POLICY_LOADERS: dict[str, PolicyLoader] = {
    "mappo": lambda weights, meta: MAPPOPolicy.from_meta(meta, weights),
    "tabular": lambda weights, meta: TabularPolicy.from_weights(weights, meta),
    "regret": lambda weights, meta: RegretPolicy.from_meta(meta, weights),
}


def learner_class(kind: str, *, builtins: Iterable[str] = ()) -> type[Learner]:
    """The plugin learner class ``kind`` names: ``module:Class`` or an entry point of
    :data:`LEARNER_GROUP` (the built-in kinds are the learner table's, ``builtins``: named in
    the error for an unknown one)."""
    plugins = PluginKind(
        label="learner",
        builtins={},
        group=LEARNER_GROUP,
        base=Learner,
        base_path="light_league.algorithms.base.Learner",
        implement="policy, update, get_weights, set_weights, policy_meta, state_dict, load_state_dict",
        also=tuple(builtins),
    )
    return cast(type[Learner], resolve(plugins, kind))


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


def make_learner(
    cls: type[Learner], spec: EnvSpec, config: Section, *, seed: int, device: str = "cpu"
) -> Learner:
    """Build a learner of class ``cls`` (resolved from ``learner.kind`` once, by the learner
    table; its constructor is ``(spec, config, *, seed)``, plus ``device`` when it takes one, see
    :func:`takes_device`; any other learner trains on the CPU)."""
    name = cls.__name__
    if not isinstance(config, cls.Config):
        raise ConfigError(f"learner {name} needs a {cls.Config.__name__}, got {type(config).__name__}")
    if takes_device(cls):
        return cls(spec, config, seed=seed, device=device)  # type: ignore[call-arg]
    if device != "cpu":
        raise ConfigError(
            f"learner.device={device}: learner {name} trains on the CPU only; set learner.device=cpu (or auto)"
        )
    return cls(spec, config, seed=seed)  # type: ignore[call-arg]


#: entry-point group under which an installed package registers the loader of a policy kind its
#: plugin learner publishes (``policy_meta()["kind"]``): a ``(weights, meta) -> Policy`` function
POLICY_LOADER_GROUP = "light_league.policy_loaders"


def policy_loader(kind: str) -> PolicyLoader | None:
    """The loader of policy ``kind``: built-in, else an entry point of :data:`POLICY_LOADER_GROUP`
    (installed packages only: a policy's kind comes from data, so it never names a module path);
    None when there is none. Resolved in every process that rebuilds policies (rollout workers)."""
    if kind in POLICY_LOADERS:
        return POLICY_LOADERS[kind]
    plugins = entry_points(POLICY_LOADER_GROUP)
    if kind not in plugins:
        return None
    loader = plugins[kind].load()
    if not callable(loader):
        raise ConfigError(f"policy loader {kind!r} (entry point {plugins[kind].value!r}) is not callable")
    return cast(PolicyLoader, loader)


def known_policy_kinds() -> list[str]:
    return sorted({*POLICY_LOADERS, *entry_points(POLICY_LOADER_GROUP)})


#: the policy kind of an env's fixed opponent (scripted levels, random): built, not loaded
FIXED = "fixed"


def build_policy(
    weights: Mapping[str, np.ndarray],
    meta: Mapping[str, Any],
    *,
    env_name: str | None = None,
    env_options: Mapping[str, Any] | None = None,
) -> Policy:
    """Rebuild a policy from what a run keeps of it: its weights and ``policy_meta`` (the meta's
    ``kind`` picks the loader), or, for kind ``fixed``, the fixed opponent ``meta["name"]`` of env
    ``env_name`` (default ``meta["env"]``) with ``env_options``. The one function that does it:
    rollout workers and the evaluation (a PolicyServer entry's ``policy_meta``), ``load_policy``
    (files) and ``RunReader.policy`` (a run's member) all call it."""
    kind = str(meta.get("kind"))
    if kind == FIXED:
        from light_league import envs

        fixed: Policy = envs.make_fixed_policy(
            env_name or str(meta["env"]), str(meta["name"]), **dict(env_options or {})
        )
        return fixed
    loader = policy_loader(kind)
    if loader is None:
        raise unknown_name("policy kind", kind, [*known_policy_kinds(), FIXED])
    return loader(dict(weights), dict(meta))
