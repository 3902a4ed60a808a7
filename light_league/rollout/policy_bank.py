"""Frozen policies in banks: the rows of every member of a bank go through it in one call.

A policy class declares the **bank hook** (:func:`light_league.algorithms.base.bank_signature`:
``bank_signature()`` and ``stack(policies)``; MAPPO's is
:class:`~light_league.algorithms.mappo.bank.MAPPOBank`); :func:`build_banks` groups policies by
their signatures and stacks each group, and :func:`policy_log_probs` (what the episode loop
calls) runs the rows of each bank's members through the bank and every other policy on its own.
Nothing here knows which learner's policies it banks.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from typing import cast

import numpy as np

from light_league.algorithms.base import (
    Policy,
    PolicyBank,
    RecurrentPolicy,
    bank_signature,
    hidden_dim,
    stack,
)


class BankedPolicy:
    """Member ``slot`` of ``bank`` (``policy`` itself): rows :func:`policy_log_probs` batches."""

    def __init__(self, bank: PolicyBank, slot: int, policy: Policy) -> None:
        self.bank = bank
        self.slot = slot
        self.policy = policy

    def log_probs(self, obs: np.ndarray, mask: np.ndarray, agent_idx: np.ndarray) -> np.ndarray:
        return self.policy.log_probs(obs, mask, agent_idx)

    @property
    def hidden_dim(self) -> int:
        return hidden_dim(self.policy)

    def step_log_probs(
        self, obs: np.ndarray, mask: np.ndarray, agent_idx: np.ndarray, hidden: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray]:
        return cast(RecurrentPolicy, self.policy).step_log_probs(obs, mask, agent_idx, hidden)


#: a bank is used when at least this many of its members have rows in a call; below, each
#: member's own policy is cheaper (a bank call costs about two policy calls on its own)
MIN_BANKED = 3


def build_banks(policies: Mapping[str, Policy]) -> dict[str, BankedPolicy]:
    """One bank per signature over the ``policies`` that declare the bank hook (the others are
    left out); returns each banked id's :class:`BankedPolicy`."""
    groups: dict[Hashable, list[str]] = {}
    for pid, policy in policies.items():
        signature = bank_signature(policy)
        if signature is not None:
            groups.setdefault((type(policy), signature), []).append(pid)
    out: dict[str, BankedPolicy] = {}
    for ids in groups.values():
        bank = stack([policies[pid] for pid in ids])
        out.update({pid: BankedPolicy(bank, slot, policies[pid]) for slot, pid in enumerate(ids)})
    return out


def policy_log_probs(
    policies: Sequence[Policy | None],
    which: np.ndarray,
    obs: np.ndarray,
    mask: np.ndarray,
    agent_idx: np.ndarray,
    *,
    hidden: np.ndarray | None = None,
) -> np.ndarray:
    """(N, A) float32 log-probabilities of row ``n`` under ``policies[which[n]]``.

    Rows of plain policies go through their policy, one call per policy; rows of all members of
    one bank go through the bank in one call (when :data:`MIN_BANKED` or more of
    them are present; else through their own policies). ``hidden`` (N, H): each row's hidden
    state, read and advanced in place for the rows of recurrent policies (a policy of
    ``hidden_dim`` h uses columns ``:h``); rows of other policies leave theirs alone.
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
        _rows_of(policy, np.flatnonzero(which == p), obs, mask, agent_idx, hidden, out)
    for bank, members in banks.values():
        if len(members) < MIN_BANKED:
            for p in members:
                _rows_of(_policy(policies[p]), np.flatnonzero(which == p), obs, mask, agent_idx, hidden, out)
            continue
        slot_of = np.full(len(policies), -1, dtype=np.int64)
        for p in members:
            member = policies[p]
            assert isinstance(member, BankedPolicy)
            slot_of[p] = member.slot
        rows = np.flatnonzero(slot_of[which] >= 0)
        slots = slot_of[which[rows]]
        width = bank.hidden_dim
        if width:
            assert hidden is not None, "recurrent policies need the rows' hidden states"
            out[rows], hidden[rows, :width] = bank.step_log_probs(
                slots, obs[rows], mask[rows], agent_idx[rows], hidden[rows, :width]
            )
        else:
            out[rows] = bank.log_probs(slots, obs[rows], mask[rows], agent_idx[rows])
    return out


def _rows_of(
    policy: Policy,
    rows: np.ndarray,
    obs: np.ndarray,
    mask: np.ndarray,
    agent_idx: np.ndarray,
    hidden: np.ndarray | None,
    out: np.ndarray,
) -> None:
    """``out[rows]`` (and, recurrent, ``hidden[rows]``) from ``policy`` itself."""
    width = hidden_dim(policy)
    if not width:
        out[rows] = policy.log_probs(obs[rows], mask[rows], agent_idx[rows])
        return
    assert hidden is not None, "recurrent policies need the rows' hidden states"
    out[rows], hidden[rows, :width] = cast(RecurrentPolicy, policy).step_log_probs(
        obs[rows], mask[rows], agent_idx[rows], hidden[rows, :width]
    )


def _policy(member: Policy | None) -> Policy:
    assert member is not None
    return member
