"""What components see of the two servers: the policy store and the episode store.

A component that talks to a server gets a client (``executor.client(handle)``), whose methods
are ordinary synchronous calls whatever the backend. These protocols are the methods components
use, so a component's constructor says what it needs (and mypy checks the calls) instead of
taking ``Any``. :class:`~light_league.data_buffer.policy_server.PolicyServer` and
:class:`~light_league.data_buffer.episode_server.EpisodeServer` implement them.
"""

from __future__ import annotations

from typing import Any, Protocol

import numpy as np

from light_league.data_buffer.episode import SampleBatch
from light_league.data_buffer.episode_server import EpisodeServer
from light_league.data_buffer.policy_server import PolicyEntry, PolicyServer


class PolicyStore(Protocol):
    """Policies by id: live learners' versions and frozen members (the PolicyServer)."""

    def publish(self, policy_id: str, kind: str, meta: dict[str, Any], weights: dict[str, np.ndarray]) -> int:
        """Store a new version of a live policy; returns its version number."""
        ...

    def pull(self, have: dict[str, int]) -> dict[str, PolicyEntry]:
        """The entries of ``have``'s ids newer than the versions given (0: any)."""
        ...

    def get(self, policy_id: str) -> PolicyEntry:
        """One entry, weights included."""
        ...

    def newest_frozen(self, source_id: str) -> PolicyEntry | None:
        """The newest snapshot frozen from learner ``source_id`` (None: none yet)."""
        ...


class EpisodeStore(Protocol):
    """Trajectories by learner, tagged with the policy version that played them (the EpisodeServer)."""

    def push(self, learner_id: str, batch: SampleBatch) -> None: ...

    def pull(self, learner_id: str, min_version: int, limit: int | None = None) -> SampleBatch | None:
        """The learner's trajectories of version ``min_version`` or newer, the oldest ``limit``
        batches of them (None: all); None when there are none."""
        ...

    def clear(self, learner_id: str | None = None) -> None: ...


def _servers_implement_the_stores(p: PolicyServer, e: EpisodeServer) -> tuple[PolicyStore, EpisodeStore]:
    """Never called: mypy checks here that the servers implement the protocols."""
    return p, e
