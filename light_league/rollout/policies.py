"""Turn a PolicyServer entry into a policy object a worker can run."""

from __future__ import annotations

from typing import Any

from light_league.algorithms.base import Policy


def policy_from_entry(entry: Any, env_name: str) -> Policy:
    """Build the policy of a :class:`~light_league.data_buffer.policy_server.PolicyEntry`.

    ``fixed`` entries are the environment's own opponents (scripted levels, random); every other
    kind goes through the algorithm registry.
    """
    if entry.kind == "fixed":
        import envs

        policy: Policy = envs.make_fixed_policy(env_name, entry.meta["name"])
        return policy
    from light_league.algorithms.registry import build_policy

    return build_policy(entry.weights, {**entry.meta, "kind": entry.kind})
