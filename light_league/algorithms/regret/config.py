"""The regret learner's settings (``learner.regret``; docs/regret.md explains each phase)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from light_league.algorithms.mappo.config import MAPPOConfig
from light_league.config_base import Section


class RegretConfig(Section):
    # ------------------------------------------------------------------ networks
    hidden_size: int = Field(128, ge=1, le=8192)
    """Width of every hidden layer of the three networks (regrets, action values, average
    strategy). The average strategy is a MAPPO actor of this width: a MAPPO learner of the same
    ``hidden_size`` and ``layer_N`` (an exploiter's ``reset_to: main_agent``) can start from it."""

    layer_N: int = Field(1, ge=0, le=16)
    """Hidden layers after the first one (MAPPO's meaning: 1 gives two hidden layers)."""

    use_feature_normalization: bool = True
    """A LayerNorm on the raw input of every network (MAPPO's meaning). Off suits one-hot
    observations, as the poker games' are: a LayerNorm rescales a one-hot vector by how many
    entries are set."""

    estimator: Literal["values", "corrected"] = "corrected"
    """The regret of a decision: ``values``, the action values' alone, ``Q(s, a) - sum_b
    sigma_t(b) Q(s, b)`` (ESCHER: no sampling noise, biased by the values' error), or
    ``corrected``, the same with the episode's sampled outcome correcting the action taken
    (VR-MCCFR, as DREAM: unbiased whatever ``Q``, noisier by about the number of legal actions)."""

    # ------------------------------------------------------------------ optimisation
    lr: float = Field(3e-3, gt=0.0, le=1.0)
    """Adam learning rate of the regret and average-strategy networks."""

    lr_decay_iterations: int | None = Field(None, ge=1, le=10**9)
    """When set, the regret network's learning rate falls as ``lr / sqrt(1 + t / this)`` with the
    iteration ``t``: its estimate of the average regret, which shrinks as the strategies settle,
    then gets more precise instead of staying as noisy as a constant step leaves it. None: constant."""

    q_lr: float = Field(1e-3, gt=0.0, le=1.0)
    """Adam learning rate of the action-value network."""

    q_epochs: int = Field(2, ge=1, le=100)
    """Passes of the action-value regression over each batch's transitions."""

    regret_steps: int = Field(16, ge=1, le=10_000)
    """Steps of the regret network per update, each on ``batch_size`` samples of the regret memory."""

    average_steps: int = Field(0, ge=0, le=10_000)
    """Steps of the average-strategy network per update, each on ``batch_size`` samples of the
    strategy memory. The average strategy is only played once it is frozen, so it may learn at
    the snapshots alone (``snapshot_steps``): 0 here is the default."""

    snapshot_steps: int = Field(200, ge=0, le=1_000_000)
    """Steps of the average-strategy network on the strategy memory when a snapshot is taken,
    before it is frozen (Deep CFR trains its average network once, at the end)."""

    batch_size: int = Field(1024, ge=1, le=1_000_000)
    """Samples per step of every network (the action values split each batch into steps of this size)."""

    memory_size: int = Field(400_000, ge=1, le=100_000_000)
    """Capacity of each memory (regrets, strategies): a reservoir, a uniform sample of every
    sample the learner has seen. Checkpoints hold the filled part."""

    weighting: Literal["linear", "uniform"] = "linear"
    """How the memories weigh the iterations: ``linear`` (iteration ``t`` weighs ``t``: linear CFR,
    as Deep CFR, DREAM and ESCHER do) or ``uniform`` (vanilla CFR)."""

    # ------------------------------------------------------------------ runtime
    torch_threads: int = Field(1, ge=0, le=256)
    """Torch intra-op threads, set when the learner is built (0: leave the process setting)."""

    def architecture(self) -> dict[str, Any]:
        """The network of the average strategy, what a snapshot holds: a MAPPO network of this
        ``hidden_size``, ``layer_N`` and ``use_feature_normalization`` with MAPPO's other network
        defaults (a MAPPO role that restarts from the snapshots needs the same; ``build`` checks it)."""
        return MAPPOConfig(
            hidden_size=self.hidden_size,
            layer_N=self.layer_N,
            use_feature_normalization=self.use_feature_normalization,
        ).architecture()
