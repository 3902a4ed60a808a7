"""The MAPPO learner: GAE on a :class:`SampleBatch`, then PPO epochs over shuffled mini-batches.

One ``update(batch)``:

1. **Prepare** — GAE in return units (:mod:`.gae`), advantage normalisation over valid entries,
   old values mapped into the critic's units with the ValueNorm statistics of the rollout (they
   change only inside ``update``, so these equal the critic's raw outputs at collection time);
   then the valid entries of every stream are flattened into one sample set.
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

With ``policy_gradient`` ``all_actions`` or ``control_variate`` each mini-batch first takes one
regression step of an action-value network (the critic's input to one value per action) on the
lambda-returns of the actions taken; the actor's surrogate then covers every legal action, each by
its value less the mean under the policy the update started from (docs/mappo.md).

Deterministic under ``seed``: the seed fixes the initial weights and the shuffling generator.

``device`` (``learner.device``): the policy, the magnet and every batch tensor live there; the
shuffling generator stays on the CPU (the same permutations on every device), and
``get_weights`` / ``state_dict`` return CPU values, so what is published or saved never holds a
device tensor (see :mod:`light_league.utils.device`).
"""

from __future__ import annotations

import copy
import math
from typing import Any, ClassVar

import numpy as np
import torch

from envs.base import EnvSpec
from light_league.algorithms.base import Learner
from light_league.algorithms.mappo.chunks import chunk_index, to_chunks
from light_league.algorithms.mappo.config import ARCH_VERSION, MAPPOConfig
from light_league.algorithms.mappo.gae import compute_gae, normalize_advantages
from light_league.algorithms.mappo.loss import (
    categorical_entropy,
    mappo_value_loss,
    masked_mean,
    policy_loss,
    ppo_diagnostics,
    value_loss,
)
from light_league.algorithms.mappo.policy import ILLEGAL_LOGIT, MAPPOPolicy, build_mlp, distinct_rows
from light_league.config_base import Section
from light_league.data_buffer.episode import SampleBatch
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
    "q_loss",
)

#: bounds of the adaptive entropy coefficient (``entropy_target``)
ENTROPY_COEF_RANGE = (1e-5, 1.0)


def _num_samples(data: dict[str, torch.Tensor]) -> int:
    """Samples in prepared data: rows, or the valid entries of chunks."""
    return int(data["valid"].sum()) if "h0" in data else int(data["actions"].shape[0])


def _check_finite(name: str, loss: float, grad_norm: float, update: int) -> None:
    """Stop before an optimiser step that would write NaN or infinite weights."""
    if not (math.isfinite(loss) and math.isfinite(grad_norm)):
        raise NonFiniteError(
            f"MAPPO update {update + 1}: the {name} is {loss} (gradient norm {grad_norm}); no step was "
            "taken. The trajectories hold numbers too large or not finite: check the env's rewards, or "
            "lower learner.mappo.lr"
        )


def state_weights(obs: np.ndarray, agent_idx: np.ndarray, power: float) -> np.ndarray:
    """(N,) float32 weights ``count ** -power``, normalised to mean 1, where ``count`` is how many
    of the ``N`` samples share the sample's observation row and agent position
    (``state_weight_power``)."""
    keys = np.ascontiguousarray(
        np.concatenate(
            [np.asarray(obs, dtype=np.float32).reshape(len(obs), -1), agent_idx[:, None].astype(np.float32)],
            axis=1,
        )
    )
    _, inverse, counts = np.unique(
        keys.view(np.dtype((np.void, keys.dtype.itemsize * keys.shape[1]))).ravel(),
        return_inverse=True,
        return_counts=True,
    )
    w = counts[inverse.ravel()].astype(np.float64) ** -power
    return (w / w.mean()).astype(np.float32)


def explained_variance(values: np.ndarray, returns: np.ndarray) -> float:
    """``1 - Var(returns - values) / Var(returns)``; NaN when the returns do not vary."""
    var = float(np.var(returns))
    return float("nan") if var == 0.0 else 1.0 - float(np.var(returns - values)) / var


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
        self._q_net = self._new_q_net() if config.policy_gradient != "sampled" else None
        self._adv_scale = 1.0
        #: the distinct network inputs of the batch being learned from (:meth:`_prepare`)
        self._distinct: dict[str, torch.Tensor] = {}
        self._restart_lineage()
        self.entropy_coef = config.entropy_coef
        self._shuffle = torch.Generator().manual_seed(seed + 1)
        self._actor_opt, self._critic_opt = self._make_optimisers()
        self._q_opt = self._make_q_optimiser()
        self.num_updates = 0
        self.samples_seen = 0
        self._schedule_step = 0

    # ------------------------------------------------------------------ Learner API
    @property
    def policy(self) -> MAPPOPolicy:
        return self._policy

    def update(self, batch: SampleBatch) -> dict[str, float]:
        data, stats = self._prepare(batch)
        lr_frac = self._apply_lr_schedule()
        entropy_coef = self._scheduled_entropy_coef()  # constant within the update
        sums = dict.fromkeys(_MB_KEYS, 0.0)
        n_mb = 0
        for _ in range(self.config.ppo_epoch):
            for mb in self._minibatches(data):
                for k, v in self._minibatch_step(mb).items():
                    sums[k] += v
                n_mb += 1
        self.num_updates += 1
        self._schedule_step += 1
        self.samples_seen += _num_samples(data)
        metrics = {k: v / n_mb for k, v in sums.items()}
        metrics.update(stats)
        metrics.update(self._batch_metrics(data, lr_frac))
        metrics["entropy_coef"] = entropy_coef
        self._adapt_entropy_coef(data)
        self._move_magnet()
        self._move_average()
        return metrics

    def get_weights(self) -> dict[str, np.ndarray]:
        return self._policy.get_weights()

    def set_weights(self, weights: dict[str, np.ndarray]) -> None:
        """The policy takes ``weights``; the magnet and the snapshot average restart from them
        (they belong to the lineage)."""
        self._policy.set_weights(weights)
        self._restart_lineage()

    def snapshot_weights(self) -> dict[str, np.ndarray] | None:
        """With ``snapshot_average_rate``: the weights with every parameter replaced by its
        running average (what a snapshot freezes); else None (the last weights)."""
        if self._average is None:
            return None
        weights = self._policy.get_weights()
        for name, value in self._average.items():
            weights[name] = value.detach().cpu().numpy().copy()
        return weights

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
            "entropy_coef": self.entropy_coef,
            "magnet": {k: v.detach().cpu().clone() for k, v in self._magnet.state_dict().items()},
            "snapshot_average": (
                None
                if self._average is None
                else {k: v.detach().cpu().clone() for k, v in self._average.items()}
            ),
            "averaged_updates": self._averaged_updates,
            "q_net": (
                None
                if self._q_net is None
                else {k: v.detach().cpu().clone() for k, v in self._q_net.state_dict().items()}
            ),
            "q_optim": None if self._q_opt is None else to_cpu(self._q_opt.state_dict()),
        }

    def load_state_dict(self, state: dict[str, Any]) -> None:
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
        # states written before the regularisers existed: fixed coefficient, magnet = actor
        self.entropy_coef = float(state.get("entropy_coef", self.config.entropy_coef))
        # states written before the magnet or the average existed: they restart from the weights
        self._restart_lineage()
        if "magnet" in state:
            self._magnet.load_state_dict(state["magnet"])
        saved = state.get("snapshot_average")
        if self._average is not None and saved is not None:
            for name, value in saved.items():
                self._average[name].copy_(value)
            self._averaged_updates = int(state.get("averaged_updates", 0))
        # states written without action values (or before they existed): those start afresh
        if self._q_net is not None and self._q_opt is not None and state.get("q_net") is not None:
            self._q_net.load_state_dict(state["q_net"])
            self._q_opt.load_state_dict(state["q_optim"])

    def reset_weights(self) -> None:
        """Back to the initial weights (ValueNorm and the action values included), fresh
        optimisers, lr schedule restarted.

        Lifetime counters (``num_updates``, ``samples_seen``) keep counting.
        """
        self._policy.set_weights(self._initial_weights)
        self._actor_opt, self._critic_opt = self._make_optimisers()
        if self._q_net is not None:  # seeded: the same initial values again
            self._q_net = self._new_q_net()
        self._q_opt = self._make_q_optimiser()
        self._schedule_step = 0
        self._restart_lineage()
        self.entropy_coef = self.config.entropy_coef

    @property
    def lr_fraction(self) -> float:
        """Current learning rate as a fraction of the configured one."""
        c = self.config
        if c.lr_schedule == "constant":
            return 1.0
        return 1.0 - (1.0 - c.lr_final_fraction) * self._schedule_progress()

    @property
    def rounds_per_update(self) -> int:
        """``batch_growth``: from 1 to ``batch_growth`` rollout rounds an update, linearly over the
        schedule's ``lr_decay_updates``."""
        return 1 + int((self.config.batch_growth - 1) * self._schedule_progress())

    def _schedule_progress(self) -> float:
        """How far the linear schedule has run, in [0, 1]."""
        return min(self._schedule_step / self.config.lr_decay_updates, 1.0)

    # ------------------------------------------------------------------ regularisers
    def _new_magnet(self) -> torch.nn.Module:
        """A frozen copy of the actor (the magnet of ``magnet_coef``)."""
        magnet = copy.deepcopy(self._policy.actor)
        magnet.requires_grad_(False)
        return magnet

    @torch.no_grad()
    def _move_magnet(self) -> None:
        """Magnet parameters move ``magnet_rate`` (times the lr fraction, with ``magnet_schedule:
        lr``) of the way toward the actor's."""
        if self.config.magnet_coef <= 0.0:
            return
        rate = self.config.magnet_rate
        if self.config.magnet_schedule == "lr":
            rate *= self.lr_fraction
        for m, p in zip(self._magnet.parameters(), self._policy.actor.parameters()):
            m.lerp_(p, rate)

    def _restart_lineage(self) -> None:
        """The magnet and the snapshot average start again at the current weights (they belong to
        the lineage; the average is None with ``snapshot_average_rate`` 0)."""
        self._magnet = self._new_magnet()
        self._averaged_updates = 0
        self._average: dict[str, torch.Tensor] | None = None
        if self.config.snapshot_average_rate > 0.0:
            self._average = {name: p.detach().clone() for name, p in self._policy.named_parameters()}

    @torch.no_grad()
    def _move_average(self) -> None:
        """Every averaged parameter moves toward the learner's: by ``1/n`` after the lineage's
        ``n``-th update (a plain mean of its weights so far, so the first snapshots do not lean on
        the starting weights), by ``snapshot_average_rate`` once that is the larger step."""
        if self._average is None:
            return
        self._averaged_updates += 1
        rate = max(self.config.snapshot_average_rate, 1.0 / self._averaged_updates)
        for name, p in self._policy.named_parameters():
            self._average[name].lerp_(p, rate)

    def _scheduled_entropy_coef(self) -> float:
        """The entropy coefficient of this update: the adaptive/fixed one, times the schedule's
        progress toward ``entropy_final_fraction`` (see config)."""
        c = self.config
        if c.lr_schedule == "constant" or c.entropy_final_fraction == 1.0:
            return self.entropy_coef
        return self.entropy_coef * (1.0 - (1.0 - c.entropy_final_fraction) * self._schedule_progress())

    @torch.no_grad()
    def _adapt_entropy_coef(self, data: dict[str, torch.Tensor]) -> None:
        """Multiplicative step of the entropy coefficient toward ``entropy_target`` (see config)."""
        c = self.config
        if c.entropy_target is None:
            return
        logits, samples = self._actor_logits(data)
        logp_all = torch.log_softmax(logits, dim=-1)
        entropy = float(categorical_entropy(logp_all).mean())
        legal = samples["mask"].sum(dim=-1).clamp(min=1).to(torch.float32)
        target = c.entropy_target * float(torch.log(legal).mean())
        if target <= 0.0:
            return
        step = c.entropy_adapt_rate * (target - entropy) / target
        low, high = ENTROPY_COEF_RANGE
        self.entropy_coef = min(max(self.entropy_coef * math.exp(step), low), high)

    def _magnet_kl(self, logp_all: torch.Tensor, mb: dict[str, torch.Tensor]) -> torch.Tensor:
        """Mean ``KL(policy || magnet)`` over the mini-batch's states (legal actions only; weighted
        with ``state_weight_power``)."""
        with torch.no_grad():
            magnet_logits = self._net_on(self._magnet, mb, "obs")
            magnet_logp = torch.log_softmax(magnet_logits.masked_fill(~mb["mask"], ILLEGAL_LOGIT), dim=-1)
        p = logp_all.exp()
        terms = torch.where(mb["mask"], p * (logp_all - magnet_logp), torch.zeros_like(p))
        return masked_mean(terms.sum(dim=-1), mb.get("weights"))

    # ------------------------------------------------------------------ phases
    def _make_optimisers(self) -> tuple[torch.optim.Adam, torch.optim.Adam]:
        c = self.config
        actor = torch.optim.Adam(
            self._policy.actor.parameters(), lr=c.lr, eps=c.opti_eps, weight_decay=c.weight_decay
        )
        critic = torch.optim.Adam(
            self._policy.critic.parameters(), lr=c.critic_lr, eps=c.opti_eps, weight_decay=c.weight_decay
        )
        return actor, critic

    def _new_q_net(self) -> torch.nn.Module:
        """The action-value network of ``policy_gradient`` ``all_actions`` and ``control_variate``:
        the critic's input (centralised state, agent position) to one value per action, in return
        units."""
        c = self.config
        spec = self.spec
        return build_mlp(
            spec.state_dim + (spec.team_size if c.add_agent_id else 0),
            spec.num_actions,
            hidden_size=c.hidden_size,
            layer_N=c.layer_N,
            use_relu=c.use_relu,
            use_feature_normalization=c.use_feature_normalization,
            use_orthogonal=c.use_orthogonal,
            out_gain=0.01,  # near 0 at first: no advantage before the values are learned
            generator=torch.Generator().manual_seed(self.seed + 2),
        ).to(self.device)

    def _make_q_optimiser(self) -> torch.optim.Adam | None:
        if self._q_net is None:
            return None
        c = self.config
        return torch.optim.Adam(
            self._q_net.parameters(), lr=c.critic_lr, eps=c.opti_eps, weight_decay=c.weight_decay
        )

    def _apply_lr_schedule(self) -> float:
        frac = self.lr_fraction
        for group in self._actor_opt.param_groups:
            group["lr"] = self.config.lr * frac
        for group in self._critic_opt.param_groups:
            group["lr"] = self.config.critic_lr * frac
        if self._q_opt is not None:
            for group in self._q_opt.param_groups:
                group["lr"] = self.config.critic_lr * frac
        return frac

    def _check_batch(self, batch: SampleBatch) -> None:
        t, n = batch.shape
        s = self.spec
        expected = {
            "obs": (t, n, s.obs_dim),
            "state": (t, n, s.state_dim),
            "action_mask": (t, n, s.num_actions),
            "agent_idx": (n,),
            "bootstrap_values": (n,),
        }
        for name, shape in expected.items():
            got = tuple(getattr(batch, name).shape)
            if got != shape:
                raise ValueError(
                    f"SampleBatch.{name} has shape {got}, the learner for env {s.name!r} needs {shape}; "
                    "was the batch collected on another environment?"
                )
        if batch.num_samples == 0:
            raise ValueError(
                "SampleBatch has no valid samples; collect at least one decision before update()"
            )

    def _prepare(self, batch: SampleBatch) -> tuple[dict[str, torch.Tensor], dict[str, float]]:
        """Flattened valid samples as tensors, and two batch diagnostics: the explained variance
        of the batch's values and the advantages' standard deviation before normalisation."""
        self._check_batch(batch)
        c = self.config
        adv, returns = compute_gae(
            batch.rewards,
            batch.values,
            batch.dones,
            batch.valid,
            batch.bootstrap_values,
            gamma=c.gamma,
            lam=c.gae_lambda,
        )
        ok = np.asarray(batch.valid, dtype=bool)
        stats = {"advantage_std": float(adv[ok].std())}
        # all_actions: action values are divided by the scale the GAE advantages are divided by
        self._adv_scale = stats["advantage_std"] + 1e-5 if c.use_advantage_norm else 1.0
        if c.use_advantage_norm:
            adv = normalize_advantages(adv, batch.valid)
        values = np.asarray(batch.values, dtype=np.float32)[ok]
        stats["explained_variance"] = explained_variance(values, returns[ok])
        if self._policy.recurrent_size:
            return self._prepare_chunks(batch, adv, returns), stats
        idx = np.broadcast_to(np.asarray(batch.agent_idx, dtype=np.int64)[None, :], ok.shape)
        arrays = {
            "obs": torch.from_numpy(np.ascontiguousarray(batch.obs[ok], dtype=np.float32)),
            "state": torch.from_numpy(np.ascontiguousarray(batch.state[ok], dtype=np.float32)),
            "mask": torch.from_numpy(np.ascontiguousarray(batch.action_mask[ok], dtype=bool)),
            "agent_idx": torch.from_numpy(np.ascontiguousarray(idx[ok])),
            "actions": torch.from_numpy(np.ascontiguousarray(batch.actions[ok], dtype=np.int64)),
            "old_logp": torch.from_numpy(np.ascontiguousarray(batch.logp[ok], dtype=np.float32)),
            "advantages": torch.from_numpy(adv[ok]),
            "returns": torch.from_numpy(returns[ok]),
        }
        if c.state_weight_power > 0.0:
            arrays["weights"] = torch.from_numpy(state_weights(batch.obs[ok], idx[ok], c.state_weight_power))
        data = {k: t.to(self.device) for k, t in arrays.items()}  # one copy each to the device
        # a network computes each distinct input once (poker batches repeat a few information
        # states); the mini-batches carry each sample's index into the distinct rows
        self._distinct.clear()
        for key in ("obs", "state"):
            found = distinct_rows(self._policy._with_id(data[key], data["agent_idx"]))
            if found is not None:
                self._distinct[key], data[f"{key}_inverse"] = found
        with torch.no_grad():
            data["old_values"] = self._policy.to_critic_units(torch.from_numpy(values).to(self.device))
            if self._q_net is not None:  # the policy before this update, for every action
                logits, _ = self._actor_logits(data)  # the distinct rows found above, not found again
                data["old_logp_all"] = torch.log_softmax(logits, dim=-1)
        return data, stats

    def _prepare_chunks(
        self, batch: SampleBatch, adv: np.ndarray, returns: np.ndarray
    ) -> dict[str, torch.Tensor]:
        """The recurrent layout: ``(L, C, ...)`` chunks (:mod:`.chunks`) with their ``valid``
        entries, each chunk's agent position and the hidden state stored at its start (``h0``)."""
        hidden = batch.hidden
        width = self._policy.hidden_dim
        if hidden is None or hidden.shape != (*batch.shape, width):
            got = None if hidden is None else hidden.shape
            raise ValueError(
                f"SampleBatch.hidden is {got}, this recurrent learner needs {(*batch.shape, width)}: the hidden "
                "states its policy's rollouts store; was the batch collected by another policy?"
            )
        index = chunk_index(batch.valid, batch.dones, self.config.recurrent.chunk_length)
        fields = {
            "obs": (batch.obs, np.float32),
            "state": (batch.state, np.float32),
            "mask": (batch.action_mask, bool),
            "actions": (batch.actions, np.int64),
            "old_logp": (batch.logp, np.float32),
            "advantages": (adv, np.float32),
            "returns": (returns, np.float32),
            "values": (batch.values, np.float32),
            "valid": (batch.valid, bool),
        }
        arrays = {
            k: torch.from_numpy(to_chunks(np.asarray(x, dtype=t), index)) for k, (x, t) in fields.items()
        }
        arrays["agent_idx"] = torch.from_numpy(
            np.asarray(batch.agent_idx, dtype=np.int64)[index.start_stream]
        )
        arrays["h0"] = torch.from_numpy(np.ascontiguousarray(hidden[index.start_time, index.start_stream]))
        data = {k: t.to(self.device) for k, t in arrays.items()}
        with torch.no_grad():
            data["old_values"] = self._policy.to_critic_units(data.pop("values"))
        return data

    def _minibatches(self, data: dict[str, torch.Tensor]) -> list[dict[str, torch.Tensor]]:
        """A fresh shuffle split into ``num_mini_batch`` near-equal parts (no sample dropped):
        of samples, or of chunks when the policy is recurrent (axis 1 of the chunk arrays).

        With one mini-batch the order cannot change the gradient, so the data is used as is.
        """
        chunked = "h0" in data
        num_items = int(data["h0"].shape[0] if chunked else data["actions"].shape[0])
        parts = min(self.config.num_mini_batch, num_items)
        if parts == 1:
            return [data]
        perm = torch.randperm(num_items, generator=self._shuffle).to(self.device)
        if not chunked:
            return [{k: t[idx] for k, t in data.items()} for idx in torch.tensor_split(perm, parts)]
        per_chunk = ("agent_idx", "h0")  # (C, ...); every other array is (L, C, ...)
        return [
            {k: t[idx] if k in per_chunk else t[:, idx] for k, t in data.items()}
            for idx in torch.tensor_split(perm, parts)
        ]

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
        """A feed-forward ``net`` (actor, critic, magnet, action values) on the mini-batch's
        ``key`` input (``obs`` or ``state``, with the agent's position appended), one row per
        sample: computed once per distinct input of the batch when :meth:`_prepare` found few."""
        inverse = mb.get(f"{key}_inverse")
        if inverse is None:
            return net(self._policy._with_id(mb[key], mb["agent_idx"]))
        return net(self._distinct[key])[inverse]

    def _clip_grads(self, params: list[torch.nn.Parameter]) -> float:
        if self.config.use_max_grad_norm:
            return float(torch.nn.utils.clip_grad_norm_(params, self.config.max_grad_norm))
        grads = [p.grad.detach().norm() for p in params if p.grad is not None]
        return float(torch.stack(grads).norm()) if grads else 0.0

    def _minibatch_step(self, mb: dict[str, torch.Tensor]) -> dict[str, float]:
        c = self.config
        pol = self._policy
        q_loss = self._q_step(mb)  # first, so that the actor's advantages use this batch's values
        logits, samples = self._actor_logits(mb)
        logp_all = torch.log_softmax(logits, dim=-1)
        logp = logp_all.gather(1, samples["actions"][:, None]).squeeze(1)
        weights = samples.get("weights")  # state_weight_power: per-sample weights, else None
        entropy = masked_mean(categorical_entropy(logp_all), weights)
        if self._q_net is None:
            p_loss = policy_loss(
                logp, samples["old_logp"], samples["advantages"], clip=c.clip_param, mask=weights
            )
        else:
            p_loss = self._all_actions_loss(logp_all, logp, mb)
        actor_loss = p_loss - self._scheduled_entropy_coef() * entropy
        magnet_kl = torch.zeros((), device=self.device)
        if c.magnet_coef > 0.0:
            magnet_kl = self._magnet_kl(logp_all, mb)
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
            "q_loss": q_loss,
        }

    def _q_values(self, mb: dict[str, torch.Tensor]) -> torch.Tensor:
        """(M, A) action values of the mini-batch's samples, in return units."""
        assert self._q_net is not None
        return self._net_on(self._q_net, mb, "state")

    def _all_actions_loss(
        self, logp_all: torch.Tensor, logp: torch.Tensor, mb: dict[str, torch.Tensor]
    ) -> torch.Tensor:
        """``policy_gradient: all_actions``: the clipped surrogate of every legal action, weighted
        by its probability before the update, with advantage ``Q(s, a) - sum_b pi_old(b) Q(s, b)``
        in the GAE advantages' scale. ``control_variate`` adds the sampled surrogate with what
        the action values do not explain of the taken action's advantage (to be minimised,
        scalar)."""
        c = self.config
        mask = mb["mask"]
        old_logp = mb["old_logp_all"]
        old_p = torch.where(mask, old_logp.exp(), torch.zeros_like(old_logp))
        with torch.no_grad():
            q = self._q_values(mb)
            adv = (q - (old_p * q).sum(dim=-1, keepdim=True)) / self._adv_scale
        # illegal entries: both log-probabilities are about -1e10, whose difference float32
        # cannot hold; they carry no weight, so their ratio is set to 1
        ratio = torch.where(mask, torch.exp(logp_all - old_logp), torch.ones_like(logp_all))
        surr = torch.min(ratio * adv, torch.clamp(ratio, 1.0 - c.clip_param, 1.0 + c.clip_param) * adv)
        loss = -masked_mean((old_p * surr).sum(dim=-1), mb.get("weights"))
        if c.policy_gradient == "control_variate":
            residual = mb["advantages"] - adv.gather(1, mb["actions"][:, None]).squeeze(1)
            loss = loss + policy_loss(
                logp, mb["old_logp"], residual, clip=c.clip_param, mask=mb.get("weights")
            )
        return loss

    def _q_step(self, mb: dict[str, torch.Tensor]) -> float:
        """One regression step of the action values on the mini-batch's lambda-returns, for the
        actions taken (Huber with ``huber_delta`` when ``use_huber_loss``); 0.0 without them."""
        if self._q_net is None or self._q_opt is None:
            return 0.0
        c = self.config
        q = self._q_values(mb).gather(1, mb["actions"][:, None]).squeeze(1)
        huber = c.huber_delta if c.use_huber_loss else None
        loss = value_loss(q, q, mb["returns"], clip=c.clip_param, huber_delta=huber, clipped=False)
        self._q_opt.zero_grad(set_to_none=True)
        loss.backward()
        grad_norm = self._clip_grads(list(self._q_net.parameters()))
        _check_finite("action-value loss", float(loss.detach()), grad_norm, self.num_updates)
        self._q_opt.step()
        return float(loss.detach())

    def _batch_metrics(self, data: dict[str, torch.Tensor], lr_frac: float) -> dict[str, float]:
        out = {
            "lr": self.config.lr * lr_frac,
            "critic_lr": self.config.critic_lr * lr_frac,
            "return_mean": float(
                data["returns"][data["valid"]].mean() if "h0" in data else data["returns"].mean()
            ),
            "num_samples": float(_num_samples(data)),
        }
        if self._policy.value_norm is not None:
            mean, var = self._policy.value_norm.mean_var()
            out["value_norm_mean"] = float(mean)
            out["value_norm_std"] = float(var.sqrt())
        return out
