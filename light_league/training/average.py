"""The league's average policy: its meta-strategy distilled into one network.

A meta-strategy is a mixture of members: to play it, draw a member per game and follow it. It
cannot be handed over as one policy, and the newest main agent, the league's one network, is a
best response to its opponents rather than the mixture (fictitious play's best responses cycle
while their average converges). This module plays the meta-strategy against itself and fits one
network to what it did, as NFSP fits its average network to its own past play:

* :func:`mixture_decisions` plays ``games`` games, each seat's member drawn per game by the
  meta-strategy's weights, and records every decision with the acting member's action
  probabilities. A member reaches an observation as often as its own play leads there, so the
  records at an observation mix the members by their weight times their reach: the mixture's
  own behaviour there (Kuhn's theorem, where the observation is the player's information state).
* :func:`distill` fits a network's actor to those probabilities (cross-entropy to the soft
  targets over the legal actions, mini-batches in a seeded order).
* :class:`AveragePolicy` does both once per generation, warm-started from the previous
  generation's average (the first from the newest main agent), and keeps each generation's
  result as ``policies/average-g<G>.pt`` / ``.json`` in the run directory (what ``--resume``
  continues from).

Only sampled play and each member's own action probabilities are read, so it works on any game
a league can play; nothing exact is involved. The average is an output: nothing in training or
in the meta-strategy reads it.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch

from light_league.algorithms.base import Policy, hidden_dim
from light_league.data_buffer.policy_files import load_policy_files, save_policy
from light_league.envs.base import BatchedEnv
from light_league.errors import ConfigError
from light_league.rollout.episode import sample_actions
from light_league.rollout.policy_bank import build_banks, policy_log_probs


@dataclass
class Decisions:
    """Decisions of a mixture's members: ``(D, obs_dim)`` observations, ``(D, A)`` legal masks,
    ``(D,)`` agent index within the team and ``(D, A)`` the acting member's action probabilities."""

    obs: np.ndarray
    mask: np.ndarray
    agent_idx: np.ndarray
    probs: np.ndarray
    games: int

    def __len__(self) -> int:
        return int(self.obs.shape[0])


def mixture_decisions(
    env: BatchedEnv,
    policies: Sequence[Policy],
    weights: np.ndarray,
    games: int,
    *,
    seed: int,
) -> Decisions:
    """Play ``games`` games of the mixture ``weights`` over ``policies`` against itself (each seat's
    member drawn per game) and record every decision with the member's action probabilities."""
    w = np.asarray(weights, dtype=np.float64)
    if w.shape != (len(policies),) or (w < 0).any() or w.sum() <= 0:
        raise ValueError(f"weights must be {len(policies)} non-negative numbers with a positive sum, got {w}")
    w = w / w.sum()
    for pol in policies:
        if hidden_dim(pol):
            raise ValueError(
                "the average policy needs feed-forward members; a recurrent member has a hidden state"
            )
    banked = build_banks({str(i): pol for i, pol in enumerate(policies)})  # one call per bank a step
    plist: list[Policy] = [banked.get(str(i), pol) for i, pol in enumerate(policies)]
    spec = env.spec
    seat_of = np.asarray(spec.seat_of())
    team_idx = np.asarray(spec.index_in_team())
    rng = np.random.default_rng(seed)
    b, n = env.num_envs, spec.n_agents
    step = env.reset(seed=int(rng.integers(0, 2**31 - 1)))
    member = rng.choice(len(policies), size=(b, 2), p=w)
    live = np.arange(b) < games  # a finished game starts another only while fewer than ``games`` have begun
    started = int(live.sum())
    out: dict[str, list[np.ndarray]] = {"obs": [], "mask": [], "agent_idx": [], "probs": []}
    finished = 0
    while live.any():
        actions = np.zeros((b, n), dtype=np.int64)
        rows_b, rows_i = np.nonzero(step.active)
        if rows_b.size:
            who = member[rows_b, seat_of[rows_i]]
            obs, mask, idx = step.obs[rows_b, rows_i], step.action_mask[rows_b, rows_i], team_idx[rows_i]
            logp = policy_log_probs(plist, who, obs, mask, idx)
            probs = np.where(mask, np.exp(logp), 0.0)
            probs /= probs.sum(axis=1, keepdims=True)
            keep = live[rows_b]
            for key, value in (("obs", obs), ("mask", mask), ("agent_idx", idx), ("probs", probs)):
                out[key].append(value[keep])
            actions[rows_b, rows_i] = sample_actions(np.where(mask, logp, -np.inf), rng)
        step = env.step(actions)
        done = step.done & live
        finished += int(done.sum())
        if done.any():
            member[done] = rng.choice(len(policies), size=(int(done.sum()), 2), p=w)
            more = np.nonzero(done)[0][: max(0, games - started)]
            started += len(more)
            live[done] = False
            live[more] = True
    if not out["obs"]:
        raise ValueError("the mixture made no decisions; play at least one game")
    arrays = {k: np.concatenate(v) for k, v in out.items()}
    return Decisions(
        arrays["obs"].astype(np.float32),
        arrays["mask"].astype(bool),
        arrays["agent_idx"].astype(np.int64),
        arrays["probs"].astype(np.float32),
        finished,
    )


def distill(policy: Any, data: Decisions, *, epochs: int, lr: float, batch_size: int, seed: int) -> float:
    """Fit ``policy``'s actor (a feed-forward :class:`MAPPOPolicy`) to ``data``'s probabilities by
    cross-entropy over the legal actions; returns the last epoch's mean loss."""
    opt = torch.optim.Adam(policy.actor.parameters(), lr=lr)
    obs = torch.from_numpy(data.obs)
    mask = torch.from_numpy(data.mask)
    idx = torch.from_numpy(data.agent_idx)
    target = torch.from_numpy(data.probs)
    rng = np.random.default_rng(seed)
    n = len(data)
    loss_sum = 0.0
    for _ in range(epochs):
        order = torch.from_numpy(rng.permutation(n))
        loss_sum = 0.0
        for start in range(0, n, batch_size):
            rows = order[start : start + batch_size]
            logp = torch.log_softmax(policy.masked_logits(obs[rows], mask[rows], idx[rows]), dim=-1)
            ce = -(target[rows] * torch.where(mask[rows], logp, torch.zeros_like(logp))).sum(dim=-1)
            loss = ce.mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
            loss_sum += float(loss.detach()) * len(rows)
    return loss_sum / max(n, 1)


def average_path(policies_dir: Path, generation: int) -> Path:
    """``policies/average-g<G>`` (``.pt`` / ``.json``): the average policy after generation ``G``."""
    return policies_dir / f"average-g{generation}"


class AveragePolicy:
    """Distils the meta-strategy into one network each generation (``league.average_policy``).

    ``make_env(num_envs)`` builds the run's env; ``build(weights, meta)`` rebuilds a policy from a
    PolicyServer entry. The network starts from the newest main agent's snapshot the first time
    and from the previous generation's average after that.
    """

    def __init__(
        self,
        *,
        games: int,
        epochs: int,
        lr: float,
        batch_size: int,
        num_envs: int,
        seed: int,
        policies_dir: Path,
        make_env: Callable[[int], BatchedEnv],
        build: Callable[[Mapping[str, np.ndarray], Mapping[str, Any]], Policy],
    ) -> None:
        self.games, self.epochs, self.lr, self.batch_size = games, epochs, lr, batch_size
        self.seed = seed
        self.policies_dir = Path(policies_dir)
        self._env = make_env(num_envs)
        self._build = build
        self.policy: Any = None
        self.meta: dict[str, Any] | None = None
        #: the last update's numbers (``average/*`` in the generation record)
        self.last: dict[str, float] = {}

    def restore(self, generation: int) -> bool:
        """Continue from the average saved after ``generation`` (``--resume``); False if none."""
        path = average_path(self.policies_dir, generation)
        if not path.with_suffix(".pt").exists():
            return False
        weights, meta = load_policy_files(path)
        self.policy, self.meta = self._build(weights, meta), dict(meta)
        return True

    def update(
        self,
        generation: int,
        members: Mapping[str, Policy],
        weights: Mapping[str, float],
        start: tuple[Mapping[str, np.ndarray], Mapping[str, Any]],
    ) -> Any:
        """Distil the mixture ``weights`` over ``members`` (ids to policies) and save the result.
        ``start`` is the newest main agent's ``(weights, meta)``: the first network's starting
        point, and the architecture every later one keeps."""
        if self.policy is None:
            self.policy, self.meta = self._build(*start), dict(start[1])
            if not hasattr(self.policy, "actor") or hidden_dim(self.policy):
                raise ConfigError(
                    "league.average_policy needs a feed-forward MAPPO main agent (learner.kind=mappo, "
                    "learner.mappo.recurrent.cell=none); set league.average_policy.enabled=false"
                )
        support = [(pid, p) for pid, p in weights.items() if p > 1e-9]
        ids = [pid for pid, _ in support]
        data = mixture_decisions(
            self._env,
            [members[pid] for pid in ids],
            np.array([p for _, p in support]),
            self.games,
            seed=self.seed + 7 * generation,
        )
        trained = copy.deepcopy(self.policy)
        loss = distill(
            trained,
            data,
            epochs=self.epochs,
            lr=self.lr,
            batch_size=self.batch_size,
            seed=self.seed + generation,
        )
        self.policy = trained
        assert self.meta is not None
        save_policy(average_path(self.policies_dir, generation), trained.get_weights(), self.meta)
        self.last = {"loss": loss, "decisions": float(len(data)), "games": float(data.games)}
        return trained
