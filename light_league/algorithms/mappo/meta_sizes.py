"""A MAPPO meta checked against its weights before a network is built from it: a size the
weights cannot hold (``hidden_size: 200000`` beside a 64-wide file) is one line, not an allocation
traceback."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np

#: the largest team a policy without agent-id inputs may declare (its weights do not show it)
MAX_TEAM_SIZE = 4096


def check_declared_sizes(meta: dict[str, Any], arch: dict[str, Any], weights: dict[str, np.ndarray]) -> None:
    """A meta whose sizes do not fit ``weights`` is refused before a network is built from it: no
    size it declares exceeds the largest dimension of its weights (each is one in a network of
    these weights; the team size too when agent ids are inputs, else at most ``MAX_TEAM_SIZE``),
    and it has no more layers than weights. The exact shapes are compared once built."""
    largest = max((max(np.shape(w)) for w in weights.values() if np.ndim(w)), default=0)
    sizes = {k: meta[k] for k in ("obs_dim", "state_dim", "num_actions", "team_size")}
    sizes.update({k: arch[k] for k in ("hidden_size", "recurrent_hidden_size", "layer_N") if k in arch})
    bounds = {"layer_N": len(weights)}
    if not arch.get("add_agent_id", True):
        bounds["team_size"] = max(largest, MAX_TEAM_SIZE)
    for name, size in sizes.items():
        bound = bounds.get(name, largest)
        if not isinstance(size, int) or isinstance(size, bool) or not 0 <= size <= bound:
            raise ValueError(
                f"its meta declares {name}={size!r}, which the weights cannot hold (largest dimension "
                f"{largest}, {len(weights)} tensors); the meta and the weights do not belong together"
            )


def checked_architecture(
    meta: dict[str, Any], keys: Iterable[str], weights: dict[str, np.ndarray] | None
) -> dict[str, Any]:
    """The ``keys`` of ``meta``'s architecture, once the meta names every size and (with
    ``weights``) its sizes fit them: a ValueError naming what does not."""
    missing = [
        k for k in ("obs_dim", "state_dim", "num_actions", "team_size", "architecture") if k not in meta
    ]
    if missing:
        raise ValueError(f"MAPPO policy meta lacks {missing}; write it with MAPPOLearner.policy_meta()")
    arch = {k: meta["architecture"][k] for k in keys if k in meta["architecture"]}
    if weights is not None:
        check_declared_sizes(meta, arch, weights)
    return arch
