"""The learner-component contract: what the TrainingManager, the Runner and the Checkpointer call.

Two kinds implement it: :class:`~light_league.training.learner_runner.LearnerRunner` (an RL
learner that trains on the trajectories the rollout workers play with its published policy) and
:class:`~light_league.training.exact_br.ExactBRRunner` (an exact best response, computed from the
opponents alone). ``plays_rollouts`` says which: the TrainingManager runs rollout rounds and a
``train_step`` after each for the first, and one ``train_step`` per generation for the second.
Both are built with the same arguments, ``(learner_id, env_name, spec, learner, config, *, seed,
policy_server, episode_server, device)``, from the learner table's row of ``learner.kind``
(``light_league/learner_kinds.py``; see ``build._learners``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar, Protocol


@dataclass
class UpdateResult:
    """What one ``train_step`` produced: the version it published and its metrics."""

    version: int
    metrics: dict[str, float] = field(default_factory=dict)


class LearnerComponent(Protocol):
    """One learner and its connections to the servers (a component the executor places)."""

    #: True: trains on rollouts of its published policy; False: computes its policy from the
    #: task's opponents in one step (no rollouts)
    plays_rollouts: ClassVar[bool]
    learner_id: str

    def train_step(
        self, opponents: dict[str, float], *, batches: int | None = None, max_lag: int = 0
    ) -> UpdateResult | None:
        """One update (None when there was nothing to learn from), publishing a new version.

        A learner that plays rollouts trains on the oldest ``batches`` trajectory batches queued
        for it (None: all of them) that its current version or one at most ``max_lag`` versions
        older played (``execution.overlap``: 1)."""
        ...

    def get_version(self) -> int: ...

    def snapshot(self) -> tuple[dict[str, Any], dict[str, Any]] | None:
        """``(policy meta, weights)`` a snapshot freezes in place of the last published policy;
        None: the last published one (see ``Learner.snapshot``)."""
        ...

    def reset(self, source: str | None = None) -> int:
        """Back to the initial policy (with ``source``: to that learner's current weights, or its
        newest snapshot where it publishes a policy of another kind); the new version."""
        ...

    def state_dict(self) -> dict[str, Any]: ...

    def load_state_dict(self, state: dict[str, Any]) -> int: ...
