"""Many frozen policies of one architecture in one forward pass.

A league's opponents are mostly frozen snapshots of the same network. Calling each one on its
own rows costs one round of small torch calls per distinct opponent per step, so a rollout step
grows with the population. A :class:`PolicyBank` stacks the actor parameters of frozen
:class:`~light_league.algorithms.mappo.policy.MAPPOPolicy` s that share an architecture
(``(P, in, out)`` weights, ``(P, out)`` biases and LayerNorm affines) and evaluates rows of any
of them together: rows are grouped by policy into padded chunks of one policy each, and every
layer runs as batched matrix products over the chunks (the first chunk of every policy reads the
stacked parameters in place; further chunks of busy policies gather theirs). The arithmetic is the policy's
own (same layers, same masking, same log-softmax, LayerNorm as normalise-then-multiply-add, as
the fused CPU kernel does it), so the log-probabilities equal the per-policy ones to float32
rounding: mostly bit for bit, at most an ulp or so apart where the matrix-product kernel picks
another blocking for a padded chunk than for the policy's own rows (the test asks for 1e-6).

:class:`BankedPolicy` is one member of a bank; it satisfies the ``Policy`` protocol on its own,
and :func:`policy_log_probs` (what the episode loop calls) groups the rows of all members of a
bank into one call.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import torch
from torch import nn

from light_league.algorithms.base import Policy
from light_league.algorithms.mappo.policy import ILLEGAL_LOGIT, MAPPOPolicy


def bank_signature(policy: MAPPOPolicy) -> tuple[Any, ...]:
    """Policies with equal signatures can share a bank."""
    return (
        policy.obs_dim,
        policy.num_actions,
        policy.team_size,
        tuple(sorted((k, repr(v)) for k, v in policy.arch.items())),
    )


class PolicyBank:
    """The actors of ``policies`` (same :func:`bank_signature`), stacked along a leading axis."""

    def __init__(self, policies: Sequence[MAPPOPolicy]) -> None:
        if not policies:
            raise ValueError("a PolicyBank needs at least one policy")
        first = policies[0]
        sig = bank_signature(first)
        for p in policies[1:]:
            if bank_signature(p) != sig:
                raise ValueError(
                    f"PolicyBank policies must share an architecture: {bank_signature(p)} != {sig}"
                )
        self.size = len(policies)
        self.num_actions = first.num_actions
        self.team_size = first.team_size
        self.add_agent_id = bool(first.arch["add_agent_id"])
        self._eye = torch.eye(first.team_size)
        #: layers as (kind, stacked parameters): "linear" (W^T (P, in, out), b (P, out)),
        #: "layernorm" (w (P, d), b (P, d), eps), "relu", "tanh"
        self._layers: list[tuple[str, tuple[Any, ...]]] = []
        self.params = sum(m.weight.numel() for m in first.actor if isinstance(m, nn.Linear))
        with torch.no_grad():
            for i, module in enumerate(first.actor):
                if isinstance(module, (nn.Linear, nn.LayerNorm)):
                    w = torch.stack([_param(p.actor[i], "weight") for p in policies])
                    b = torch.stack([_param(p.actor[i], "bias") for p in policies])
                if isinstance(module, nn.Linear):
                    self._layers.append(("linear", (w.transpose(1, 2).contiguous(), b)))
                elif isinstance(module, nn.LayerNorm):
                    self._layers.append(("layernorm", (w, b, module.normalized_shape, module.eps)))
                elif isinstance(module, nn.ReLU):
                    self._layers.append(("relu", ()))
                elif isinstance(module, nn.Tanh):
                    self._layers.append(("tanh", ()))
                else:
                    raise TypeError(f"PolicyBank cannot stack actor layer {type(module).__name__}")

    @torch.no_grad()
    def log_probs(
        self, slots: np.ndarray, obs: np.ndarray, mask: np.ndarray, agent_idx: np.ndarray
    ) -> np.ndarray:
        """(N, A) log-probabilities of row ``n`` under policy ``slots[n]`` (``-inf`` where masked).

        Rows are grouped by policy into chunks of one policy each, padded with zero rows, and
        every layer is one batched matrix product per block of chunks (:class:`_Layout`).
        """
        slots = np.asarray(slots, dtype=np.int64)
        x = torch.from_numpy(np.ascontiguousarray(obs, dtype=np.float32))
        if self.add_agent_id:
            x = torch.cat([x, self._eye[torch.from_numpy(np.asarray(agent_idx, dtype=np.int64))]], dim=-1)
        layout = _Layout(slots, self.size, self.params)
        logits = x.new_empty((slots.size, self.num_actions))
        for rows, chunk, pos, chunk_slot in layout.blocks():
            sel = torch.from_numpy(rows)
            where = torch.from_numpy(chunk), torch.from_numpy(pos)
            h = x.new_zeros((self.size if chunk_slot is None else chunk_slot.size, layout.size, x.shape[1]))
            h[where] = x[sel]
            logits[sel] = self._forward(h, None if chunk_slot is None else torch.from_numpy(chunk_slot))[
                where
            ]
        m = torch.from_numpy(np.ascontiguousarray(mask, dtype=bool))
        logp = torch.log_softmax(logits.masked_fill(~m, ILLEGAL_LOGIT), dim=-1)
        return logp.masked_fill(~m, float("-inf")).numpy()

    def _forward(self, h: torch.Tensor, pick: torch.Tensor | None) -> torch.Tensor:
        """The actor on chunks ``h`` (C, size, in); chunk ``c`` is policy ``pick[c]`` (or ``c``)."""
        for kind, params in self._layers:
            if kind in ("linear", "layernorm"):
                w, b = params[0], params[1]
                if pick is not None:
                    w, b = w.index_select(0, pick), b.index_select(0, pick)
            if kind == "linear":
                h = torch.baddbmm(b.unsqueeze(1), h, w)
            elif kind == "layernorm":
                # the fused kernel's arithmetic: normalise, then one multiply-add with the affine
                _, mean, rstd = torch.native_layer_norm(h, params[2], None, None, params[3])
                h = torch.addcmul(b.unsqueeze(1), (h - mean) * rstd, w.unsqueeze(1))
            elif kind == "relu":
                h = torch.relu(h)
            else:
                h = torch.tanh(h)
        return h


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


class BankedPolicy:
    """Member ``slot`` of ``bank`` (``policy`` itself): rows :func:`policy_log_probs` batches."""

    def __init__(self, bank: PolicyBank, slot: int, policy: MAPPOPolicy) -> None:
        self.bank = bank
        self.slot = slot
        self.policy = policy

    def log_probs(self, obs: np.ndarray, mask: np.ndarray, agent_idx: np.ndarray) -> np.ndarray:
        return self.policy.log_probs(obs, mask, agent_idx)


#: a bank is used when at least this many of its members have rows in a call; below, each
#: member's own policy is cheaper (a bank call costs about two policy calls on its own)
MIN_BANKED = 3


def build_banks(policies: dict[str, MAPPOPolicy]) -> dict[str, BankedPolicy]:
    """One bank per architecture over ``policies``; returns each id's :class:`BankedPolicy`."""
    groups: dict[tuple[Any, ...], list[str]] = {}
    for pid, policy in policies.items():
        groups.setdefault(bank_signature(policy), []).append(pid)
    out: dict[str, BankedPolicy] = {}
    for ids in groups.values():
        bank = PolicyBank([policies[pid] for pid in ids])
        out.update({pid: BankedPolicy(bank, slot, policies[pid]) for slot, pid in enumerate(ids)})
    return out


def policy_log_probs(
    policies: Sequence[Policy | None],
    which: np.ndarray,
    obs: np.ndarray,
    mask: np.ndarray,
    agent_idx: np.ndarray,
) -> np.ndarray:
    """(N, A) float32 log-probabilities of row ``n`` under ``policies[which[n]]``.

    Rows of plain policies go through their policy, one call per policy; rows of all members of
    one :class:`PolicyBank` go through the bank in one call (when :data:`MIN_BANKED` or more of
    them are present; else through their own policies).
    """
    out = np.empty(mask.shape, dtype=np.float32)
    present = np.unique(which).tolist()
    banks: dict[int, tuple[PolicyBank, list[int]]] = {}
    for p in present:
        policy = policies[p]
        if policy is None:
            raise ValueError(f"no policy for index {p} (rows reference a policy that was not passed)")
        if isinstance(policy, BankedPolicy):
            banks.setdefault(id(policy.bank), (policy.bank, []))[1].append(p)
            continue
        rows = np.flatnonzero(which == p)
        out[rows] = policy.log_probs(obs[rows], mask[rows], agent_idx[rows])
    for bank, members in banks.values():
        if len(members) < MIN_BANKED:
            for p in members:
                rows = np.flatnonzero(which == p)
                out[rows] = _policy(policies[p]).log_probs(obs[rows], mask[rows], agent_idx[rows])
            continue
        slot_of = np.full(len(policies), -1, dtype=np.int64)
        for p in members:
            member = policies[p]
            assert isinstance(member, BankedPolicy)
            slot_of[p] = member.slot
        rows = np.flatnonzero(slot_of[which] >= 0)
        out[rows] = bank.log_probs(slot_of[which[rows]], obs[rows], mask[rows], agent_idx[rows])
    return out


def _policy(member: Policy | None) -> Policy:
    assert member is not None
    return member
