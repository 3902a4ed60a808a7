"""LearnerRunner: one learner plus its connections to the servers (a component the executor places).

``train_step`` pulls the learner's fresh trajectories from the EpisodeServer, updates, and
publishes the new weights (a new version) to the PolicyServer.

The learner updates on ``device`` (``learner.device`` as the driver resolved it); what leaves this
component is on the CPU: the published weights (numpy, once per version: rollout workers act on
the CPU with them) and ``state_dict`` (checkpoints, and a Ray message to the driver).
"""

from __future__ import annotations

import copy
import time
from typing import Any, ClassVar

import numpy as np

from light_league.algorithms.base import Learner
from light_league.algorithms.registry import make_learner
from light_league.config_base import Section
from light_league.data_buffer.policy_server import PolicyEntry
from light_league.data_buffer.stores import EpisodeStore, PolicyStore
from light_league.envs.base import EnvSpec
from light_league.errors import ConfigError, NonFiniteError
from light_league.training.component import LearnerComponent, UpdateResult
from light_league.utils.device import check_device_here, to_cpu


class LearnerRunner:
    """An RL learner (MAPPO or a plugin): trains on the trajectories of its published policy."""

    plays_rollouts: ClassVar[bool] = True

    def __init__(
        self,
        learner_id: str,
        env_name: str,
        spec: EnvSpec,
        learner: type[Learner] | None,
        config: Section | None,
        *,
        seed: int,
        policy_server: PolicyStore,
        episode_server: EpisodeStore,
        torch_threads: int = 1,
        device: str = "cpu",
    ) -> None:
        """``learner``: the RL learner class the learner table resolved (with its ``config``);
        ``spec``: the env's (the driver read it once)."""
        if learner is None or config is None:
            raise ValueError(
                f"learner {learner_id!r}: a LearnerRunner trains an RL learner; pass its class and config"
            )
        if torch_threads:
            import torch

            torch.set_num_threads(torch_threads)
        self.learner_id = learner_id
        check_device_here(device)
        self.device = device
        self.env_name = env_name
        self.learner = make_learner(learner, spec, config, seed=seed, device=device)
        self._initial = to_cpu(copy.deepcopy(self.learner.state_dict()))
        self._policy_server = policy_server
        self._episode_server = episode_server
        self.version = 0
        self._publish()

    def _publish(self) -> None:
        """Publish the learner's weights as a new version, once they are checked to be finite."""
        meta = self.learner.policy_meta()
        weights = self.learner.get_weights()
        self._check_finite(weights, f"the update to version {self.version + 1} gave")
        self.version = self._policy_server.publish(self.learner_id, str(meta["kind"]), meta, weights)

    def _check_finite(self, weights: dict[str, np.ndarray], what: str) -> None:
        """A NonFiniteError naming the first entry of ``weights`` that is not finite."""
        for name, array in weights.items():
            if not np.isfinite(array).all():
                raise self._non_finite(f"{what} non-finite weights ({name})")

    def _non_finite(self, what: str) -> NonFiniteError:
        return NonFiniteError(
            f"learner {self.learner_id} (env {self.env_name!r}): {what}; nothing of it was published "
            "or checkpointed"
        )

    def train_step(
        self, opponents: dict[str, float] | None = None, *, batches: int | None = None, max_lag: int = 0
    ) -> UpdateResult | None:
        """One update on the trajectories of the current version (with ``max_lag``, of versions
        at most that much older; ``batches``: the oldest that many queued); None when there are
        none (``opponents`` is not needed: the trajectories say whom it played).

        The PPO ratio of a lagged batch is taken against the log-probabilities of the policy that
        played it (``SampleBatch.logp``), so a lag is corrected for, not ignored; ``policy_lag``
        reports it (versions between the batch's oldest policy and the one updated)."""
        batch = self._episode_server.pull(self.learner_id, self.version - max_lag, batches)
        if batch is None:
            return None
        start = time.perf_counter()
        lag = self.version - batch.policy_version
        try:
            metrics = dict(self.learner.update(batch))
        except NonFiniteError as exc:
            raise self._non_finite(str(exc)) from None
        metrics["policy_lag"] = float(lag)
        self._publish()
        metrics["update_s"] = time.perf_counter() - start
        metrics["samples"] = float(batch.num_samples)
        return UpdateResult(self.version, metrics)

    def get_version(self) -> int:
        return self.version

    def snapshot(self) -> tuple[dict[str, Any], dict[str, Any]] | None:
        snapshot = self.learner.snapshot()
        if snapshot is None:
            return None
        self._check_finite(snapshot.weights, "the snapshot has")
        return snapshot.meta, snapshot.weights

    def reset(self, source: str | None = None) -> int:
        """Back to the initial learner state (exploiter resets); with ``source``, then take that
        policy's current weights from the PolicyServer (fresh optimisers all the same). Returns
        the new version."""
        self.learner.load_state_dict(copy.deepcopy(self._initial))
        if source is not None:
            self.learner.set_weights(self._start_from(source).weights)
        self._episode_server.clear(self.learner_id)
        self._publish()
        return self.version

    def _start_from(self, source: str) -> PolicyEntry:
        """The policy of learner ``source`` a reset starts from: its published one, or, where that
        is of another kind than this learner's (a regret main agent plays its current strategy and
        freezes its average), its newest snapshot of this learner's kind."""
        kind = str(self.learner.policy_meta()["kind"])
        entry = self._policy_server.get(source)
        if entry.kind != kind:
            frozen = self._policy_server.newest_frozen(source)
            if frozen is None or frozen.kind != kind:
                raise ConfigError(
                    f"learner {self.learner_id!r} ({kind}) cannot restart from {source!r}: it publishes "
                    f"{entry.kind} policies and has no {kind} snapshot yet; set the role's reset_to: initial"
                )
            entry = frozen
        return entry

    def state_dict(self) -> dict[str, Any]:
        return {
            "learner": to_cpu(self.learner.state_dict()),
            "initial": self._initial,
            "version": self.version,
        }

    def load_state_dict(self, state: dict[str, Any]) -> int:
        self.learner.load_state_dict(state["learner"])
        self._initial = state["initial"]
        self._publish()
        return self.version


def _implements_the_protocol(component: LearnerRunner) -> LearnerComponent:
    """Never called: mypy checks here that LearnerRunner is a LearnerComponent."""
    return component
