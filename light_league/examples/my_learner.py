"""A learner plugin: MAPPO whose entropy bonus decays geometrically with every update.

Name it in a config as ``learner.kind: light_league.examples.my_learner:AnnealedEntropyLearner`` with its
options under ``learner.options`` (validated by :class:`AnnealedEntropyConfig`).
"""

from __future__ import annotations

from typing import ClassVar

from pydantic import Field

from light_league.algorithms.mappo.config import MAPPOConfig
from light_league.algorithms.mappo.learner import MAPPOLearner
from light_league.config_base import Section
from light_league.data_buffer.episode import SampleBatch
from light_league.envs.base import EnvSpec


class AnnealedEntropyConfig(MAPPOConfig):
    """MAPPO's options plus the entropy schedule."""

    entropy_decay: float = Field(0.99, gt=0.0, le=1.0)
    """Factor applied to ``entropy_coef`` after every update."""
    min_entropy_coef: float = Field(0.0, ge=0.0, le=10.0)
    """The bonus never falls below this."""


class AnnealedEntropyLearner(MAPPOLearner):
    Config: ClassVar[type[Section]] = AnnealedEntropyConfig
    config: AnnealedEntropyConfig

    def __init__(
        self, spec: EnvSpec, config: AnnealedEntropyConfig, *, seed: int, device: str = "cpu"
    ) -> None:
        # taking ``device`` (and passing it on) is what lets learner.device move it to a GPU
        super().__init__(spec, config.model_copy(), seed=seed, device=device)

    def update(self, batch: SampleBatch) -> dict[str, float]:
        metrics = super().update(batch)
        c = self.config
        c.entropy_coef = max(c.min_entropy_coef, c.entropy_coef * c.entropy_decay)
        metrics["entropy_coef"] = c.entropy_coef
        return metrics
