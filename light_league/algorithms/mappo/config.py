"""MAPPO hyperparameters.

Defaults follow the reference implementation of Yu et al. (``marlbenchmark/on-policy``,
``onpolicy/config.py``) except where noted (``ppo_epoch``). Every flag is an explicit boolean:
``True`` turns the feature on (the reference's ``store_false`` flags are inverted; do not copy
its command lines). ``docs/mappo.md`` compares every field with the reference.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, model_validator

from light_league.config_base import Section

#: version of the architecture description in ``policy_meta`` (bump on incompatible changes)
ARCH_VERSION = 1

#: options that were removed, with the value that meant "off" (what older run directories' full
#: configs hold; :meth:`MAPPOConfig._removed_options`)
REMOVED_OPTIONS: dict[str, Any] = {
    "batch_growth": 1,
    "entropy_target": None,
    "entropy_adapt_rate": 0.1,
    "state_weight_power": 0.0,
    "policy_gradient": "sampled",
}


class RecurrentConfig(Section):
    """rMAPPO: a GRU in actor and critic (docs/mappo.md, "Recurrent policies")."""

    cell: Literal["none", "gru"] = "none"
    """``gru``: actor and critic each get a GRU layer between their MLP and their head, with a
    LayerNorm after it (the reference's ``algorithm_name: rmappo``; its default, ``mappo``, is
    feed-forward, as ours).
    Hidden states are carried per game and per agent through the rollouts, reset where an episode
    starts and stored with the trajectories. ``none``: feed-forward networks."""

    hidden_size: int = Field(64, ge=1, le=4096)
    """Width of the GRU's hidden state, in actor and critic alike. Reference: the MLP width
    (``hidden_size`` 64), one GRU layer (``recurrent_N`` 1)."""

    chunk_length: int = Field(10, ge=1, le=100_000)
    """Truncated backpropagation through time: each episode of an agent's decisions is cut into
    chunks of at most this many decisions, each trained from the hidden state the rollout
    stored at its start (gradients do not cross a chunk boundary). Reference:
    ``data_chunk_length`` 10. What a task must remember should lie within this many decisions
    of where it is used: a gradient does not reach back into an earlier chunk."""

    @property
    def enabled(self) -> bool:
        return self.cell != "none"


class MAPPOConfig(Section):
    # ------------------------------------------------------------------ optimisation
    lr: float = Field(5e-4, gt=0.0, le=1.0)
    """Actor learning rate (Adam). Reference: 5e-4."""

    critic_lr: float = Field(5e-4, gt=0.0, le=1.0)
    """Critic learning rate (Adam). Reference: 5e-4."""

    opti_eps: float = Field(1e-5, gt=0.0, le=1e-2)
    """Adam epsilon for both optimisers. Reference: 1e-5."""

    weight_decay: float = Field(0.0, ge=0.0, le=1.0)
    """Adam weight decay for both optimisers. Reference: 0."""

    lr_schedule: Literal["constant", "linear"] = "constant"
    """``constant``, or ``linear``: both learning rates fall linearly from their initial value to
    ``lr_final_fraction`` of it over ``lr_decay_updates`` calls of ``update`` and stay there
    (the reference's ``use_linear_lr_decay``, which decays to 0 over the run's iterations)."""

    lr_decay_updates: int = Field(1000, ge=1, le=10**9)
    """Horizon of the linear schedule, in ``update`` calls."""

    lr_final_fraction: float = Field(0.0, ge=0.0, le=1.0)
    """Learning rate at the end of the linear schedule, as a fraction of the initial one."""

    ppo_epoch: int = Field(10, ge=1, le=100)
    """Passes over each batch. Reference default 15; ours is 10, the paper's advice for difficult
    tasks (its suggestion 3: at most 10 epochs on hard tasks, 15 on easy ones). A league learner's
    opponents change under it, which is the hard case, and 10 epochs cost a third less CPU."""

    num_mini_batch: int = Field(1, ge=1, le=1024)
    """Mini-batches per epoch (of valid samples, shuffled). Reference: 1; the paper advises
    against splitting the batch."""

    clip_param: float = Field(0.2, gt=0.0, le=1.0)
    """PPO ratio clip ε, also the value-clipping range (in normalised value units). Reference: 0.2."""

    entropy_coef: float = Field(0.01, ge=0.0, le=10.0)
    """Weight of the entropy bonus in the actor loss. Reference: 0.01."""

    entropy_final_fraction: float = Field(1.0, ge=0.0, le=1.0)
    """With ``lr_schedule: linear``, the entropy coefficient falls along the same schedule to this
    fraction of ``entropy_coef`` (1: it stays fixed). In poker-like games a large early bonus
    keeps the learners exploring and mixing; a small late one lets the policies become as sharp
    as an equilibrium is (most of a poker equilibrium's actions are pure)."""

    magnet_coef: float = Field(0.0, ge=0.0, le=100.0)
    """Weight of ``KL(policy || magnet)`` in the actor loss (magnetic mirror descent; Sokota et
    al., ICLR 2023). The magnet is a slowly moving copy of the actor: after each update its
    parameters move ``magnet_rate`` of the way to the actor's. In two-player zero-sum games this
    pulls the last iterate toward an equilibrium instead of cycling around it. 0: off."""

    magnet_rate: float = Field(0.05, gt=0.0, le=1.0)
    """Fraction of the way the magnet moves toward the actor after each update (1: the magnet is
    the previous policy)."""

    magnet_schedule: Literal["constant", "lr"] = "constant"
    """constant: the magnet moves ``magnet_rate`` after every update; lr: ``magnet_rate`` times the
    learning-rate schedule's current fraction, so the magnet slows as the actor's steps shrink
    (MMD ties the magnet's step to the step size). With ``constant`` and a decaying learning
    rate the magnet catches up with a slowing actor, the pull vanishes and self-play drifts."""

    snapshot_average_rate: float = Field(0.0, ge=0.0, le=1.0)
    """Snapshots freeze an average of the learner's recent weights instead of its last ones
    (Polyak averaging): after the lineage's ``n``-th update every parameter of the average moves
    ``max(rate, 1/n)`` of the way to the learner's, the plain mean of its weights for the first
    ``1/rate`` updates, then an exponential average (0.03: about the last 64). Rollouts and
    training use the learner's own weights; only the members it adds to the population are
    averaged, which takes the update-to-update noise out of a policy that has settled. The
    average restarts with the lineage (a reset, a restart from another learner). 0: off, a
    snapshot is the last weights."""

    value_loss_coef: float = Field(1.0, ge=0.0, le=100.0)
    """Weight of the critic loss. Reference: 1 (its help text says 0.5; the code uses 1)."""

    use_max_grad_norm: bool = True
    """Clip the global gradient norm of actor and critic separately. Reference: on."""

    max_grad_norm: float = Field(10.0, gt=0.0, le=1e6)
    """Gradient-norm limit. Reference: 10 (its help text says 0.5; the code uses 10)."""

    # ------------------------------------------------------------------ returns and advantages
    gamma: float = Field(0.99, ge=0.0, le=1.0)
    """Discount factor. Reference: 0.99."""

    gae_lambda: float = Field(0.95, ge=0.0, le=1.0)
    """GAE λ. Reference: 0.95."""

    use_advantage_norm: bool = True
    """Normalise advantages over the batch's valid samples, ``(A - mean) / (std + 1e-5)``.
    The reference always does this."""

    # ------------------------------------------------------------------ value loss
    use_huber_loss: bool = True
    """Huber value loss (else squared error / 2). Reference: on."""

    huber_delta: float = Field(10.0, gt=0.0, le=1e6)
    """Huber threshold, in normalised value units. Reference: 10."""

    use_clipped_value_loss: bool = True
    """Take the max of the plain and the clipped value loss. Reference: on."""

    use_valuenorm: bool = True
    """Critic predicts normalised returns with running statistics (paper's suggestion 1). Reference: on."""

    value_norm_beta: float = Field(0.99999, gt=0.0, lt=1.0)
    """Decay of the ValueNorm running moments, applied once per mini-batch. Reference: 0.99999."""

    value_norm_epsilon: float = Field(1e-5, gt=0.0, le=1.0)
    """Floor of the ValueNorm debiasing term. Reference: 1e-5."""

    # ------------------------------------------------------------------ network
    hidden_size: int = Field(64, ge=1, le=8192)
    """Width of every hidden layer of actor and critic. Reference: 64."""

    layer_N: int = Field(1, ge=0, le=16)
    """Hidden layers after the first one (the reference's meaning: ``layer_N=1`` gives two hidden
    layers). Reference: 1."""

    use_relu: bool = True
    """ReLU activations (else tanh). Reference: on."""

    use_feature_normalization: bool = True
    """LayerNorm on the raw input of actor and critic. Reference: on. (A LayerNorm after each
    hidden layer is always there, as in the reference.)"""

    use_orthogonal: bool = True
    """Orthogonal initialisation (else Xavier uniform), biases zero. Reference: on."""

    gain: float = Field(0.01, gt=0.0, le=10.0)
    """Initialisation gain of the policy output layer (near-uniform initial policy). Reference: 0.01."""

    add_agent_id: bool = True
    """Append the one-hot position of the agent in its team to actor and critic inputs, so a
    shared network can still specialise per position."""

    recurrent: RecurrentConfig = Field(default_factory=RecurrentConfig)
    """Recurrent actor and critic (rMAPPO); off by default (``cell: none``)."""

    # ------------------------------------------------------------------ runtime
    torch_threads: int = Field(1, ge=0, le=256)
    """Torch intra-op threads, set (process-wide) when the learner is built; 0 leaves the process
    setting alone. Default 1: these networks are small; a second thread gains a little on an idle
    machine and loses several times over on a busy one (``bench/learner_throughput.py``)."""

    @model_validator(mode="before")
    @classmethod
    def _removed_options(cls, data: Any) -> Any:
        """Options that were removed (no shipped config used them; their measurements are in
        notes/tuning.md) are dropped where they hold the value that meant "off", so the configs
        of older run directories still load; any other value is refused in one line."""
        if not isinstance(data, dict) or not REMOVED_OPTIONS.keys() & data.keys():
            return data
        data = dict(data)
        for key, off in REMOVED_OPTIONS.items():
            if key in data and data.pop(key) != off:
                raise ValueError(
                    f"{key} was removed (no shipped config used it; CHANGELOG.md says where its measurements are); "
                    f"delete {key} from the config"
                )
        return data

    @model_validator(mode="after")
    def _recurrent_combinations(self) -> MAPPOConfig:
        if self.recurrent.enabled and self.magnet_coef > 0.0:
            raise ValueError(
                f"magnet_coef={self.magnet_coef} does not work with recurrent.cell={self.recurrent.cell} "
                "(the magnet is a feed-forward copy of the actor); set magnet_coef=0 or recurrent.cell=none"
            )
        return self

    def architecture(self) -> dict[str, Any]:
        """The fields that shape the network (stored in ``policy_meta``; the recurrent ones only
        when ``recurrent.cell`` is not ``none``, so a feed-forward policy's meta is as before)."""
        recurrent = (
            {"recurrent_cell": self.recurrent.cell, "recurrent_hidden_size": self.recurrent.hidden_size}
            if self.recurrent.enabled
            else {}
        )
        return {
            "hidden_size": self.hidden_size,
            "layer_N": self.layer_N,
            "use_relu": self.use_relu,
            "use_feature_normalization": self.use_feature_normalization,
            "add_agent_id": self.add_agent_id,
            "use_valuenorm": self.use_valuenorm,
            "value_norm_beta": self.value_norm_beta,
            "value_norm_epsilon": self.value_norm_epsilon,
            **recurrent,
        }
