"""MAPPO's policy: a decentralised actor and a centralised critic, shared within a team.

Both networks follow the reference MLP (``onpolicy/algorithms/utils/mlp.py``): an optional
LayerNorm on the raw input, a first hidden layer and ``layer_N`` more, each
``Linear -> activation -> LayerNorm``. The actor's head is a linear layer initialised with a
small gain (0.01) so the initial policy is near uniform over legal actions; the critic's head
outputs one value, in normalised units when ``use_valuenorm`` is on (the :class:`ValueNorm`
buffers are part of the policy's weights, so a rollout worker reports values in return units).

The actor sees the agent's observation, the critic its agent-specific global state; with
``add_agent_id`` both get the one-hot position of the agent in its team appended.

Illegal actions get logit ``-1e10`` inside (finite, so gradients stay clean); the numpy API
returns ``-inf`` log-probabilities for them, as the :class:`~light_league.algorithms.base.Policy`
protocol asks.
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np
import torch
from torch import nn

from light_league.algorithms.mappo.valuenorm import ValueNorm

#: logit given to illegal actions (reference: ``onpolicy/algorithms/utils/distributions.py``)
ILLEGAL_LOGIT = -1e10

#: keys of ``policy_meta()["architecture"]``
ARCH_KEYS = (
    "hidden_size",
    "layer_N",
    "use_relu",
    "use_feature_normalization",
    "add_agent_id",
    "use_valuenorm",
    "value_norm_beta",
    "value_norm_epsilon",
)


def _init_linear(layer: nn.Linear, gain: float, orthogonal: bool, generator: torch.Generator) -> nn.Linear:
    if orthogonal:
        nn.init.orthogonal_(layer.weight, gain=gain, generator=generator)
    else:
        nn.init.xavier_uniform_(layer.weight, gain=gain, generator=generator)
    nn.init.zeros_(layer.bias)
    return layer


def build_mlp(
    in_dim: int,
    out_dim: int,
    *,
    hidden_size: int,
    layer_N: int,
    use_relu: bool,
    use_feature_normalization: bool,
    use_orthogonal: bool,
    out_gain: float,
    generator: torch.Generator,
) -> nn.Sequential:
    """Reference MLP base plus a linear head: [LayerNorm] (Linear act LayerNorm) x (1 + layer_N), Linear."""
    gain = nn.init.calculate_gain("relu" if use_relu else "tanh")
    layers: list[nn.Module] = [nn.LayerNorm(in_dim)] if use_feature_normalization else []
    width = in_dim
    for _ in range(1 + layer_N):
        layers += [
            _init_linear(nn.Linear(width, hidden_size), gain, use_orthogonal, generator),
            nn.ReLU() if use_relu else nn.Tanh(),
            nn.LayerNorm(hidden_size),
        ]
        width = hidden_size
    layers.append(_init_linear(nn.Linear(width, out_dim), out_gain, use_orthogonal, generator))
    return nn.Sequential(*layers)


class MAPPOPolicy(nn.Module):
    """Actor and critic for one team; numpy API for rollouts, torch API for the learner."""

    def __init__(
        self,
        *,
        obs_dim: int,
        state_dim: int,
        num_actions: int,
        team_size: int,
        hidden_size: int = 64,
        layer_N: int = 1,
        use_relu: bool = True,
        use_feature_normalization: bool = True,
        add_agent_id: bool = True,
        use_valuenorm: bool = True,
        value_norm_beta: float = 0.99999,
        value_norm_epsilon: float = 1e-5,
        use_orthogonal: bool = True,
        gain: float = 0.01,
        seed: int = 0,
    ) -> None:
        super().__init__()
        if min(obs_dim, state_dim, num_actions, team_size) < 1:
            raise ValueError(
                f"MAPPOPolicy needs positive sizes, got obs_dim={obs_dim} state_dim={state_dim} "
                f"num_actions={num_actions} team_size={team_size}"
            )
        self.obs_dim, self.state_dim, self.num_actions, self.team_size = (
            obs_dim,
            state_dim,
            num_actions,
            team_size,
        )
        self.arch: dict[str, Any] = {
            "hidden_size": hidden_size,
            "layer_N": layer_N,
            "use_relu": use_relu,
            "use_feature_normalization": use_feature_normalization,
            "add_agent_id": add_agent_id,
            "use_valuenorm": use_valuenorm,
            "value_norm_beta": value_norm_beta,
            "value_norm_epsilon": value_norm_epsilon,
        }
        gen = torch.Generator().manual_seed(seed)
        extra = team_size if add_agent_id else 0
        mlp = functools.partial(
            build_mlp,
            hidden_size=hidden_size,
            layer_N=layer_N,
            use_relu=use_relu,
            use_feature_normalization=use_feature_normalization,
            use_orthogonal=use_orthogonal,
            generator=gen,
        )
        self.actor = mlp(obs_dim + extra, num_actions, out_gain=gain)
        self.critic = mlp(state_dim + extra, 1, out_gain=1.0)
        self.value_norm = (
            ValueNorm(beta=value_norm_beta, epsilon=value_norm_epsilon) if use_valuenorm else None
        )
        # a buffer so that .to(device) moves it; not persistent: not part of the weights
        self._eye: torch.Tensor
        self.register_buffer("_eye", torch.eye(team_size), persistent=False)

    @property
    def device(self) -> torch.device:
        """Where the parameters are (the learner's device; rollouts use CPU copies)."""
        return self._eye.device

    @classmethod
    def from_meta(cls, meta: dict[str, Any], weights: dict[str, np.ndarray] | None = None) -> MAPPOPolicy:
        """Rebuild a policy from ``policy_meta()`` (and load ``weights`` when given)."""
        missing = [
            k for k in ("obs_dim", "state_dim", "num_actions", "team_size", "architecture") if k not in meta
        ]
        if missing:
            raise ValueError(f"MAPPO policy meta lacks {missing}; write it with MAPPOLearner.policy_meta()")
        arch = {k: meta["architecture"][k] for k in ARCH_KEYS if k in meta["architecture"]}
        policy = cls(
            obs_dim=int(meta["obs_dim"]),
            state_dim=int(meta["state_dim"]),
            num_actions=int(meta["num_actions"]),
            team_size=int(meta["team_size"]),
            **arch,
        )
        if weights is not None:
            policy.set_weights(weights)
        return policy

    # ------------------------------------------------------------------ torch API (learner)
    def _with_id(self, x: torch.Tensor, agent_idx: torch.Tensor) -> torch.Tensor:
        if not self.arch["add_agent_id"]:
            return x
        return torch.cat([x, self._eye[agent_idx]], dim=-1)

    def masked_logits(self, obs: torch.Tensor, mask: torch.Tensor, agent_idx: torch.Tensor) -> torch.Tensor:
        """(N, A) actor logits with illegal actions set to ``ILLEGAL_LOGIT``."""
        logits = self.actor(self._with_id(obs, agent_idx))
        return logits.masked_fill(~mask, ILLEGAL_LOGIT)

    def critic_values(self, state: torch.Tensor, agent_idx: torch.Tensor) -> torch.Tensor:
        """(N,) critic output, in normalised units when ``use_valuenorm`` is on."""
        return self.critic(self._with_id(state, agent_idx)).squeeze(-1)

    def to_return_units(self, values: torch.Tensor) -> torch.Tensor:
        return self.value_norm.denormalize(values) if self.value_norm is not None else values

    def _values_np(self, state: torch.Tensor, idx: torch.Tensor) -> np.ndarray:
        """Critic values in return units as float32 numpy (the affine map done in numpy: cheaper
        than several tiny torch ops per rollout step)."""
        raw = self.critic_values(state, idx).cpu().numpy()
        if self.value_norm is None:
            return raw
        mean, std = self.value_norm.mean_std()
        return (raw * np.float32(std) + np.float32(mean)).astype(np.float32, copy=False)

    def to_critic_units(self, returns: torch.Tensor) -> torch.Tensor:
        return self.value_norm.normalize(returns) if self.value_norm is not None else returns

    # ------------------------------------------------------------------ numpy API (rollouts)
    def _tensors(
        self, x: np.ndarray, agent_idx: np.ndarray, width: int, what: str
    ) -> tuple[torch.Tensor, torch.Tensor]:
        arr = np.ascontiguousarray(x, dtype=np.float32)
        if arr.ndim != 2 or arr.shape[1] != width:
            raise ValueError(f"{what} must have shape (N, {width}), got {arr.shape}")
        idx = np.asarray(agent_idx, dtype=np.int64)
        if idx.shape != (arr.shape[0],) or (idx.size and (idx.min() < 0 or idx.max() >= self.team_size)):
            raise ValueError(
                f"agent_idx must be (N,) positions in 0..{self.team_size - 1}, got {idx.tolist()}"
            )
        return torch.from_numpy(arr).to(self.device), torch.from_numpy(idx).to(self.device)

    def _log_probs(self, obs: torch.Tensor, mask: torch.Tensor, idx: torch.Tensor) -> np.ndarray:
        logp = torch.log_softmax(self.masked_logits(obs, mask, idx), dim=-1)
        return logp.masked_fill(~mask, float("-inf")).cpu().numpy()

    def _mask(self, mask: np.ndarray, n: int, num_actions: int) -> torch.Tensor:
        m = np.ascontiguousarray(mask, dtype=bool)
        if m.shape != (n, num_actions):
            raise ValueError(f"mask must have shape ({n}, {num_actions}), got {m.shape}")
        return torch.from_numpy(m).to(self.device)

    @torch.no_grad()
    def log_probs(self, obs: np.ndarray, mask: np.ndarray, agent_idx: np.ndarray) -> np.ndarray:
        o, idx = self._tensors(obs, agent_idx, self.obs_dim, "obs")
        return self._log_probs(o, self._mask(mask, o.shape[0], self.num_actions), idx)

    @torch.no_grad()
    def values(self, state: np.ndarray, agent_idx: np.ndarray) -> np.ndarray:
        s, idx = self._tensors(state, agent_idx, self.state_dim, "state")
        return self._values_np(s, idx)

    @torch.no_grad()
    def evaluate(
        self, obs: np.ndarray, state: np.ndarray, mask: np.ndarray, agent_idx: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray]:
        o, idx = self._tensors(obs, agent_idx, self.obs_dim, "obs")
        s, _ = self._tensors(state, agent_idx, self.state_dim, "state")
        logp = self._log_probs(o, self._mask(mask, o.shape[0], self.num_actions), idx)
        return logp, self._values_np(s, idx)

    # ------------------------------------------------------------------ weights
    def get_weights(self) -> dict[str, np.ndarray]:
        return {k: v.detach().cpu().numpy().copy() for k, v in self.state_dict().items()}

    def set_weights(self, weights: dict[str, np.ndarray]) -> None:
        """Load numpy (or tensor) weights; a missing, extra or misshaped entry is a ValueError."""
        own = self.state_dict()
        missing = sorted(set(own) - set(weights))
        extra = sorted(set(weights) - set(own))
        if missing or extra:
            raise ValueError(
                f"weights do not fit this MAPPO policy: missing {missing}, unexpected {extra}; "
                "were they saved from a policy with another architecture?"
            )
        loaded = {}
        for k, ref in own.items():
            t = torch.as_tensor(np.asarray(weights[k]))
            if tuple(t.shape) != tuple(ref.shape):
                raise ValueError(
                    f"weight {k!r} has shape {tuple(t.shape)}, this policy needs {tuple(ref.shape)}"
                )
            loaded[k] = t.to(ref.dtype)
        self.load_state_dict(loaded)
