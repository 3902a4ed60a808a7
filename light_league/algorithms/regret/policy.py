"""The regret learner's published policy: its current strategy, regret matching on a network.

``log_probs`` (what an opponent plays, in self-play the learner's mirror seat) is the current
strategy ``sigma_t``: regret matching on the regret network's outputs over the legal actions (the
positive part, normalised; where no legal action has a positive regret, the one with the largest,
as Deep CFR does). ``evaluate`` (what the learner's own seat plays in its rollouts) is the
sampling policy, uniform over the legal actions (ESCHER's fixed sampling policy, so that every
information state is reached with a weight that does not change between iterations), with
values of 0: the learner has no critic of the rollout's kind, it learns action values itself.

The policy asks for mirror streams (``mirrors_self_play``): in self-play games the rollout also
records the opponent seat, where the current strategy plays; the average strategy learns from it.
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np
import torch
from torch import nn

from light_league.algorithms.mappo.policy import build_mlp, rowwise

#: version of the ``policy_meta`` layout
META_VERSION = 1


def regret_matching(regrets: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """(N, A) probabilities proportional to the positive part of ``regrets`` over the legal actions
    of ``mask``; a row without a positive legal regret puts all its mass on its largest one."""
    positive = torch.where(mask, regrets.clamp(min=0.0), torch.zeros_like(regrets))
    total = positive.sum(dim=-1, keepdim=True)
    best = torch.where(mask, regrets, torch.full_like(regrets, -torch.inf)).argmax(dim=-1)
    greedy = torch.nn.functional.one_hot(best, regrets.shape[-1]).to(regrets.dtype)
    return torch.where(total > 0, positive / total.clamp(min=1e-30), greedy)


def uniform_log_probs(mask: np.ndarray) -> np.ndarray:
    """(N, A) float32 log-probabilities of the uniform policy over each row's legal actions."""
    legal = np.maximum(mask.sum(axis=1, keepdims=True), 1)
    return np.where(mask, -np.log(legal), -np.inf).astype(np.float32)


class RegretPolicy(nn.Module):
    """A regret network (observation and agent position in, one regret per action out)."""

    kind: ClassVar[str] = "regret"
    #: rollouts record the opponent seat of self-play games (:class:`SampleBatch` mirror streams)
    mirrors_self_play: ClassVar[bool] = True

    def __init__(
        self,
        *,
        obs_dim: int,
        state_dim: int,
        num_actions: int,
        team_size: int,
        hidden_size: int,
        layer_N: int,
        use_feature_normalization: bool = True,
        seed: int = 0,
    ) -> None:
        super().__init__()
        if min(obs_dim, state_dim, num_actions, team_size) < 1:
            raise ValueError(
                f"RegretPolicy needs positive sizes, got obs_dim={obs_dim} state_dim={state_dim} "
                f"num_actions={num_actions} team_size={team_size}"
            )
        self.obs_dim, self.state_dim, self.num_actions, self.team_size = (
            obs_dim,
            state_dim,
            num_actions,
            team_size,
        )
        self.arch = {
            "hidden_size": hidden_size,
            "layer_N": layer_N,
            "use_feature_normalization": use_feature_normalization,
        }
        self.net = build_mlp(
            obs_dim + team_size,
            num_actions,
            hidden_size=hidden_size,
            layer_N=layer_N,
            use_relu=True,
            use_feature_normalization=use_feature_normalization,
            use_orthogonal=True,
            out_gain=0.01,
            generator=torch.Generator().manual_seed(seed),
        )
        self._eye: torch.Tensor
        self.register_buffer("_eye", torch.eye(team_size), persistent=False)

    @property
    def device(self) -> torch.device:
        return self._eye.device

    # ------------------------------------------------------------------ torch API (the learner)
    def with_id(self, x: torch.Tensor, agent_idx: torch.Tensor) -> torch.Tensor:
        """``x`` with the agent's one-hot position in its team appended."""
        return torch.cat([x, self._eye[agent_idx]], dim=-1)

    def regrets(self, obs: torch.Tensor, agent_idx: torch.Tensor) -> torch.Tensor:
        """(N, A) the network's regrets (each distinct input computed once)."""
        return rowwise(self.net, self.with_id(obs, agent_idx))

    def strategy(self, obs: torch.Tensor, mask: torch.Tensor, agent_idx: torch.Tensor) -> torch.Tensor:
        """(N, A) the current strategy: regret matching on the network's regrets."""
        return regret_matching(self.regrets(obs, agent_idx), mask)

    # ------------------------------------------------------------------ Policy API (numpy)
    @torch.no_grad()
    def log_probs(self, obs: np.ndarray, mask: np.ndarray, agent_idx: np.ndarray) -> np.ndarray:
        o = torch.from_numpy(np.ascontiguousarray(obs, dtype=np.float32)).to(self.device)
        m = torch.from_numpy(np.ascontiguousarray(mask, dtype=bool)).to(self.device)
        idx = torch.from_numpy(np.asarray(agent_idx, dtype=np.int64)).to(self.device)
        probs = self.strategy(o, m, idx).cpu().numpy()
        with np.errstate(divide="ignore"):
            return np.where(mask, np.log(probs), -np.inf).astype(np.float32)

    def evaluate(
        self, obs: np.ndarray, state: np.ndarray, mask: np.ndarray, agent_idx: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray]:
        """The sampling policy of the learner's own seat (uniform over the legal actions), values 0."""
        return uniform_log_probs(np.asarray(mask, dtype=bool)), np.zeros(len(obs), dtype=np.float32)

    def values(self, state: np.ndarray, agent_idx: np.ndarray) -> np.ndarray:
        return np.zeros(len(state), dtype=np.float32)

    # ------------------------------------------------------------------ weights
    def get_weights(self) -> dict[str, np.ndarray]:
        return {k: v.detach().cpu().numpy().copy() for k, v in self.state_dict().items()}

    def set_weights(self, weights: dict[str, Any]) -> None:
        """Load numpy (or tensor) weights; a missing, extra or misshaped entry is a ValueError."""
        own = self.state_dict()
        if set(own) != set(weights):
            raise ValueError(
                f"weights do not fit this regret policy: missing {sorted(set(own) - set(weights))}, "
                f"unexpected {sorted(set(weights) - set(own))}"
            )
        loaded = {}
        for k, ref in own.items():
            t = torch.as_tensor(np.asarray(weights[k]))
            if t.shape != ref.shape:
                raise ValueError(
                    f"regret policy weight {k} has shape {tuple(t.shape)}, expected {tuple(ref.shape)}"
                )
            loaded[k] = t.to(dtype=ref.dtype, device=ref.device)
        self.load_state_dict(loaded)

    def policy_meta(self, env: str) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "version": META_VERSION,
            "env": env,
            "obs_dim": self.obs_dim,
            "state_dim": self.state_dim,
            "num_actions": self.num_actions,
            "team_size": self.team_size,
            "architecture": dict(self.arch),
        }

    @classmethod
    def from_meta(cls, meta: dict[str, Any], weights: dict[str, Any] | None = None) -> RegretPolicy:
        """Rebuild a policy from ``policy_meta()`` (and load ``weights`` when given)."""
        missing = [
            k for k in ("obs_dim", "state_dim", "num_actions", "team_size", "architecture") if k not in meta
        ]
        if missing:
            raise ValueError(f"regret policy meta lacks {missing}; write it with RegretLearner.policy_meta()")
        arch = meta["architecture"]
        policy = cls(
            obs_dim=int(meta["obs_dim"]),
            state_dim=int(meta["state_dim"]),
            num_actions=int(meta["num_actions"]),
            team_size=int(meta["team_size"]),
            hidden_size=int(arch["hidden_size"]),
            layer_N=int(arch["layer_N"]),
            use_feature_normalization=bool(arch.get("use_feature_normalization", True)),
        )
        if weights is not None:
            policy.set_weights(weights)
        return policy
