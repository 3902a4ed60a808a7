"""Policy and learner contracts.

A **policy** maps a batch of observations to action log-probabilities (numpy in, numpy out).
The rollout loop samples from them; a policy never samples itself, so one seeded numpy
generator in the worker makes a run deterministic.

Anything with a matching ``log_probs`` method is a policy (``typing.Protocol``): the scripted
opponents in ``light_league/envs/`` satisfy it without importing the framework.

A policy with memory is a :class:`RecurrentPolicy`: a positive ``hidden_dim`` and
``step_log_probs``, which takes each agent's hidden state and returns the next one. Whoever runs
it (the rollout loop, the exact game-tree evaluation) keeps one hidden state per agent, starts
each episode from zeros and advances it on each of the agent's own decisions.

**The bank hook.** A policy class whose instances can be evaluated many at once (their
parameters stacked, one pass for the rows of all of them) declares ``bank_signature()``
(hashable; policies with equal signatures can share a bank) and a static ``stack(policies)``
that returns a :class:`PolicyBank`. Rollout workers bank the frozen opponents whose class
declares it (:func:`bank_signature`), whatever learner made them; MAPPO's policy does
(:class:`~light_league.algorithms.mappo.bank.MAPPOBank`).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, Protocol, cast, runtime_checkable

import numpy as np

from light_league.config_base import Section
from light_league.data_buffer.episode import SampleBatch
from light_league.envs.base import EnvSpec


@runtime_checkable
class Policy(Protocol):
    def log_probs(self, obs: np.ndarray, mask: np.ndarray, agent_idx: np.ndarray) -> np.ndarray:
        """``obs`` (N, obs_dim), ``mask`` (N, A) bool, ``agent_idx`` (N,) position in team.

        Returns (N, A) float32 log-probabilities, ``-inf`` where ``mask`` is False.
        """
        ...


@runtime_checkable
class TrainablePolicy(Policy, Protocol):
    def evaluate(
        self, obs: np.ndarray, state: np.ndarray, mask: np.ndarray, agent_idx: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray]:
        """One forward pass of actor and critic: ((N, A) log-probs, (N,) values in return units)."""
        ...

    def values(self, state: np.ndarray, agent_idx: np.ndarray) -> np.ndarray:
        """(N,) critic values in return units."""
        ...


@runtime_checkable
class RecurrentPolicy(Protocol):
    @property
    def hidden_dim(self) -> int:
        """Width of an agent's hidden state (a float32 vector; zeros start an episode)."""
        ...

    def step_log_probs(
        self, obs: np.ndarray, mask: np.ndarray, agent_idx: np.ndarray, hidden: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray]:
        """One decision of ``N`` agents: ``hidden`` (N, hidden_dim) their states before it.

        Returns (N, A) float32 log-probabilities (``-inf`` where ``mask`` is False) and the
        (N, hidden_dim) states after it."""
        ...


@runtime_checkable
class RecurrentTrainablePolicy(RecurrentPolicy, Protocol):
    def step_evaluate(
        self, obs: np.ndarray, state: np.ndarray, mask: np.ndarray, agent_idx: np.ndarray, hidden: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Actor and critic on one decision: (log-probs, values in return units, next hidden)."""
        ...

    def step_values(self, state: np.ndarray, agent_idx: np.ndarray, hidden: np.ndarray) -> np.ndarray:
        """(N,) critic values in return units of the states after ``hidden``."""
        ...


def hidden_dim(policy: object) -> int:
    """Width of the hidden state ``policy`` carries per agent; 0 for a policy without memory."""
    return int(getattr(policy, "hidden_dim", 0) or 0)


#: logit given to illegal actions before a softmax (finite, so gradients stay clean; reference:
#: ``onpolicy/algorithms/utils/distributions.py``)
ILLEGAL_LOGIT = -1e10


class PolicyBank(Protocol):
    """Policies of one signature evaluated together: row ``n`` under member ``slots[n]``."""

    @property
    def hidden_dim(self) -> int:
        """Width of a member's hidden state (0: feed-forward members)."""
        ...

    def log_probs(
        self, slots: np.ndarray, obs: np.ndarray, mask: np.ndarray, agent_idx: np.ndarray
    ) -> np.ndarray:
        """(N, A) log-probabilities of row ``n`` under member ``slots[n]`` (feed-forward members)."""
        ...

    def step_log_probs(
        self, slots: np.ndarray, obs: np.ndarray, mask: np.ndarray, agent_idx: np.ndarray, hidden: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray]:
        """Recurrent members: the log-probabilities from each row's hidden state, and the next states."""
        ...


def bank_signature(policy: object) -> Hashable | None:
    """``policy``'s bank signature when its class declares the bank hook, else None."""
    signature = getattr(policy, "bank_signature", None)
    return None if signature is None else cast(Hashable, signature())


def stack(policies: Sequence[Policy]) -> PolicyBank:
    """The bank of ``policies`` (one class, equal signatures): their class's ``stack``."""
    return cast(PolicyBank, type(policies[0]).stack(policies))  # type: ignore[attr-defined]


def check_batch(batch: SampleBatch, spec: EnvSpec) -> None:
    """A one-line ValueError when ``batch`` was not collected on ``spec``'s env, or is empty."""
    t, n = batch.shape
    expected = {
        "obs": (t, n, spec.obs_dim),
        "state": (t, n, spec.state_dim),
        "action_mask": (t, n, spec.num_actions),
        "agent_idx": (n,),
        "bootstrap_values": (n,),
    }
    for name, shape in expected.items():
        got = tuple(getattr(batch, name).shape)
        if got != shape:
            raise ValueError(
                f"SampleBatch.{name} has shape {got}, the learner for env {spec.name!r} needs {shape}; "
                "was the batch collected on another environment?"
            )
    if batch.num_samples == 0:
        raise ValueError("SampleBatch has no valid samples; collect at least one decision before update()")


@dataclass(frozen=True)
class Snapshot:
    """A policy a learner hands to the population: its ``policy_meta`` (``kind`` included) and weights."""

    meta: dict[str, Any]
    weights: dict[str, np.ndarray]


class Learner(ABC):
    """Trains one policy from :class:`SampleBatch` es. Plain class; the executor decides where it runs.

    A learner is built as ``cls(spec, config, *, seed)`` where ``config`` is an instance of its
    ``Config`` section. A learner whose constructor also takes a ``device`` keyword trains on
    ``learner.device`` (a torch device name: ``cpu``, ``cuda``, ``cuda:N``); it must still return
    CPU values from ``get_weights`` (numpy) and ``state_dict``. Any other learner runs on the CPU. Plugin learners (``learner.kind: package.module:ClassName`` or the
    entry-point group ``light_league.learners``) take their options from ``learner.options``.
    """

    Config: ClassVar[type[Section]] = Section

    @property
    @abstractmethod
    def policy(self) -> TrainablePolicy:
        """The current policy (used for on-policy rollouts in-process)."""

    @abstractmethod
    def update(self, batch: SampleBatch) -> dict[str, float]:
        """One training iteration on ``batch``; returns scalar metrics (``policy_loss`` ...)."""

    @abstractmethod
    def get_weights(self) -> dict[str, np.ndarray]:
        """Policy parameters as numpy arrays (what the PolicyServer stores and workers load)."""

    @abstractmethod
    def set_weights(self, weights: dict[str, np.ndarray]) -> None: ...

    def snapshot(self) -> Snapshot | None:
        """The policy a snapshot of this learner freezes into the population, when it is not the
        last published one: MAPPO's snapshot average (the same network, averaged weights), or a
        policy of another kind (the regret learner's average-strategy network). None: the last
        published policy. Optional: the default is None."""
        return None

    @abstractmethod
    def policy_meta(self) -> dict[str, Any]:
        """JSON-able description needed to rebuild the policy from weights (kind, architecture, spaces)."""

    @abstractmethod
    def state_dict(self) -> dict[str, Any]:
        """Everything needed to resume training (weights, optimiser, normaliser, counters): tensors,
        numbers, strings, lists and dicts only, so it loads with ``torch.load(weights_only=True)``."""

    @abstractmethod
    def load_state_dict(self, state: dict[str, Any]) -> None: ...
