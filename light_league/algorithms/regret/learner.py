"""The regret learner: sampled regret minimisation with an average-strategy network (docs/regret.md).

One ``update(batch)`` is one iteration ``t`` of counterfactual regret minimisation, estimated
from the batch's self-play games alone (episodes from reset, observations, action masks and the
policies' own probabilities; no game tree, no cloned states, no exact values), with ESCHER's
estimator (McAleer et al., ICLR 2023):

1. **Strategies.** ``sigma_t`` of every decision in the batch: regret matching on the regret
   network as it is (the version that played the batch).
2. **Action values.** The learner's own seat played the fixed sampling policy (uniform over the
   legal actions) against ``sigma_t``; an action-value network ``Q(s, a)`` on the centralised state
   (the history as the env shows it to a critic) regresses on expected-SARSA targets: the
   rewards until the seat's next decision plus ``sum_b sigma_t(b) Q(s', b)`` there (0 after the
   last), so it estimates the values of ``sigma_t`` against ``sigma_t``.
3. **Regrets.** At each of the seat's decisions ``r(a) = Q(s, a) - sum_b sigma_t(b) Q(s, b)`` over
   the legal actions goes into the regret memory with weight ``t`` (linear CFR). A decision's
   expected estimate is its information state's counterfactual regret times the sampling
   policy's reach, which is fixed, so no importance weight is needed; the regret network
   regresses on the memory (weighted squared error over the legal actions) and regret matching
   on it gives ``sigma_{t+1}``.
4. **Average strategy.** The mirror seat (the opponent seat of self-play games, which played
   ``sigma_t``) reaches its information states with its own ``sigma_t`` reach times a weight
   that does not change between iterations; its ``(observation, sigma_t)`` pairs go into the
   strategy memory with weight ``t``, and the average network (a MAPPO actor) regresses on it by
   weighted cross-entropy: the reach-weighted average of the iterations' strategies, which is
   what converges to an equilibrium in two-player zero-sum games.

The learner publishes its current strategy (:class:`~.policy.RegretPolicy`, for self-play); its
snapshots are the average network, a MAPPO policy (:meth:`RegretLearner.snapshot`): members
like any other, played, evaluated, exported and exploited as MAPPO members are.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
import torch

from light_league.algorithms.base import Learner, Snapshot, check_batch
from light_league.algorithms.mappo.config import ARCH_VERSION
from light_league.algorithms.mappo.learner import MAPPOLearner
from light_league.algorithms.mappo.policy import MAPPOPolicy, build_mlp, rowwise
from light_league.algorithms.regret.config import RegretConfig
from light_league.algorithms.regret.memory import Reservoir
from light_league.algorithms.regret.policy import RegretPolicy
from light_league.config_base import Section
from light_league.data_buffer.episode import SampleBatch
from light_league.envs.base import EnvSpec
from light_league.errors import NonFiniteError
from light_league.utils.device import check_device_here, to_cpu

#: version of the ``state_dict`` layout
STATE_VERSION = 1


class RegretLearner(Learner):
    """See the module docstring for one update's phases."""

    kind = "regret"
    Config: ClassVar[type[Section]] = RegretConfig

    def __init__(self, spec: EnvSpec, config: RegretConfig, *, seed: int, device: str = "cpu") -> None:
        if config.torch_threads:
            torch.set_num_threads(config.torch_threads)
        self.spec, self.config, self.seed = spec, config, seed
        check_device_here(device)
        self.device = torch.device(device)
        sizes: dict[str, Any] = dict(
            obs_dim=spec.obs_dim,
            state_dim=spec.state_dim,
            num_actions=spec.num_actions,
            team_size=spec.team_size,
        )
        hidden: dict[str, Any] = dict(
            hidden_size=config.hidden_size,
            layer_N=config.layer_N,
            use_feature_normalization=config.use_feature_normalization,
        )
        self._policy = RegretPolicy(**sizes, **hidden, seed=seed).to(self.device)
        #: the average strategy: the actor of a MAPPO network (its critic is never trained)
        self._average = MAPPOPolicy(**sizes, seed=seed + 1, **config.architecture()).to(self.device)
        self._q = build_mlp(
            spec.state_dim + spec.team_size,
            spec.num_actions,
            **hidden,
            use_relu=True,
            use_orthogonal=True,
            out_gain=0.01,
            generator=torch.Generator().manual_seed(seed + 2),
        ).to(self.device)
        self._opts = {
            "regret": torch.optim.Adam(self._policy.parameters(), lr=config.lr, foreach=True),
            "average": torch.optim.Adam(self._average.actor.parameters(), lr=config.lr, foreach=True),
            "q": torch.optim.Adam(self._q.parameters(), lr=config.q_lr, foreach=True),
        }
        rows = {
            "obs": ((spec.obs_dim,), np.float32),
            "agent_idx": ((), np.int64),
            "mask": ((spec.num_actions,), bool),
            "target": ((spec.num_actions,), np.float32),
            "weight": ((), np.float32),
        }
        self._regrets = Reservoir(config.memory_size, rows, seed=seed + 3)
        self._strategies = Reservoir(config.memory_size, rows, seed=seed + 4)
        self._shuffle = np.random.default_rng(seed + 5)
        self.iteration = 0

    # ------------------------------------------------------------------ Learner API
    @property
    def policy(self) -> RegretPolicy:
        return self._policy

    def update(self, batch: SampleBatch) -> dict[str, float]:
        check_batch(batch, self.spec)
        t = self.iteration + 1
        weight = float(t) if self.config.weighting == "linear" else 1.0
        flags = np.zeros(batch.shape[1], dtype=bool) if batch.mirror is None else batch.mirror
        own, mirror = batch.streams(~flags), batch.streams(flags)
        metrics = {"q_loss": 0.0}
        if own.num_samples:
            estimate = self._estimate(own)
            metrics["q_loss"] = self._fit_values(estimate)
            if self.config.estimator == "values":
                estimate.regrets = self._value_regrets(estimate)
            # alternating updates: iteration t updates the regrets of seat (t - 1) mod 2 alone, so
            # each seat's regrets are of the other's newest strategy (where the batch says seats)
            update = (own.seat[own.valid] == self.iteration % 2) if own.seat is not None else slice(None)
            rows = {k: v[update] for k, v in _keys(estimate.rows).items()}
            self._regrets.add({**rows, "target": estimate.regrets[update], "weight": _full(rows, weight)})
        if mirror.num_samples:
            rows = _rows(mirror)
            with torch.no_grad():
                sigma = self._policy.strategy(*self._tensors(rows, "obs", "mask", "agent_idx"))
            self._strategies.add(
                {**_keys(rows), "target": sigma.cpu().numpy(), "weight": _full(rows, weight)}
            )
        metrics["regret_lr"] = self._regret_lr(t)
        metrics["regret_loss"] = self._fit(self._regrets, self._regret_loss, self.config.regret_steps)
        metrics["average_loss"] = self._fit(self._strategies, self._average_loss, self.config.average_steps)
        self.iteration = t
        metrics.update(
            iteration=float(t),
            own_samples=float(own.num_samples),
            mirror_samples=float(mirror.num_samples),
            regret_memory=float(self._regrets.size),
            strategy_memory=float(self._strategies.size),
        )
        return metrics

    def get_weights(self) -> dict[str, np.ndarray]:
        return self._policy.get_weights()

    def set_weights(self, weights: dict[str, np.ndarray]) -> None:
        self._policy.set_weights(weights)

    def snapshot(self) -> Snapshot:
        """The average strategy, as a MAPPO policy (its critic is never trained), after
        ``snapshot_steps`` steps on the strategy memory."""
        self._fit(self._strategies, self._average_loss, self.config.snapshot_steps)
        meta = {
            "kind": MAPPOLearner.kind,
            "version": ARCH_VERSION,
            "env": self.spec.name,
            "obs_dim": self.spec.obs_dim,
            "state_dim": self.spec.state_dim,
            "num_actions": self.spec.num_actions,
            "team_size": self.spec.team_size,
            "architecture": dict(self._average.arch),
            "average_of": "regret",
            "iterations": self.iteration,
        }
        return Snapshot(meta, self._average.get_weights())

    def policy_meta(self) -> dict[str, Any]:
        return self._policy.policy_meta(self.spec.name)

    def state_dict(self) -> dict[str, Any]:
        def tensors(module: torch.nn.Module) -> dict[str, torch.Tensor]:
            return {k: v.detach().cpu().clone() for k, v in module.state_dict().items()}

        return {
            "version": STATE_VERSION,
            "policy": tensors(self._policy),
            "average": tensors(self._average),
            "q": tensors(self._q),
            "optimisers": {k: to_cpu(opt.state_dict()) for k, opt in self._opts.items()},
            "regrets": self._regrets.state_dict(),
            "strategies": self._strategies.state_dict(),
            "iteration": self.iteration,
            "shuffle_rng": self._shuffle.bit_generator.state,
        }

    def load_state_dict(self, state: dict[str, Any]) -> None:
        if state.get("version") != STATE_VERSION:
            raise ValueError(
                f"regret learner state has version {state.get('version')!r}, this code reads {STATE_VERSION}; "
                "resume with the light_league version that wrote it"
            )
        self._policy.load_state_dict(state["policy"])
        self._average.load_state_dict(state["average"])
        self._q.load_state_dict(state["q"])
        for k, opt in self._opts.items():
            opt.load_state_dict(state["optimisers"][k])
        self._regrets.load_state_dict(state["regrets"])
        self._strategies.load_state_dict(state["strategies"])
        self.iteration = int(state["iteration"])
        self._shuffle.bit_generator.state = state["shuffle_rng"]

    # ------------------------------------------------------------------ phases
    def _tensors(self, rows: dict[str, np.ndarray], *keys: str) -> list[torch.Tensor]:
        return [torch.from_numpy(rows[k]).to(self.device) for k in keys]

    def _q_values(self, state: torch.Tensor, agent_idx: torch.Tensor) -> torch.Tensor:
        return rowwise(self._q, self._policy.with_id(state, agent_idx))

    def _estimate(self, own: SampleBatch) -> _Estimate:
        """Phases 2 and 3's sampled values: for each decision of the learner's seat, the action
        values of ``sigma_t`` estimated from the episode's rest, baseline-corrected (VR-MCCFR;
        Schmid et al., AAAI 2019, as DREAM uses them): working back from the episode's end,
        ``y = r + v(next)``, ``q(b) = Q(s, b) + [b = a] (y - Q(s, a)) / xi(a)`` with ``xi`` the
        sampling policy, ``v = sum_b sigma_t(b) q(b)``. Unbiased for any ``Q``; a decision whose
        episode goes on past the batch's end takes ``Q`` alone there."""
        rows = _rows(own)
        obs, state, mask, idx = self._tensors(rows, "obs", "state", "mask", "agent_idx")
        with torch.no_grad():
            sigma_rows = self._policy.strategy(obs, mask, idx).cpu().numpy()
            q_rows = self._q_values(state, idx).cpu().numpy()
        ok = np.asarray(own.valid, dtype=bool)
        q = np.zeros((*ok.shape, self.spec.num_actions), dtype=np.float32)
        sigma = np.zeros_like(q)
        q[ok], sigma[ok] = q_rows, sigma_rows
        later = np.zeros_like(ok)
        later[:-1] = ok[1:]
        goes_on = ok & ~own.dones & later
        cut = ok & ~own.dones & ~later
        behaviour = np.exp(np.asarray(own.logp, dtype=np.float64))
        q_hat, y = q.copy(), np.zeros(ok.shape, dtype=np.float32)
        v_next = np.zeros(ok.shape[1], dtype=np.float32)
        for t in range(ok.shape[0] - 1, -1, -1):
            y[t] = own.rewards[t] + np.where(goes_on[t], v_next, 0.0)
            n = np.flatnonzero(ok[t] & ~cut[t])
            a = own.actions[t, n]
            q_hat[t, n, a] += (y[t, n] - q[t, n, a]) / behaviour[t, n]
            v_next = (sigma[t] * q_hat[t]).sum(axis=-1)
        v = (sigma * q_hat).sum(axis=-1, keepdims=True)
        regrets = np.where(own.action_mask, q_hat - v, 0.0)[ok].astype(np.float32)
        return _Estimate(rows, regrets, y[ok], (ok & ~cut)[ok])

    def _value_regrets(self, estimate: _Estimate) -> np.ndarray:
        """ESCHER's regrets: ``Q(s, a) - sum_b sigma_t(b) Q(s, b)`` from the action values alone
        (just fitted), over the legal actions."""
        obs, state, mask, idx = self._tensors(estimate.rows, "obs", "state", "mask", "agent_idx")
        with torch.no_grad():
            sigma = self._policy.strategy(obs, mask, idx)
            q = self._q_values(state, idx)
            regrets = q - (sigma * q).sum(dim=-1, keepdim=True)
            return torch.where(mask, regrets, torch.zeros_like(regrets)).cpu().numpy()

    def _fit_values(self, estimate: _Estimate) -> float:
        """Phase 2: ``q_epochs`` passes of the action values on the sampled values ``y`` of the
        actions taken (decisions whose episode goes on past the batch's end have none)."""
        rows = np.flatnonzero(estimate.has_target)
        if rows.size == 0:
            return 0.0
        state, idx, actions = self._tensors(estimate.rows, "state", "agent_idx", "actions")
        target = torch.from_numpy(estimate.targets).to(self.device)
        order = self._shuffle.permutation
        losses = []
        for _ in range(self.config.q_epochs):
            for part in np.array_split(order(rows), max(1, -(-rows.size // self.config.batch_size))):
                p = torch.from_numpy(part).to(self.device)
                taken = self._q_values(state[p], idx[p]).gather(1, actions[p][:, None]).squeeze(1)
                losses.append(self._step("q", torch.nn.functional.mse_loss(taken, target[p])))
        return float(np.mean(losses))

    def _regret_loss(self, rows: dict[str, torch.Tensor]) -> torch.Tensor:
        predicted = self._policy.regrets(rows["obs"], rows["agent_idx"])
        error = torch.where(rows["mask"], predicted - rows["target"], torch.zeros_like(predicted))
        return (rows["weight"] * error.pow(2).sum(dim=-1)).sum() / rows["weight"].sum()

    def _average_loss(self, rows: dict[str, torch.Tensor]) -> torch.Tensor:
        logits = self._average.masked_logits(rows["obs"], rows["mask"], rows["agent_idx"])
        cross = -(rows["target"] * torch.log_softmax(logits, dim=-1)).sum(dim=-1)
        return (rows["weight"] * cross).sum() / rows["weight"].sum()

    def _regret_lr(self, t: int) -> float:
        """The regret network's learning rate at iteration ``t`` (``lr_decay_iterations``), set on its optimiser."""
        c = self.config
        lr = c.lr if c.lr_decay_iterations is None else c.lr / math.sqrt(1.0 + t / c.lr_decay_iterations)
        for group in self._opts["regret"].param_groups:
            group["lr"] = lr
        return lr

    def _fit(self, memory: Reservoir, loss_of: Any, steps: int) -> float:
        """``steps`` steps on ``batch_size`` rows of ``memory`` each (phases 3 and 4)."""
        if memory.size == 0 or steps == 0:
            return 0.0
        name = "regret" if memory is self._regrets else "average"
        losses = [
            self._step(name, loss_of(memory.sample(self.config.batch_size, self.device)))
            for _ in range(steps)
        ]
        return float(np.mean(losses))

    def _step(self, name: str, loss: torch.Tensor) -> float:
        value = float(loss.detach())
        if not math.isfinite(value):
            raise NonFiniteError(
                f"regret learner iteration {self.iteration + 1}: the {name} loss is {value}; no step was "
                "taken. The trajectories hold numbers too large or not finite: check the env's rewards"
            )
        opt = self._opts[name]
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        return value


def _rows(batch: SampleBatch) -> dict[str, np.ndarray]:
    """The batch's valid decisions, one row each (stream by stream in time order)."""
    ok = np.asarray(batch.valid, dtype=bool)
    idx = np.broadcast_to(np.asarray(batch.agent_idx, dtype=np.int64)[None, :], ok.shape)
    return {
        "obs": np.ascontiguousarray(batch.obs[ok], dtype=np.float32),
        "state": np.ascontiguousarray(batch.state[ok], dtype=np.float32),
        "mask": np.ascontiguousarray(batch.action_mask[ok], dtype=bool),
        "agent_idx": np.ascontiguousarray(idx[ok]),
        "actions": np.ascontiguousarray(batch.actions[ok], dtype=np.int64),
    }


def _keys(rows: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """What a memory keeps of a decision besides its target and weight."""
    return {k: rows[k] for k in ("obs", "agent_idx", "mask")}


def _full(rows: dict[str, np.ndarray], value: float) -> np.ndarray:
    return np.full(len(rows["obs"]), value, dtype=np.float32)


@dataclass
class _Estimate:
    """The learner seat's decisions (``rows``), their sampled regrets (``regrets``, 0 at illegal
    actions) and the sampled values of the actions taken (``targets``, where ``has_target``)."""

    rows: dict[str, np.ndarray]
    regrets: np.ndarray
    targets: np.ndarray
    has_target: np.ndarray

    def weight(self, value: float) -> np.ndarray:
        return _full(self.rows, value)
