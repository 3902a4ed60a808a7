"""Policies on disk: the files are :mod:`light_league.data_buffer.policy_files` (re-exported
here); :func:`load_policy` reads them and rebuilds the policy with
:func:`light_league.algorithms.registry.build_policy` (its class picked by the meta's ``kind``).
"""

from __future__ import annotations

import os

from light_league.algorithms.base import Policy
from light_league.data_buffer.policy_files import load_policy_files, load_weights, policy_paths, save_policy
from light_league.errors import CorruptFileError

__all__ = ["load_policy", "load_policy_files", "load_weights", "policy_paths", "save_policy"]


def load_policy(path: str | os.PathLike[str]) -> Policy:
    """Rebuild the saved policy (its class chosen by the meta's ``kind``)."""
    from light_league.algorithms.registry import FIXED, build_policy, known_policy_kinds, policy_loader

    weights, meta = load_policy_files(path)
    kind = meta["kind"]
    if kind == FIXED or policy_loader(str(kind)) is None:  # a fixed opponent is never saved
        raise CorruptFileError(
            f"policy meta {policy_paths(path)[1]} has unknown kind {kind!r} (known: {', '.join(known_policy_kinds())})"
        )
    try:
        return build_policy(weights, meta)
    except (ValueError, KeyError, TypeError) as exc:
        raise CorruptFileError(f"policy {policy_paths(path)[0]} does not match its meta: {exc}") from None
