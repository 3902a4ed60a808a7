"""Environments: batched and PettingZoo faces, built by name.

``make_batched(name, num_envs, **kwargs)`` and ``make_parallel(name, **kwargs)`` build an env,
``make_spec(name, **kwargs)`` reads its spec (one game built and closed);
``make_fixed_policy(env_name, policy_name)`` builds a fixed opponent (scripted levels, random);
``env_names()``, ``fixed_policy_names(env_name)`` and ``action_names(env_name)`` list what exists; ``fixed_policy_ratings`` and
``exact_game`` give the facts an env declares (its opponents' Elo anchors, its OpenSpiel game),
``fixed_policy_needs`` the options a fixed opponent needs where it exists only with some. Names: ``battalion``,
``kuhn_poker``, ``leduc_poker``, ``rps``, ``biased_rps``, ``disc``, ``recall`` (a game only memory
wins), ``pettingzoo:<module>:<factory>`` and ``openspiel:<game>``.
"""

from light_league.envs.base import BatchedEnv, BatchStep, EnvSpec
from light_league.envs.registry import (
    action_names,
    env_names,
    exact_game,
    exact_games,
    fixed_policy_names,
    fixed_policy_needs,
    fixed_policy_ratings,
    make_batched,
    make_fixed_policy,
    make_parallel,
    make_spec,
    reference_opponent,
)

__all__ = [
    "BatchStep",
    "BatchedEnv",
    "EnvSpec",
    "action_names",
    "env_names",
    "exact_game",
    "exact_games",
    "fixed_policy_names",
    "fixed_policy_needs",
    "fixed_policy_ratings",
    "reference_opponent",
    "make_batched",
    "make_fixed_policy",
    "make_parallel",
    "make_spec",
]
