"""MAPPO's policy bank: many frozen MAPPO actors of one architecture in one forward pass.

A league's opponents are mostly frozen snapshots of the same network. Calling each one on its
own rows costs one round of small torch calls per distinct opponent per step, so a rollout step
grows with the population. A :class:`MAPPOBank` (what
:meth:`~light_league.algorithms.mappo.policy.MAPPOPolicy.stack` builds: MAPPO's side of the bank
hook, :func:`light_league.algorithms.base.bank_signature`) stacks the actor parameters of frozen
:class:`~light_league.algorithms.mappo.policy.MAPPOPolicy` s that share an architecture
(``(P, in, out)`` weights, ``(P, out)`` biases and LayerNorm affines) and evaluates rows of any
of them together: rows are grouped by policy into padded chunks of one policy each, and every
layer runs as batched matrix products over the chunks (the first chunk of every policy reads the
stacked parameters in place; further chunks of busy policies gather theirs). The arithmetic is the policy's
own (same layers, same masking, same log-softmax, LayerNorm as normalise-then-multiply-add, as
the fused CPU kernel does it), so the log-probabilities equal the per-policy ones to float32
rounding: mostly bit for bit, at most an ulp or so apart where the matrix-product kernel picks
another blocking for a padded chunk than for the policy's own rows (the test asks for 1e-6).

Recurrent actors (:class:`~light_league.algorithms.mappo.policy.RecurrentNet`) stack too: their
GRU is one more layer, whose gates are two batched matrix products (input and hidden state) and
the GRU cell's arithmetic in torch's own order; each row's hidden state travels through the same
chunks as its observation (:meth:`MAPPOBank.step_log_probs`).

The rollout side (:mod:`light_league.rollout.policy_bank`) groups the frozen policies of a worker
by their bank signature and hands each bank the rows of all its members in one call; it knows no
MAPPO. This module imports nothing of the policy's: the policy hands its actor's layers over
(``actor_layers()``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

import numpy as np
import torch
from torch import nn

from light_league.algorithms.base import ILLEGAL_LOGIT


class Stackable(Protocol):
    """What a bank reads of a MAPPO policy."""

    num_actions: int
    team_size: int
    arch: dict[str, Any]

    @property
    def hidden_dim(self) -> int: ...

    def bank_signature(self) -> tuple[Any, ...]: ...

    def actor_layers(self) -> list[nn.Module]: ...


class MAPPOBank:
    """The actors of ``policies`` (same ``bank_signature()``), stacked along a leading axis."""

    def __init__(self, policies: Sequence[Stackable]) -> None:
        if not policies:
            raise ValueError("a MAPPOBank needs at least one policy")
        first = policies[0]
        sig = first.bank_signature()
        for p in policies[1:]:
            if p.bank_signature() != sig:
                raise ValueError(
                    f"MAPPOBank policies must share an architecture: {p.bank_signature()} != {sig}"
                )
        self.size = len(policies)
        self.num_actions = first.num_actions
        self.team_size = first.team_size
        self.add_agent_id = bool(first.arch["add_agent_id"])
        self._eye = torch.eye(first.team_size)
        #: width of a member's hidden state (its actor's GRU state first); 0 when feed-forward
        self.hidden_dim = first.hidden_dim
        #: layers as (kind, stacked parameters, other arguments): "linear" (W^T (P, in, out),
        #: b (P, out)), "layernorm" (w (P, d), b (P, d); shape, eps), "relu", "tanh",
        #: "gru" (W_ih^T (P, in, 3H), W_hh^T (P, H, 3H), b_ih (P, 3H), b_hh (P, 3H))
        self._layers: list[tuple[str, tuple[torch.Tensor, ...], tuple[Any, ...]]] = []
        modules = [p.actor_layers() for p in policies]
        self.params = sum(
            w.numel()
            for m in modules[0]
            if isinstance(m, (nn.Linear, nn.GRU))
            for name, w in m.named_parameters()
            if name.startswith("weight")
        )
        with torch.no_grad():
            for i, module in enumerate(modules[0]):
                if isinstance(module, (nn.Linear, nn.LayerNorm)):
                    w = torch.stack([_param(m[i], "weight") for m in modules])
                    b = torch.stack([_param(m[i], "bias") for m in modules])
                if isinstance(module, nn.GRU):
                    stacked = [
                        torch.stack([_param(m[i], name) for m in modules])
                        for name in ("weight_ih_l0", "weight_hh_l0", "bias_ih_l0", "bias_hh_l0")
                    ]
                    w_ih, w_hh, b_ih, b_hh = stacked
                    gru = (w_ih.transpose(1, 2).contiguous(), w_hh.transpose(1, 2).contiguous(), b_ih, b_hh)
                    self._layers.append(("gru", gru, ()))
                elif isinstance(module, nn.Linear):
                    self._layers.append(("linear", (w.transpose(1, 2).contiguous(), b), ()))
                elif isinstance(module, nn.LayerNorm):
                    self._layers.append(("layernorm", (w, b), (module.normalized_shape, module.eps)))
                elif isinstance(module, nn.ReLU):
                    self._layers.append(("relu", (), ()))
                elif isinstance(module, nn.Tanh):
                    self._layers.append(("tanh", (), ()))
                else:
                    raise TypeError(f"MAPPOBank cannot stack actor layer {type(module).__name__}")

    @torch.no_grad()
    def log_probs(
        self, slots: np.ndarray, obs: np.ndarray, mask: np.ndarray, agent_idx: np.ndarray
    ) -> np.ndarray:
        """(N, A) log-probabilities of row ``n`` under policy ``slots[n]`` (``-inf`` where masked).

        Rows are grouped by policy into chunks of one policy each, padded with zero rows, and
        every layer is one batched matrix product per block of chunks (:class:`_Layout`).
        """
        if self.hidden_dim:
            raise TypeError(
                "this MAPPOBank's members are recurrent: call step_log_probs with their hidden states"
            )
        return self._run(slots, obs, mask, agent_idx, None)[0]

    @torch.no_grad()
    def step_log_probs(
        self, slots: np.ndarray, obs: np.ndarray, mask: np.ndarray, agent_idx: np.ndarray, hidden: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray]:
        """Recurrent members: :meth:`log_probs` from each row's hidden state (N, hidden_dim), and
        the next hidden states (the critic's part, the second half, passes through unchanged)."""
        if not self.hidden_dim:
            raise TypeError("this MAPPOBank's members are feed-forward: call log_probs")
        h = np.ascontiguousarray(hidden, dtype=np.float32)
        if h.shape != (len(obs), self.hidden_dim):
            raise ValueError(f"hidden must have shape ({len(obs)}, {self.hidden_dim}), got {h.shape}")
        logp, actor = self._run(slots, obs, mask, agent_idx, torch.from_numpy(h[:, : self.hidden_dim // 2]))
        nxt = h.copy()
        assert actor is not None
        nxt[:, : self.hidden_dim // 2] = actor.numpy()
        return logp, nxt

    def _run(
        self,
        slots: np.ndarray,
        obs: np.ndarray,
        mask: np.ndarray,
        agent_idx: np.ndarray,
        hidden: torch.Tensor | None,
    ) -> tuple[np.ndarray, torch.Tensor | None]:
        """Log-probabilities and (recurrent) the actors' next GRU states of every row."""
        slots = np.asarray(slots, dtype=np.int64)
        x = torch.from_numpy(np.ascontiguousarray(obs, dtype=np.float32))
        if self.add_agent_id:
            x = torch.cat([x, self._eye[torch.from_numpy(np.asarray(agent_idx, dtype=np.int64))]], dim=-1)
        layout = _Layout(slots, self.size, self.params)
        logits = x.new_empty((slots.size, self.num_actions))
        after = None if hidden is None else torch.empty_like(hidden)
        for rows, chunk, pos, chunk_slot in layout.blocks():
            sel = torch.from_numpy(rows)
            where = torch.from_numpy(chunk), torch.from_numpy(pos)
            chunks = self.size if chunk_slot is None else chunk_slot.size
            h = x.new_zeros((chunks, layout.size, x.shape[1]))
            h[where] = x[sel]
            state = None
            if hidden is not None:
                state = hidden.new_zeros((chunks, layout.size, hidden.shape[1]))
                state[where] = hidden[sel]
            out, state = self._forward(h, None if chunk_slot is None else torch.from_numpy(chunk_slot), state)
            logits[sel] = out[where]
            if after is not None and state is not None:
                after[sel] = state[where]
        m = torch.from_numpy(np.ascontiguousarray(mask, dtype=bool))
        logp = torch.log_softmax(logits.masked_fill(~m, ILLEGAL_LOGIT), dim=-1)
        return logp.masked_fill(~m, float("-inf")).numpy(), after

    def _forward(
        self, h: torch.Tensor, pick: torch.Tensor | None, state: torch.Tensor | None
    ) -> tuple[torch.Tensor, torch.Tensor | None]:
        """The actor on chunks ``h`` (C, size, in); chunk ``c`` is policy ``pick[c]`` (or ``c``);
        ``state`` (C, size, H): the GRU states before this step (recurrent actors)."""
        for kind, params, other in self._layers:
            if pick is not None:
                params = tuple(p.index_select(0, pick) for p in params)
            if kind == "linear":
                h = torch.baddbmm(params[1].unsqueeze(1), h, params[0])
            elif kind == "layernorm":
                # the fused kernel's arithmetic: normalise, then one multiply-add with the affine
                _, mean, rstd = torch.native_layer_norm(h, other[0], None, None, other[1])
                h = torch.addcmul(params[1].unsqueeze(1), (h - mean) * rstd, params[0].unsqueeze(1))
            elif kind == "gru":
                assert state is not None
                h = state = _gru_cell(h, state, *params)
            elif kind == "relu":
                h = torch.relu(h)
            else:
                h = torch.tanh(h)
        return h, state


def _gru_cell(
    x: torch.Tensor,
    h: torch.Tensor,
    w_ih: torch.Tensor,
    w_hh: torch.Tensor,
    b_ih: torch.Tensor,
    b_hh: torch.Tensor,
) -> torch.Tensor:
    """One GRU step on chunks (C, size, ...) with stacked parameters, with the arithmetic of
    torch's ``GRUCell``: ``r, z = sigmoid(hh + ih)``, ``n = tanh(ih_n + hh_n * r)``,
    ``h' = (h - n) z + n`` (the reset and update gates in one sigmoid)."""
    size = h.shape[-1]
    ih = torch.baddbmm(b_ih.unsqueeze(1), x, w_ih)
    hh = torch.baddbmm(b_hh.unsqueeze(1), h, w_hh)
    gates = (hh[..., : 2 * size] + ih[..., : 2 * size]).sigmoid()
    new = (ih[..., 2 * size :] + hh[..., 2 * size :] * gates[..., :size]).tanh()
    return (h - new) * gates[..., size:] + new


#: the layout's cost model, seconds per unit (rough, from the 2-core development machine): a
#: parameter read by a matrix product, a multiply-add, a parameter copied by a gather, and the
#: fixed cost of a block of chunks (its dozen torch calls)
READ_S, MAC_S, GATHER_S, BLOCK_S = 0.4e-9, 0.07e-9, 0.5e-9, 150e-6

#: the smallest chunk: a one-row matrix product takes another kernel path (a matrix-vector
#: product) whose sums round differently from the policy's own product
MIN_CHUNK = 2

Block = tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray | None]


class _Layout:
    """Where each row goes, in chunks of ``size`` rows of one policy each, in up to two blocks:

    * the **bank block** (when ``in_bank`` > 0): chunk ``p`` holds the first ``size`` rows of
      slot ``p``; the stacked parameters are used in place, nothing is copied, but every
      policy of the bank is computed;
    * the **extra block**: the other rows, in chunks of one slot each, whose parameters are
      gathered.

    ``size`` (a power of two, at least :data:`MIN_CHUNK`) and whether there is a bank block minimise the cost model
    (:data:`READ_S` ...): a bank block pays when rows spread over most of a large bank, gathered
    chunks when a few policies hold the rows.
    """

    def __init__(
        self, slots: np.ndarray, bank_size: int, params: int, *, choice: tuple[int, int] | None = None
    ) -> None:
        """``choice``: ``(size, in_bank)`` instead of the cheapest (tests use it)."""
        self.slots = slots
        n = slots.size
        counts = np.bincount(slots, minlength=bank_size)
        largest = max(int(counts.max()) if n else 1, 1)
        best = (float("inf"), 1, 0) if choice is None else (0.0, *choice)
        size = largest if choice is not None else MIN_CHUNK
        while choice is None:
            item = params * (READ_S + size * MAC_S)  # one chunk through the layers
            for in_bank in (0, size):
                extra = int((-(-np.maximum(counts - in_bank, 0) // size)).sum())
                cost = (bank_size * item + BLOCK_S) if in_bank else 0.0
                if extra:
                    cost += extra * (item + params * GATHER_S) + BLOCK_S
                if cost < best[0]:
                    best = (cost, size, in_bank)
            if size >= largest:
                break
            size *= 2
        _, self.size, self.in_bank = best
        self.counts = counts
        order = np.argsort(slots, kind="stable")
        start = np.concatenate([[0], np.cumsum(counts)[:-1]])
        self.rank = np.empty(n, dtype=np.int64)
        self.rank[order] = np.arange(n) - start[slots[order]]

    def blocks(self) -> list[Block]:
        """``(rows, chunk, position, chunk_slot)`` per block; ``chunk_slot`` None for the bank block."""
        out: list[Block] = []
        in_bank = self.rank < self.in_bank
        if in_bank.any():
            rows = np.flatnonzero(in_bank)
            out.append((rows, self.slots[rows], self.rank[rows], None))
        if not in_bank.all():
            rows = np.flatnonzero(~in_bank)
            over = self.rank[rows] - self.in_bank
            per_slot = -(-np.maximum(self.counts - self.in_bank, 0) // self.size)
            first = np.concatenate([[0], np.cumsum(per_slot)[:-1]])
            chunk = first[self.slots[rows]] + over // self.size
            out.append((rows, chunk, over % self.size, np.repeat(np.arange(self.counts.size), per_slot)))
        return out


def _param(module: nn.Module, name: str) -> torch.Tensor:
    value = getattr(module, name)
    assert isinstance(value, torch.Tensor)
    return value.detach()
