"""The MAPPO learner: GAE on a :class:`SampleBatch`, then PPO epochs over shuffled mini-batches.

One ``update(batch)``:

1. **Prepare** (:mod:`.batch`) — GAE in return units, advantage normalisation over valid
   entries, old values in the critic's units; the valid entries of every stream flattened into
   one sample set.
2. **Optimise** — ``ppo_epoch`` passes; each pass shuffles the valid *samples* (not streams:
   the policy is feed-forward, as in the reference's ``feed_forward_generator``) and splits them
   into ``num_mini_batch`` mini-batches. Each mini-batch takes one actor step (clipped surrogate
   minus the entropy bonus) and one critic step (the reference's value loss, which also updates
   the ValueNorm), each with its own Adam optimiser and gradient-norm clipping.
3. **Report** — means over mini-batches of the losses and diagnostics, plus the explained
   variance of the batch's values and the advantages' standard deviation before normalisation.

A **recurrent** policy (``recurrent.cell: gru``) trains on chunks instead of samples
(:mod:`.chunks`): the valid entries are cut into chunks of at most ``recurrent.chunk_length``
decisions of one episode each, each starting from the hidden state the rollout stored there; a
pass shuffles chunks (not samples) into ``num_mini_batch`` mini-batches, runs actor and critic
over each chunk and takes the same losses over the chunks' valid entries.

Deterministic under ``seed``: the seed fixes the initial weights and the shuffling generator.

``device`` (``learner.device``): the policy, the magnet and every batch tensor live there; the
shuffling generator stays on the CPU (the same permutations on every device), and
``get_weights`` / ``state_dict`` return CPU values, so what is published or saved never holds a
device tensor (see :mod:`light_league.utils.device`).
"""

from __future__ import annotations

import math
from typing import Any, ClassVar

import numpy as np
import torch

from light_league.algorithms.base import Learner, Snapshot, check_batch
from light_league.algorithms.mappo.batch import minibatches, num_samples, prepare
from light_league.algorithms.mappo.config import ARCH_VERSION, MAPPOConfig
from light_league.algorithms.mappo.lineage import Magnet, WeightAverage
from light_league.algorithms.mappo.loss import (
    categorical_entropy,
    mappo_value_loss,
    policy_loss,
    ppo_diagnostics,
)
from light_league.algorithms.mappo.policy import ILLEGAL_LOGIT, MAPPOPolicy
from light_league.config_base import Section
from light_league.data_buffer.episode import SampleBatch
from light_league.envs.base import EnvSpec
from light_league.errors import NonFiniteError
from light_league.utils.device import check_device_here, to_cpu

#: version of the ``state_dict`` layout
STATE_VERSION = 1

_MB_KEYS = (
    "policy_loss",
    "value_loss",
    "entropy",
    "approx_kl",
    "clip_frac",
    "actor_grad_norm",
    "critic_grad_norm",
    "grad_norm",
    "magnet_kl",
)


def _check_finite(name: str, loss: float, grad_norm: float, update: int) -> None:
    """Stop before an optimiser step that would write NaN or infinite weights."""
    if not (math.isfinite(loss) and math.isfinite(grad_norm)):
        raise NonFiniteError(
            f"MAPPO update {update + 1}: the {name} is {loss} (gradient norm {grad_norm}); no step was "
            "taken. The trajectories hold numbers too large or not finite: check the env's rewards, or "
            "lower learner.mappo.lr"
        )


class MAPPOLearner(Learner):
    """MAPPO for one team-shared policy (see the module docstring for one update's phases)."""

    kind = "mappo"
    Config: ClassVar[type[Section]] = MAPPOConfig

    def __init__(self, spec: EnvSpec, config: MAPPOConfig, *, seed: int, device: str = "cpu") -> None:
        if config.torch_threads:
            torch.set_num_threads(config.torch_threads)
        self.spec = spec
        self.config = config
        self.seed = seed
        self._policy = MAPPOPolicy(
            obs_dim=spec.obs_dim,
            state_dim=spec.state_dim,
            num_actions=spec.num_actions,
            team_size=spec.team_size,
            use_orthogonal=config.use_orthogonal,
            gain=config.gain,
            seed=seed,
            **config.architecture(),
        )
        check_device_here(device)  # a one-line error for a device this machine lacks
        self.device = torch.device(device)
        self._policy.to(self.device)  # before the optimisers take its parameters
        self._initial_weights = self._policy.get_weights()
        #: the distinct network inputs of the batch being learned from (see :mod:`.batch`)
        self._distinct: dict[str, torch.Tensor] = {}
        self._restart_lineage()
        self._shuffle = torch.Generator().manual_seed(seed + 1)
        self._actor_opt, self._critic_opt = self._make_optimisers()
        self.num_updates = 0
        self.samples_seen = 0
        self._schedule_step = 0

    # ------------------------------------------------------------------ Learner API
    @property
    def policy(self) -> MAPPOPolicy:
        return self._policy

    def update(self, batch: SampleBatch) -> dict[str, float]:
        c = self.config
        data, stats = self._prepare(batch)
        lr_frac = self._apply_lr_schedule()
        entropy_coef = self.entropy_coef  # constant within the update
        sums = dict.fromkeys(_MB_KEYS, 0.0)
        n_mb = 0
        for _ in range(c.ppo_epoch):
            for mb in minibatches(data, c.num_mini_batch, self._shuffle):
                for k, v in self._minibatch_step(mb, entropy_coef).items():
                    sums[k] += v
                n_mb += 1
        self.num_updates += 1
        self._schedule_step += 1
        self.samples_seen += num_samples(data)
        metrics = {k: v / n_mb for k, v in sums.items()}
        metrics.update(stats)
        metrics.update(self._batch_metrics(data, lr_frac))
        metrics["entropy_coef"] = entropy_coef
        if c.magnet_coef > 0.0:
            rate = c.magnet_rate * (self.lr_fraction if c.magnet_schedule == "lr" else 1.0)
            self._magnet.move(self._policy.actor, rate)
        if self._average is not None:
            self._average.move(self._policy)
        return metrics

    def _prepare(self, batch: SampleBatch) -> tuple[dict[str, torch.Tensor], dict[str, float]]:
        """The batch's samples (or chunks) as tensors, and its diagnostics (:func:`.batch.prepare`);
        the distinct network inputs it found are kept for the update's passes."""
        c = self.config
        check_batch(batch, self.spec)
        data, self._distinct, stats = prepare(
            batch,
            self._policy,
            gamma=c.gamma,
            gae_lambda=c.gae_lambda,
            advantage_norm=c.use_advantage_norm,
            chunk_length=c.recurrent.chunk_length,
            device=self.device,
        )
        return data, stats

    def get_weights(self) -> dict[str, np.ndarray]:
        return self._policy.get_weights()

    def set_weights(self, weights: dict[str, np.ndarray]) -> None:
        """The policy takes ``weights``; the magnet and the snapshot average restart from them
        (they belong to the lineage)."""
        self._policy.set_weights(weights)
        self._restart_lineage()

    def snapshot(self) -> Snapshot | None:
        """With ``snapshot_average_rate``: this policy with every parameter replaced by its running
        average (what a snapshot freezes); else None (the last weights)."""
        if self._average is None:
            return None
        weights = self._policy.get_weights()
        for name, value in self._average.params.items():
            weights[name] = value.detach().cpu().numpy().copy()
        return Snapshot({**self.policy_meta(), "averaged": True}, weights)

    def policy_meta(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "version": ARCH_VERSION,
            "env": self.spec.name,
            "obs_dim": self.spec.obs_dim,
            "state_dim": self.spec.state_dim,
            "num_actions": self.spec.num_actions,
            "team_size": self.spec.team_size,
            "architecture": dict(self._policy.arch),
        }

    def state_dict(self) -> dict[str, Any]:
        average = None if self._average is None else self._average.state_dict()
        return {
            "version": STATE_VERSION,
            "weights": {k: v.detach().cpu().clone() for k, v in self._policy.state_dict().items()},
            "initial_weights": {k: torch.from_numpy(v.copy()) for k, v in self._initial_weights.items()},
            "actor_optim": to_cpu(self._actor_opt.state_dict()),
            "critic_optim": to_cpu(self._critic_opt.state_dict()),
            "shuffle_rng": self._shuffle.get_state(),
            "num_updates": self.num_updates,
            "samples_seen": self.samples_seen,
            "schedule_step": self._schedule_step,
            "entropy_coef": self.config.entropy_coef,
            "magnet": {k: v.detach().cpu().clone() for k, v in self._magnet.net.state_dict().items()},
            "snapshot_average": None if average is None else average["params"],
            "averaged_updates": 0 if average is None else average["updates"],
        }

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Also reads the states written before the magnet, the average or the removed options
        existed (what they lack restarts from the weights; what they hold of removed options,
        ``q_net`` and an adapted ``entropy_coef``, is not read)."""
        if state.get("version") != STATE_VERSION:
            raise ValueError(
                f"MAPPO learner state has version {state.get('version')!r}, this code reads {STATE_VERSION}; "
                "resume with the light_league version that wrote it"
            )
        self._policy.set_weights(state["weights"])
        self._initial_weights = {k: np.asarray(v) for k, v in state["initial_weights"].items()}
        self._actor_opt.load_state_dict(state["actor_optim"])
        self._critic_opt.load_state_dict(state["critic_optim"])
        self._shuffle.set_state(state["shuffle_rng"])
        self.num_updates = int(state["num_updates"])
        self.samples_seen = int(state["samples_seen"])
        self._schedule_step = int(state["schedule_step"])
        self._restart_lineage()
        if "magnet" in state:
            self._magnet.net.load_state_dict(state["magnet"])
        saved = state.get("snapshot_average")
        if self._average is not None and saved is not None:
            self._average.load(saved, int(state.get("averaged_updates", 0)))

    def reset_weights(self) -> None:
        """Back to the initial weights (ValueNorm included), fresh optimisers, lr schedule restarted.

        Lifetime counters (``num_updates``, ``samples_seen``) keep counting.
        """
        self._policy.set_weights(self._initial_weights)
        self._actor_opt, self._critic_opt = self._make_optimisers()
        self._schedule_step = 0
        self._restart_lineage()

    # ------------------------------------------------------------------ schedules
    @property
    def lr_fraction(self) -> float:
        """Current learning rate as a fraction of the configured one."""
        c = self.config
        if c.lr_schedule == "constant":
            return 1.0
        return 1.0 - (1.0 - c.lr_final_fraction) * self._schedule_progress()

    @property
    def entropy_coef(self) -> float:
        """The entropy coefficient of the next update: ``entropy_coef``, falling with the linear
        schedule's progress toward ``entropy_final_fraction`` of it (see config)."""
        c = self.config
        if c.lr_schedule == "constant" or c.entropy_final_fraction == 1.0:
            return c.entropy_coef
        return c.entropy_coef * (1.0 - (1.0 - c.entropy_final_fraction) * self._schedule_progress())

    def _schedule_progress(self) -> float:
        """How far the linear schedule has run, in [0, 1]."""
        return min(self._schedule_step / self.config.lr_decay_updates, 1.0)

    def _apply_lr_schedule(self) -> float:
        frac = self.lr_fraction
        for group in self._actor_opt.param_groups:
            group["lr"] = self.config.lr * frac
        for group in self._critic_opt.param_groups:
            group["lr"] = self.config.critic_lr * frac
        return frac

    def _restart_lineage(self) -> None:
        """The magnet and the snapshot average start again at the current weights (the average is
        None with ``snapshot_average_rate`` 0)."""
        self._magnet = Magnet(self._policy.actor)
        rate = self.config.snapshot_average_rate
        self._average = WeightAverage(self._policy, rate) if rate > 0.0 else None

    def _make_optimisers(self) -> tuple[torch.optim.Adam, torch.optim.Adam]:
        c = self.config
        actor = torch.optim.Adam(
            self._policy.actor.parameters(), lr=c.lr, eps=c.opti_eps, weight_decay=c.weight_decay
        )
        critic = torch.optim.Adam(
            self._policy.critic.parameters(), lr=c.critic_lr, eps=c.opti_eps, weight_decay=c.weight_decay
        )
        return actor, critic

    # ------------------------------------------------------------------ one mini-batch
    def _actor_logits(self, mb: dict[str, torch.Tensor]) -> tuple[torch.Tensor, dict[str, torch.Tensor]]:
        """The actor's masked logits (M, A) of the mini-batch's samples, and the samples' own
        arrays (``actions``, ``old_logp``, ``advantages``, ``returns``, ``old_values``, ``mask``,
        ``agent_idx``: one row each). Recurrent: the chunks run through the actor from their
        stored hidden states and their valid entries are the samples."""
        pol = self._policy
        if "h0" not in mb:
            return self._net_on(pol.actor, mb, "obs").masked_fill(~mb["mask"], ILLEGAL_LOGIT), mb
        logits, _ = pol.actor_sequence(
            mb["obs"], mb["mask"], mb["agent_idx"], mb["h0"][:, : pol.recurrent_size]
        )
        valid = mb["valid"]
        samples = {
            k: mb[k][valid] for k in ("actions", "old_logp", "advantages", "returns", "old_values", "mask")
        }
        samples["agent_idx"] = mb["agent_idx"].expand(valid.shape)[valid]
        return logits[valid], samples

    def _critic_values(self, mb: dict[str, torch.Tensor]) -> torch.Tensor:
        """The critic's outputs (M,), in critic units, for the samples of :meth:`_actor_logits`."""
        pol = self._policy
        if "h0" not in mb:
            return self._net_on(pol.critic, mb, "state").squeeze(-1)
        values, _ = pol.critic_sequence(mb["state"], mb["agent_idx"], mb["h0"][:, pol.recurrent_size :])
        return values[mb["valid"]]

    def _net_on(self, net: torch.nn.Module, mb: dict[str, torch.Tensor], key: str) -> torch.Tensor:
        """A feed-forward ``net`` (actor, critic, magnet) on the mini-batch's ``key`` input (``obs``
        or ``state``, with the agent's position appended), one row per sample: computed once per
        distinct input of the batch when :func:`.batch.prepare` found few."""
        inverse = mb.get(f"{key}_inverse")
        if inverse is None:
            return net(self._policy._with_id(mb[key], mb["agent_idx"]))
        return net(self._distinct[key])[inverse]

    def _clip_grads(self, params: list[torch.nn.Parameter]) -> float:
        if self.config.use_max_grad_norm:
            return float(torch.nn.utils.clip_grad_norm_(params, self.config.max_grad_norm))
        grads = [p.grad.detach().norm() for p in params if p.grad is not None]
        return float(torch.stack(grads).norm()) if grads else 0.0

    def _minibatch_step(self, mb: dict[str, torch.Tensor], entropy_coef: float) -> dict[str, float]:
        c = self.config
        pol = self._policy
        logits, samples = self._actor_logits(mb)
        logp_all = torch.log_softmax(logits, dim=-1)
        logp = logp_all.gather(1, samples["actions"][:, None]).squeeze(1)
        entropy = categorical_entropy(logp_all).mean()
        p_loss = policy_loss(logp, samples["old_logp"], samples["advantages"], clip=c.clip_param)
        actor_loss = p_loss - entropy_coef * entropy
        magnet_kl = torch.zeros((), device=self.device)
        if c.magnet_coef > 0.0:

            def magnet_logp(net: torch.nn.Module) -> torch.Tensor:
                return torch.log_softmax(
                    self._net_on(net, mb, "obs").masked_fill(~mb["mask"], ILLEGAL_LOGIT), -1
                )

            magnet_kl = self._magnet.kl(logp_all, mb["mask"], magnet_logp)
            actor_loss = actor_loss + c.magnet_coef * magnet_kl
        self._actor_opt.zero_grad(set_to_none=True)
        actor_loss.backward()
        actor_gn = self._clip_grads(list(pol.actor.parameters()))
        _check_finite("actor loss", float(actor_loss.detach()), actor_gn, self.num_updates)
        self._actor_opt.step()

        values = self._critic_values(mb)
        v_loss = mappo_value_loss(
            values,
            samples["old_values"],
            samples["returns"],
            pol.value_norm,
            clip=c.clip_param,
            huber_delta=c.huber_delta if c.use_huber_loss else None,
            clipped=c.use_clipped_value_loss,
        )
        self._critic_opt.zero_grad(set_to_none=True)
        (c.value_loss_coef * v_loss).backward()
        critic_gn = self._clip_grads(list(pol.critic.parameters()))
        _check_finite("value loss", float(v_loss.detach()), critic_gn, self.num_updates)
        self._critic_opt.step()

        kl, clip_frac = ppo_diagnostics(logp.detach(), samples["old_logp"], clip=c.clip_param)
        return {
            "policy_loss": float(p_loss.detach()),
            "value_loss": float(v_loss.detach()),
            "entropy": float(entropy.detach()),
            "approx_kl": kl,
            "clip_frac": clip_frac,
            "actor_grad_norm": actor_gn,
            "critic_grad_norm": critic_gn,
            "grad_norm": float(np.hypot(actor_gn, critic_gn)),
            "magnet_kl": float(magnet_kl.detach()),
        }

    def _batch_metrics(self, data: dict[str, torch.Tensor], lr_frac: float) -> dict[str, float]:
        out = {
            "lr": self.config.lr * lr_frac,
            "critic_lr": self.config.critic_lr * lr_frac,
            "return_mean": float(
                data["returns"][data["valid"]].mean() if "h0" in data else data["returns"].mean()
            ),
            "num_samples": float(num_samples(data)),
        }
        if self._policy.value_norm is not None:
            mean, var = self._policy.value_norm.mean_var()
            out["value_norm_mean"] = float(mean)
            out["value_norm_std"] = float(var.sqrt())
        return out
