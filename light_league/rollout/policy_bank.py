"""Many frozen policies of one architecture in one forward pass.

A league's opponents are mostly frozen snapshots of the same network. Calling each one on its
own rows costs one round of small torch calls per distinct opponent per step, so a rollout step
grows with the population. A :class:`PolicyBank` stacks the actor parameters of frozen
:class:`~light_league.algorithms.mappo.policy.MAPPOPolicy` s that share an architecture
(``(P, in, out)`` weights, ``(P, out)`` biases and LayerNorm affines) and evaluates rows of any
of them together: rows are grouped by policy into chunks, each chunk gathers its policy's
parameters, and every layer runs as one batched matrix product. The arithmetic is the policy's
own (same layers, same masking, same log-softmax, LayerNorm as normalise-then-multiply-add, as
the fused CPU kernel does it), so on CPU the log-probabilities equal the per-policy ones bit for
bit (the test asks for 1e-6, which another BLAS or kernel build keeps).

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

        Rows are sorted by policy and cut into equal chunks of one policy each (the last chunk of
        a policy padded with zeros); every layer is then one batched product over the chunks,
        with each chunk's parameters gathered once. A chunk's matrix product is the same
        product the policy computes on its own rows, so the linear layers agree bit for bit.
        """
        slots = np.asarray(slots, dtype=np.int64)
        n = slots.size
        x = torch.from_numpy(np.ascontiguousarray(obs, dtype=np.float32))
        if self.add_agent_id:
            x = torch.cat([x, self._eye[torch.from_numpy(np.asarray(agent_idx, dtype=np.int64))]], dim=-1)
        chunk, pos, chunk_slot = _chunks(slots)
        c = int(pos.max()) + 1 if n else 1
        h = x.new_zeros((chunk_slot.size, c, x.shape[1]))
        row_chunk, row_pos = torch.from_numpy(chunk), torch.from_numpy(pos)
        h[row_chunk, row_pos] = x
        g = torch.from_numpy(chunk_slot)
        for kind, params in self._layers:
            if kind == "linear":
                w, b = params
                h = torch.baddbmm(b[g].unsqueeze(1), h, w[g])
            elif kind == "layernorm":
                w, b, shape, eps = params
                # the fused kernel's arithmetic: normalise, then one multiply-add with the affine
                _, mean, rstd = torch.native_layer_norm(h, shape, None, None, eps)
                h = torch.addcmul(b[g].unsqueeze(1), (h - mean) * rstd, w[g].unsqueeze(1))
            elif kind == "relu":
                h = torch.relu(h)
            else:
                h = torch.tanh(h)
        logits = h[row_chunk, row_pos]
        m = torch.from_numpy(np.ascontiguousarray(mask, dtype=bool))
        logp = torch.log_softmax(logits.masked_fill(~m, ILLEGAL_LOGIT), dim=-1)
        return logp.masked_fill(~m, float("-inf")).numpy()


def _param(module: nn.Module, name: str) -> torch.Tensor:
    value = getattr(module, name)
    assert isinstance(value, torch.Tensor)
    return value.detach()


def _chunks(slots: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Chunk and position of each row, and each chunk's slot: rows of one slot fill its chunks.

    The chunk size is the mean number of rows per slot present (at least 1), so padding is at
    most one partial chunk per slot.
    """
    n = slots.size
    if n == 0:
        return np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0, np.int64)
    order = np.argsort(slots, kind="stable")
    present, start, counts = np.unique(slots[order], return_index=True, return_counts=True)
    size = max(1, -(-n // present.size))
    group = np.repeat(np.arange(present.size), counts)
    rank = np.arange(n) - start[group]
    per_slot = -(-counts // size)
    first_chunk = np.concatenate([[0], np.cumsum(per_slot)[:-1]])
    chunk = np.empty(n, dtype=np.int64)
    pos = np.empty(n, dtype=np.int64)
    chunk[order] = first_chunk[group] + rank // size
    pos[order] = rank % size
    return chunk, pos, np.repeat(present, per_slot)


class BankedPolicy:
    """Member ``slot`` of ``bank``: a ``Policy`` whose rows :func:`policy_log_probs` batches."""

    def __init__(self, bank: PolicyBank, slot: int) -> None:
        self.bank = bank
        self.slot = slot

    def log_probs(self, obs: np.ndarray, mask: np.ndarray, agent_idx: np.ndarray) -> np.ndarray:
        return self.bank.log_probs(np.full(len(obs), self.slot, dtype=np.int64), obs, mask, agent_idx)


def build_banks(policies: dict[str, MAPPOPolicy]) -> dict[str, BankedPolicy]:
    """One bank per architecture over ``policies``; returns each id's :class:`BankedPolicy`."""
    groups: dict[tuple[Any, ...], list[str]] = {}
    for pid, policy in policies.items():
        groups.setdefault(bank_signature(policy), []).append(pid)
    out: dict[str, BankedPolicy] = {}
    for ids in groups.values():
        bank = PolicyBank([policies[pid] for pid in ids])
        out.update({pid: BankedPolicy(bank, slot) for slot, pid in enumerate(ids)})
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
    one :class:`PolicyBank` go through the bank in one call.
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
        slot_of = np.full(len(policies), -1, dtype=np.int64)
        for p in members:
            member = policies[p]
            assert isinstance(member, BankedPolicy)
            slot_of[p] = member.slot
        rows = np.flatnonzero(slot_of[which] >= 0)
        out[rows] = bank.log_probs(slot_of[which[rows]], obs[rows], mask[rows], agent_idx[rows])
    return out
