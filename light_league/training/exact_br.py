"""ExactBRRunner: exact best responses in place of an RL learner (Kuhn and Leduc poker).

The learner of a PSRO run without RL noise: each generation it computes, for both seats, the
exact best response to the task's opponent mixture (aggregated by reach probability, not
averaged per information state) and publishes the pair as one tabular policy. It has the same
component interface as :class:`~light_league.training.learner_runner.LearnerRunner`
(:class:`~light_league.training.component.LearnerComponent`), with ``plays_rollouts = False``:
its ``train_step`` takes the task's opponents and needs no rollouts.
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np

from light_league.algorithms.base import Learner
from light_league.algorithms.registry import build_policy
from light_league.algorithms.tabular import TabularPolicy
from light_league.config_base import Section
from light_league.data_buffer.stores import EpisodeStore, PolicyStore
from light_league.envs.base import EnvSpec
from light_league.errors import ConfigError
from light_league.training.component import LearnerComponent, UpdateResult


class ExactBRRunner:
    """Exact best responses of both seats to the task's opponent mixture (no rollouts)."""

    plays_rollouts: ClassVar[bool] = False

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
        if device != "cpu":
            raise ConfigError(
                f"learner.device={device}: learner.kind=exact_br runs on the CPU only; set learner.device=cpu (or auto)"
            )
        from light_league.algorithms.game_tree import infostate_table

        self.learner_id = learner_id
        self.env_name = env_name
        self._policy_server = policy_server
        table = infostate_table(env_name)
        self._obs = table.obs
        self._mask = table.mask
        mask = np.concatenate(table.mask).astype(np.float32)
        self._initial = TabularPolicy(np.concatenate(table.obs), mask / mask.sum(axis=1, keepdims=True))
        self.policy = self._initial
        self.version = 0
        self._publish()

    def _publish(self) -> None:
        self.version = self._policy_server.publish(
            self.learner_id, "tabular", self.policy.policy_meta(), self.policy.get_weights()
        )

    def train_step(
        self, opponents: dict[str, float] | None = None, *, batches: int | None = None, max_lag: int = 0
    ) -> UpdateResult:
        """Best responses of both seats to the mixture ``opponents`` (id -> probability); it plays
        no rollouts, so ``batches`` and ``max_lag`` do not apply."""
        if not opponents:
            raise ValueError(f"exact best response {self.learner_id!r} needs the task's opponents")
        from light_league.algorithms.game_tree import best_response

        ids = [pid for pid, p in opponents.items() if p > 0]
        entries = self._policy_server.pull({pid: 0 for pid in ids})
        pols = [
            build_policy(entries[pid].weights, entries[pid].policy_meta, env_name=self.env_name)
            for pid in ids
        ]
        weights = np.array([opponents[pid] for pid in ids], dtype=np.float64)
        rows, metrics = [], {}
        for seat in (0, 1):
            br, value = best_response(self.env_name, pols, weights / weights.sum(), seat)
            rows.append(br.action_probs(self._obs[seat], self._mask[seat]))
            metrics[f"br_value_seat{seat}"] = float(value)
        self.policy = TabularPolicy(np.concatenate(self._obs), np.concatenate(rows).astype(np.float32))
        self._publish()
        return UpdateResult(self.version, metrics)

    def get_version(self) -> int:
        return self.version

    def snapshot(self) -> tuple[dict[str, Any], dict[str, Any]] | None:
        return None  # a best response is frozen as it is

    def reset(self, source: str | None = None) -> int:
        if source is not None:
            raise ValueError(
                f"an exact best response restarts from its initial policy only, not from {source!r}; "
                "set the role's reset_to: initial"
            )
        self.policy = self._initial
        self._publish()
        return self.version

    def state_dict(self) -> dict[str, Any]:
        import torch

        return {
            "weights": {k: torch.from_numpy(v) for k, v in self.policy.get_weights().items()},
            "version": self.version,
        }

    def load_state_dict(self, state: dict[str, Any]) -> int:
        weights = {k: v.numpy() for k, v in state["weights"].items()}
        self.policy = TabularPolicy.from_weights(weights)
        self._publish()
        return self.version


def _implements_the_protocol(component: ExactBRRunner) -> LearnerComponent:
    """Never called: mypy checks here that ExactBRRunner is a LearnerComponent."""
    return component
