"""MAPPO's policy: a decentralised actor and a centralised critic, shared within a team.

Both networks follow the reference MLP (``onpolicy/algorithms/utils/mlp.py``): an optional
LayerNorm on the raw input, a first hidden layer and ``layer_N`` more, each
``Linear -> activation -> LayerNorm``. The actor's head is a linear layer initialised with a
small gain (0.01) so the initial policy is near uniform over legal actions; the critic's head
outputs one value, in normalised units when ``use_valuenorm`` is on (the :class:`ValueNorm`
buffers are part of the policy's weights, so a rollout worker reports values in return units).

The actor sees the agent's observation, the critic its agent-specific global state; with
``add_agent_id`` both get the one-hot position of the agent in its team appended.

**Recurrent** (``recurrent_cell="gru"``, the reference's rMAPPO: ``R_Actor`` / ``R_Critic`` with
``onpolicy/algorithms/utils/rnn.py``): actor and critic each put a one-layer GRU and a LayerNorm
between their MLP and their head (:class:`RecurrentNet`). An agent's hidden state is one float32
vector, the actor's GRU state then the critic's (``hidden_dim = 2 * recurrent_hidden_size``); the
numpy API takes it and returns the next one (``step_log_probs``, ``step_evaluate``,
``step_values``), and a zero vector starts an episode. The memoryless numpy API (``log_probs``,
``evaluate``, ``values``) refuses a recurrent policy: it would silently forget.

Illegal actions get logit ``-1e10`` inside (finite, so gradients stay clean); the numpy API
returns ``-inf`` log-probabilities for them, as the :class:`~light_league.algorithms.base.Policy`
protocol asks.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Any, cast

import numpy as np
import torch
from torch import nn

from light_league.algorithms.base import ILLEGAL_LOGIT
from light_league.algorithms.mappo.bank import MAPPOBank
from light_league.algorithms.mappo.meta_sizes import checked_architecture
from light_league.algorithms.mappo.valuenorm import ValueNorm

__all__ = ["ILLEGAL_LOGIT", "MAPPOPolicy", "RecurrentNet"]

#: keys of ``policy_meta()["architecture"]`` (the recurrent ones only in a recurrent policy's)
ARCH_KEYS = (
    "hidden_size",
    "layer_N",
    "use_relu",
    "use_feature_normalization",
    "add_agent_id",
    "use_valuenorm",
    "value_norm_beta",
    "value_norm_epsilon",
    "recurrent_cell",
    "recurrent_hidden_size",
)
#: recurrent cells a MAPPO policy builds
RECURRENT_CELLS = ("none", "gru")
#: a batch shorter than this goes through a network as it is (:func:`rowwise`): below it,
#: finding the distinct rows costs about what it saves
ROWWISE_MIN_ROWS = 1024


def distinct_rows(x: torch.Tensor, min_rows: int = 64) -> tuple[torch.Tensor, torch.Tensor] | None:
    """``(rows, inverse)`` with ``rows[inverse]`` equal to the (N, D) ``x`` bit for bit, when
    ``x`` has at most half as many distinct rows as rows; None otherwise (or when ``x`` has
    fewer than ``min_rows`` rows).

    Each row's float32 bit pattern, in two 16-bit halves, is weighted by a fixed random integer
    vector and summed (exact int64 arithmetic, no overflow for D up to 4096); rows with equal
    sums are grouped and checked equal, so a collision only costs the shortcut, never a wrong
    row. Poker batches repeat a few information states thousands of times; a continuous
    observation almost never repeats and pays one pass over the batch to find that out."""
    n = x.shape[0]
    if x.dim() != 2 or n < min_rows or x.shape[1] > 4096 or x.dtype != torch.float32:
        return None
    bits = x.contiguous().view(torch.int32).to(torch.int64)
    halves = torch.cat([bits & 0xFFFF, (bits >> 16) & 0xFFFF], dim=1)
    key = (halves * _row_weights(halves.shape[1], x.device)).sum(dim=1)
    keys, inverse = torch.unique(key, return_inverse=True)
    if 2 * keys.numel() > n:
        return None
    first = torch.full((keys.numel(),), n, dtype=torch.int64, device=x.device)
    first.scatter_reduce_(0, inverse, torch.arange(n, device=x.device), reduce="amin")
    rows = x[first]
    if not torch.equal(rows[inverse], x):
        return None
    return rows, inverse


@functools.lru_cache(maxsize=64)
def _row_weights(width: int, device: torch.device) -> torch.Tensor:
    gen = torch.Generator().manual_seed(width)
    return torch.randint(1, 2**31, (width,), generator=gen, dtype=torch.int64).to(device)


def rowwise(net: nn.Module, x: torch.Tensor) -> torch.Tensor:
    """``net(x)`` for a feed-forward ``net`` that treats each row on its own (Linear, LayerNorm,
    activations: the MLPs here), computing each distinct row of ``x`` once. The result and its
    gradients are those of ``net(x)``: a repeated row's output is its distinct row's, and the
    gradient of the indexing adds the repeats' gradients up."""
    found = distinct_rows(x, ROWWISE_MIN_ROWS)
    if found is None:
        return net(x)
    rows, inverse = found
    return net(rows)[inverse]


def _init_linear(layer: nn.Linear, gain: float, orthogonal: bool, generator: torch.Generator) -> nn.Linear:
    if orthogonal:
        nn.init.orthogonal_(layer.weight, gain=gain, generator=generator)
    else:
        nn.init.xavier_uniform_(layer.weight, gain=gain, generator=generator)
    nn.init.zeros_(layer.bias)
    return layer


def _mlp_base(
    in_dim: int,
    *,
    hidden_size: int,
    layer_N: int,
    use_relu: bool,
    use_feature_normalization: bool,
    use_orthogonal: bool,
    generator: torch.Generator,
) -> list[nn.Module]:
    """Reference MLP base: [LayerNorm] (Linear act LayerNorm) x (1 + layer_N)."""
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
    return layers


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
    recurrent_hidden_size: int = 0,
) -> nn.Module:
    """Reference MLP base plus a linear head: [LayerNorm] (Linear act LayerNorm) x (1 + layer_N), Linear;
    with ``recurrent_hidden_size`` > 0, a :class:`RecurrentNet` (a GRU and a LayerNorm before the head)."""
    layers = _mlp_base(
        in_dim,
        hidden_size=hidden_size,
        layer_N=layer_N,
        use_relu=use_relu,
        use_feature_normalization=use_feature_normalization,
        use_orthogonal=use_orthogonal,
        generator=generator,
    )
    if recurrent_hidden_size > 0:
        return RecurrentNet(
            nn.Sequential(*layers),
            hidden_size,
            recurrent_hidden_size,
            out_dim,
            out_gain=out_gain,
            orthogonal=use_orthogonal,
            generator=generator,
        )
    layers.append(_init_linear(nn.Linear(hidden_size, out_dim), out_gain, use_orthogonal, generator))
    return nn.Sequential(*layers)


class RecurrentNet(nn.Module):
    """MLP base, one GRU layer, LayerNorm, linear head (the reference's ``RNNLayer`` between its
    ``MLPBase`` and its output layer). GRU weights orthogonal (gain 1) or Xavier, biases 0, as the
    reference initialises them.

    ``forward(x, h0)``: ``x`` (L, C, in) sequences of ``C`` streams, ``h0`` (C, H) their hidden
    states before the first step; returns the head's outputs (L, C, out) and the hidden states
    after every step (L, C, H). Every step of a sequence belongs to one episode: the caller
    starts an episode from a zero ``h0`` (the reference multiplies the state by a mask instead).
    """

    def __init__(
        self,
        base: nn.Sequential,
        in_width: int,
        hidden: int,
        out_dim: int,
        *,
        out_gain: float,
        orthogonal: bool,
        generator: torch.Generator,
    ) -> None:
        super().__init__()
        self.base = base
        self.rnn = nn.GRU(in_width, hidden)
        for name, param in self.rnn.named_parameters():
            if name.startswith("bias"):
                nn.init.zeros_(param)
            elif orthogonal:
                nn.init.orthogonal_(param, generator=generator)
            else:
                nn.init.xavier_uniform_(param, generator=generator)
        self.norm = nn.LayerNorm(hidden)
        self.head = _init_linear(nn.Linear(hidden, out_dim), out_gain, orthogonal, generator)

    def forward(self, x: torch.Tensor, h0: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        states, _ = self.rnn(self.base(x), h0.unsqueeze(0).contiguous())
        return self.head(self.norm(states)), states

    def step(self, x: torch.Tensor, h: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """One step of :meth:`forward` for ``N`` rows, ``x`` (N, in) and ``h`` (N, H): the GRU
        cell alone (the same arithmetic as the sequence, bit for bit, without its per-call
        overhead; what a rollout calls every step)."""
        w_ih, w_hh, b_ih, b_hh = self.rnn.all_weights[0]
        state = torch.gru_cell(self.base(x), h, w_ih, w_hh, b_ih, b_hh)
        return self.head(self.norm(state)), state


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
        recurrent_cell: str = "none",
        recurrent_hidden_size: int = 64,
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
        if recurrent_cell not in RECURRENT_CELLS or recurrent_hidden_size < 1:
            raise ValueError(
                f"MAPPOPolicy: recurrent_cell must be one of {RECURRENT_CELLS} and recurrent_hidden_size "
                f"positive, got {recurrent_cell!r} and {recurrent_hidden_size}"
            )
        #: GRU width of actor and critic (0: feed-forward)
        self.recurrent_size = recurrent_hidden_size if recurrent_cell != "none" else 0
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
        if self.recurrent_size:
            self.arch.update(recurrent_cell=recurrent_cell, recurrent_hidden_size=recurrent_hidden_size)
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
            recurrent_hidden_size=self.recurrent_size,
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
        arch = checked_architecture(meta, ARCH_KEYS, weights)  # before anything is built from the meta
        policy = cls(
            obs_dim=int(meta["obs_dim"]),
            state_dim=int(meta["state_dim"]),
            num_actions=int(meta["num_actions"]),
            team_size=int(meta["team_size"]),
            use_orthogonal=weights is None,  # the weights replace the initial ones: skip the QR
            **arch,
        )
        if weights is not None:
            policy.set_weights(weights)
        return policy

    # ------------------------------------------------------------------ torch API (learner)
    def _with_id(self, x: torch.Tensor, agent_idx: torch.Tensor) -> torch.Tensor:
        if not self.arch["add_agent_id"]:
            return x
        ids = self._eye[agent_idx]
        if ids.dim() < x.dim():  # (L, C, d) sequences with one position per stream (C,)
            ids = ids.expand(*x.shape[:-1], ids.shape[-1])
        return torch.cat([x, ids], dim=-1)

    def masked_logits(self, obs: torch.Tensor, mask: torch.Tensor, agent_idx: torch.Tensor) -> torch.Tensor:
        """(N, A) actor logits with illegal actions set to ``ILLEGAL_LOGIT``."""
        logits = rowwise(self.actor, self._with_id(obs, agent_idx))
        return logits.masked_fill(~mask, ILLEGAL_LOGIT)

    def critic_values(self, state: torch.Tensor, agent_idx: torch.Tensor) -> torch.Tensor:
        """(N,) critic output, in normalised units when ``use_valuenorm`` is on."""
        return rowwise(self.critic, self._with_id(state, agent_idx)).squeeze(-1)

    def actor_sequence(
        self, obs: torch.Tensor, mask: torch.Tensor, agent_idx: torch.Tensor, h0: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """Recurrent actor over ``C`` sequences of one episode each: ``obs`` (L, C, obs_dim),
        ``mask`` (L, C, A), ``agent_idx`` (C,), ``h0`` (C, H) the actor's GRU states before the
        first step. Returns masked logits (L, C, A) and the GRU states after each step (L, C, H)."""
        logits, states = self.actor(self._with_id(obs, agent_idx), h0)
        return logits.masked_fill(~mask, ILLEGAL_LOGIT), states

    def critic_sequence(
        self, state: torch.Tensor, agent_idx: torch.Tensor, h0: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """Recurrent critic over sequences (see :meth:`actor_sequence`): values (L, C) in critic
        units and the GRU states after each step (L, C, H)."""
        values, states = self.critic(self._with_id(state, agent_idx), h0)
        return values.squeeze(-1), states

    def to_return_units(self, values: torch.Tensor) -> torch.Tensor:
        return self.value_norm.denormalize(values) if self.value_norm is not None else values

    def _return_units_np(self, raw: np.ndarray) -> np.ndarray:
        """Critic outputs in return units as float32 numpy (the affine map done in numpy: cheaper
        than several tiny torch ops per rollout step)."""
        if self.value_norm is None:
            return raw
        mean, std = self.value_norm.mean_std()
        return (raw * np.float32(std) + np.float32(mean)).astype(np.float32, copy=False)

    def _values_np(self, state: torch.Tensor, idx: torch.Tensor) -> np.ndarray:
        return self._return_units_np(self.critic_values(state, idx).cpu().numpy())

    def to_critic_units(self, returns: torch.Tensor) -> torch.Tensor:
        return self.value_norm.normalize(returns) if self.value_norm is not None else returns

    # ------------------------------------------------------------------ numpy API (rollouts)
    def _rows(self, x: np.ndarray, width: int, what: str, n: int | None = None) -> torch.Tensor:
        """``x`` as an (N, width) float32 tensor (``n`` rows when given), or a ValueError."""
        arr = np.ascontiguousarray(x, dtype=np.float32)
        if arr.ndim != 2 or arr.shape[1] != width or (n is not None and arr.shape[0] != n):
            raise ValueError(f"{what} must have shape ({'N' if n is None else n}, {width}), got {arr.shape}")
        return torch.from_numpy(arr).to(self.device)

    def _tensors(
        self, x: np.ndarray, agent_idx: np.ndarray, width: int, what: str
    ) -> tuple[torch.Tensor, torch.Tensor]:
        rows = self._rows(x, width, what)
        idx = np.asarray(agent_idx, dtype=np.int64)
        if idx.shape != (rows.shape[0],) or (idx.size and (idx.min() < 0 or idx.max() >= self.team_size)):
            raise ValueError(
                f"agent_idx must be (N,) positions in 0..{self.team_size - 1}, got {idx.tolist()}"
            )
        return rows, torch.from_numpy(idx).to(self.device)

    def _log_probs(self, obs: torch.Tensor, mask: torch.Tensor, idx: torch.Tensor) -> np.ndarray:
        return self._masked_log_probs(self.masked_logits(obs, mask, idx), mask)

    @staticmethod
    def _masked_log_probs(logits: torch.Tensor, mask: torch.Tensor) -> np.ndarray:
        logp = torch.log_softmax(logits, dim=-1)
        return logp.masked_fill(~mask, float("-inf")).cpu().numpy()

    def _mask(self, mask: np.ndarray, n: int, num_actions: int) -> torch.Tensor:
        m = np.ascontiguousarray(mask, dtype=bool)
        if m.shape != (n, num_actions):
            raise ValueError(f"mask must have shape ({n}, {num_actions}), got {m.shape}")
        return torch.from_numpy(m).to(self.device)

    def _memoryless(self, call: str) -> None:
        if self.recurrent_size:
            raise TypeError(
                f"{call} of a recurrent MAPPO policy (recurrent_cell={self.arch['recurrent_cell']}) needs each "
                f"agent's hidden state: call step_{call} with hidden (N, {self.hidden_dim}), zeros where an "
                "episode starts"
            )

    @torch.no_grad()
    def log_probs(self, obs: np.ndarray, mask: np.ndarray, agent_idx: np.ndarray) -> np.ndarray:
        self._memoryless("log_probs")
        o, idx = self._tensors(obs, agent_idx, self.obs_dim, "obs")
        return self._log_probs(o, self._mask(mask, o.shape[0], self.num_actions), idx)

    @torch.no_grad()
    def values(self, state: np.ndarray, agent_idx: np.ndarray) -> np.ndarray:
        self._memoryless("values")
        s, idx = self._tensors(state, agent_idx, self.state_dim, "state")
        return self._values_np(s, idx)

    @torch.no_grad()
    def evaluate(
        self, obs: np.ndarray, state: np.ndarray, mask: np.ndarray, agent_idx: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray]:
        self._memoryless("evaluate")
        o, idx = self._tensors(obs, agent_idx, self.obs_dim, "obs")
        s, _ = self._tensors(state, agent_idx, self.state_dim, "state")
        logp = self._log_probs(o, self._mask(mask, o.shape[0], self.num_actions), idx)
        return logp, self._values_np(s, idx)

    # ------------------------------------------------------------------ the bank hook
    def bank_signature(self) -> tuple[Any, ...]:
        """Policies with equal signatures (sizes and architecture) can share a bank."""
        return (
            self.obs_dim,
            self.num_actions,
            self.team_size,
            tuple(sorted((k, repr(v)) for k, v in self.arch.items())),
        )

    @staticmethod
    def stack(policies: Sequence[MAPPOPolicy]) -> MAPPOBank:
        """The frozen ``policies``' actors stacked into one bank (one forward pass for all)."""
        return MAPPOBank(policies)

    def actor_layers(self) -> list[nn.Module]:
        """The actor's modules in the order they apply (a recurrent actor's GRU among them)."""
        actor = self.actor
        if isinstance(actor, RecurrentNet):
            return [*actor.base, actor.rnn, actor.norm, actor.head]
        assert isinstance(actor, nn.Sequential)
        return list(actor)

    # ------------------------------------------------------------------ numpy API, recurrent
    @property
    def hidden_dim(self) -> int:
        """Width of an agent's hidden state (actor's GRU state, then the critic's); 0 when feed-forward."""
        return 2 * self.recurrent_size

    def _hidden(self, hidden: np.ndarray, n: int) -> torch.Tensor:
        if not self.recurrent_size:
            raise TypeError(
                "this MAPPO policy is feed-forward: call log_probs / evaluate / values, no hidden state"
            )
        h = np.ascontiguousarray(hidden, dtype=np.float32)
        if h.shape != (n, self.hidden_dim):
            raise ValueError(f"hidden must have shape ({n}, {self.hidden_dim}), got {h.shape}")
        return torch.from_numpy(h).to(self.device)

    def _actor_step(
        self, obs: np.ndarray, mask: np.ndarray, agent_idx: np.ndarray, hidden: np.ndarray
    ) -> tuple[np.ndarray, torch.Tensor, torch.Tensor, torch.Tensor]:
        """Log-probs of one step, the actor's next GRU state, and the inputs as tensors."""
        o, idx = self._tensors(obs, agent_idx, self.obs_dim, "obs")
        h = self._hidden(hidden, o.shape[0])
        m = self._mask(mask, o.shape[0], self.num_actions)
        logits, state = cast(RecurrentNet, self.actor).step(
            self._with_id(o, idx), h[:, : self.recurrent_size]
        )
        return self._masked_log_probs(logits.masked_fill(~m, ILLEGAL_LOGIT), m), state, idx, h

    def _next_hidden(
        self, actor: torch.Tensor | None, critic: torch.Tensor | None, h: torch.Tensor
    ) -> np.ndarray:
        size = self.recurrent_size
        parts = [h[:, :size] if actor is None else actor, h[:, size:] if critic is None else critic]
        return torch.cat(parts, dim=1).cpu().numpy()

    @torch.no_grad()
    def step_log_probs(
        self, obs: np.ndarray, mask: np.ndarray, agent_idx: np.ndarray, hidden: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray]:
        """One decision of ``N`` agents: ((N, A) log-probs, ``-inf`` where masked; (N, hidden_dim)
        next hidden states). The critic's part of ``hidden`` is passed through unchanged."""
        logp, actor, _, h = self._actor_step(obs, mask, agent_idx, hidden)
        return logp, self._next_hidden(actor, None, h)

    @torch.no_grad()
    def step_evaluate(
        self, obs: np.ndarray, state: np.ndarray, mask: np.ndarray, agent_idx: np.ndarray, hidden: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Actor and critic on one decision: (log-probs, values in return units, next hidden)."""
        logp, actor, idx, h = self._actor_step(obs, mask, agent_idx, hidden)
        values, critic = self._critic_step(self._rows(state, self.state_dim, "state", len(idx)), idx, h)
        return logp, self._return_units_np(values), self._next_hidden(actor, critic, h)

    def _critic_step(
        self, state: torch.Tensor, idx: torch.Tensor, h: torch.Tensor
    ) -> tuple[np.ndarray, torch.Tensor]:
        """Critic outputs (critic units, numpy) of one step and the critic's next GRU state."""
        critic = cast(RecurrentNet, self.critic)
        values, after = critic.step(self._with_id(state, idx), h[:, self.recurrent_size :])
        return values.squeeze(-1).cpu().numpy(), after

    @torch.no_grad()
    def step_values(self, state: np.ndarray, agent_idx: np.ndarray, hidden: np.ndarray) -> np.ndarray:
        """(N,) values in return units of the states after ``hidden`` (a bootstrap: the next
        hidden state is not needed)."""
        s, idx = self._tensors(state, agent_idx, self.state_dim, "state")
        values, _ = self._critic_step(s, idx, self._hidden(hidden, s.shape[0]))
        return self._return_units_np(values)

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
