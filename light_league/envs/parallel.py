"""Generic helpers: a batched face over any two-seat PettingZoo Parallel env, and a random policy.

:class:`ParallelBatchedEnv` steps ``num_envs`` single-game envs in a Python loop. It is the
batched face of the adapters (``pettingzoo:...``, ``openspiel:...``): correct for any env, but
with no speed-up over a per-game loop; native envs ship a vectorised face instead.

How it reads a single-game env:

* observations are flattened to float32 vectors; a dict observation with ``observation`` and
  ``action_mask`` keys (PettingZoo's convention for classic games) gives both, otherwise the mask
  is ``infos[agent]["action_mask"]`` when present, else every action is legal;
* an agent is active (must act) while it is in ``env.agents``, unless ``infos[agent]["active_agent"]``
  names another agent (the mover), or the env is turn-based (``spec.turn_based``: PettingZoo's
  turn-based AEC-to-Parallel conversion) and gives it an all-zero mask (the waiting player). In a
  simultaneous env an agent in play with an all-zero mask is active with no legal action, which
  the episode loop refuses by name (it was sent action 0 before);
* the critic state is the agent's own observation followed by every agent's observation;
* a seat's reward on a step is the mean reward of its agents that received one (a team reward
  shared by the agents still in play counts once); the outcome compares the two seats' returns
  (win / draw / loss) or maps seat 0's return from ``score_range`` to ``[0, 1]``;
* a game that has not ended after ``max_steps`` steps is truncated.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import gymnasium
import numpy as np
from pettingzoo import ParallelEnv

from light_league.envs.base import BatchedEnv, BatchStep, EnvSpec


class UniformRandomPolicy:
    """Uniform over the legal actions (uniform over all actions on a row with none legal)."""

    def __init__(self, spec: EnvSpec) -> None:
        self.spec = spec

    def log_probs(self, obs: np.ndarray, mask: np.ndarray, agent_idx: np.ndarray) -> np.ndarray:
        mask = np.asarray(mask, dtype=bool)
        mask = np.where(mask.any(axis=1, keepdims=True), mask, True)
        count = mask.sum(axis=1, keepdims=True)
        return np.where(mask, -np.log(count), -np.inf).astype(np.float32)


def default_seats(agents: tuple[str, ...]) -> tuple[tuple[int, ...], ...]:
    """First half of the agents is seat 0, second half seat 1."""
    if len(agents) < 2 or len(agents) % 2:
        raise ValueError(
            f"a two-seat game needs an even number of agents, got {list(agents)}; "
            "pass seats=[[...], [...]] (agent indices per seat) in the env kwargs"
        )
    half = len(agents) // 2
    return tuple(range(half)), tuple(range(half, len(agents)))


def split_obs(obs: Any, info: dict[str, Any], num_actions: int) -> tuple[np.ndarray, np.ndarray]:
    """(flat float32 observation, bool action mask) of one agent's raw observation and info."""
    if isinstance(obs, dict) and "action_mask" in obs:
        return np.asarray(obs["observation"], dtype=np.float32).ravel(), np.asarray(
            obs["action_mask"], dtype=bool
        )
    mask = info.get("action_mask") if isinstance(info, dict) else None
    if mask is None:
        mask = np.ones(num_actions, dtype=bool)
    return np.asarray(obs, dtype=np.float32).ravel(), np.asarray(mask, dtype=bool)


def spec_from_parallel(
    env: ParallelEnv,
    *,
    name: str,
    seats: tuple[tuple[int, ...], ...] | None,
    turn_based: bool,
    score_range: tuple[float, float],
    max_steps: int,
    win_loss: bool,
) -> EnvSpec:
    """Describe a two-seat Parallel env whose agents share one observation size and action count."""
    agents = tuple(env.possible_agents)
    spaces = [env.action_space(a) for a in agents]
    if not all(isinstance(s, gymnasium.spaces.Discrete) for s in spaces):
        raise ValueError(f"env {name!r}: every action space must be Discrete, got {spaces}")
    sizes = {int(s.n) for s in spaces}
    obs_sizes = {_flat_obs_size(env.observation_space(a)) for a in agents}
    if len(sizes) != 1 or len(obs_sizes) != 1:
        raise ValueError(
            f"env {name!r}: agents must share one action count and observation size, "
            f"got actions {sorted(sizes)} and observations {sorted(obs_sizes)}"
        )
    obs_dim = obs_sizes.pop()
    return EnvSpec(
        name=name,
        agents=agents,
        seats=seats if seats is not None else default_seats(agents),
        obs_dim=obs_dim,
        state_dim=obs_dim * (1 + len(agents)),
        num_actions=sizes.pop(),
        symmetric=False,
        turn_based=turn_based,
        score_range=score_range,
        max_steps=max_steps,
        win_loss=win_loss,
    )


def _flat_obs_size(space: gymnasium.Space) -> int:
    if isinstance(space, gymnasium.spaces.Dict) and "observation" in space.spaces:
        space = space.spaces["observation"]
    return int(gymnasium.spaces.flatdim(space))


class ParallelBatchedEnv(BatchedEnv):
    """``num_envs`` copies of a single-game Parallel env, stepped in a loop (see module docstring)."""

    def __init__(self, factory: Callable[[], ParallelEnv], num_envs: int, spec: EnvSpec) -> None:
        if not isinstance(num_envs, int) or num_envs < 1:
            raise ValueError(f"num_envs must be a positive integer, got {num_envs!r}")
        self.spec = spec
        self.num_envs = num_envs
        self._envs = [factory() for _ in range(num_envs)]
        self._seat = spec.seat_of()
        n = spec.n_agents
        self._obs = np.zeros((num_envs, n, spec.obs_dim), dtype=np.float32)
        self._mask = np.zeros((num_envs, n, spec.num_actions), dtype=bool)
        self._live = np.zeros((num_envs, n), dtype=bool)  #: in play and not waiting for another
        self._returns = np.zeros((num_envs, 2))
        self._steps = np.zeros(num_envs, dtype=np.int64)

    def reset(self, seed: int | None = None) -> BatchStep:
        for b, env in enumerate(self._envs):
            obs, infos = env.reset(seed=None if seed is None else seed + b)
            self._begin(b, obs, infos)
        zero = np.zeros(self.num_envs, dtype=bool)
        return self._batch_step(
            np.zeros((self.num_envs, self.spec.n_agents)), zero, zero, self._returns.copy()
        )

    def _begin(self, b: int, obs: dict[str, Any], infos: dict[str, Any]) -> None:
        self._obs[b], self._mask[b], self._returns[b], self._steps[b] = 0.0, False, 0.0, 0
        self._live[b] = False
        self._record(b, obs, infos)

    def _record(self, b: int, obs: dict[str, Any], infos: dict[str, Any]) -> None:
        live = set(self._envs[b].agents)
        for k, agent in enumerate(self.spec.agents):
            info = infos.get(agent, {})
            if agent in obs:
                self._obs[b, k], self._mask[b, k] = split_obs(obs[agent], info, self.spec.num_actions)
            waiting = isinstance(info, dict) and info.get("active_agent", agent) != agent
            if agent not in live or waiting:
                self._mask[b, k] = False
            self._live[b, k] = agent in live and not waiting

    def step(self, actions: np.ndarray) -> BatchStep:
        actions = np.asarray(actions, dtype=np.int64)
        n = self.spec.n_agents
        reward = np.zeros((self.num_envs, n))
        done = np.zeros(self.num_envs, dtype=bool)
        truncated = np.zeros(self.num_envs, dtype=bool)
        final = np.zeros((self.num_envs, 2))
        for b, env in enumerate(self._envs):
            act = {a: int(actions[b, k]) for k, a in enumerate(self.spec.agents) if a in env.agents}
            obs, rew, term, trunc, infos = env.step(act)
            reward[b] = [float(rew.get(a, 0.0)) for a in self.spec.agents]
            self._returns[b] += self._seat_reward(rew)
            self._steps[b] += 1
            self._record(b, obs, infos)
            limit = self._steps[b] >= self.spec.max_steps
            if not env.agents or limit:
                done[b] = True
                truncated[b] = (limit and bool(env.agents)) or any(trunc.values())
                final[b] = self._returns[b]
                self._begin(b, *env.reset())
        return self._batch_step(reward, done, truncated, final)

    def _seat_reward(self, rew: dict[str, float]) -> list[float]:
        out = []
        for idx in self.spec.seats:
            got = [float(rew[self.spec.agents[i]]) for i in idx if self.spec.agents[i] in rew]
            out.append(sum(got) / len(got) if got else 0.0)
        return out

    def _batch_step(
        self, reward: np.ndarray, done: np.ndarray, truncated: np.ndarray, seat_return: np.ndarray
    ) -> BatchStep:
        if self.spec.win_loss:
            outcome = 0.5 + 0.5 * np.sign(seat_return[:, 0] - seat_return[:, 1])
        else:
            lo, hi = self.spec.score_range
            outcome = np.clip((seat_return[:, 0] - lo) / (hi - lo), 0.0, 1.0)
        all_obs = self._obs.reshape(self.num_envs, 1, -1).repeat(self.spec.n_agents, axis=1)
        return BatchStep(
            obs=self._obs.copy(),
            state=np.concatenate([self._obs, all_obs], -1),
            action_mask=self._mask.copy(),
            active=np.asarray(self._mask.any(axis=2)) if self.spec.turn_based else self._live.copy(),
            reward=reward.astype(np.float32),
            done=done,
            truncated=truncated,
            seat_return=seat_return.astype(np.float32),
            outcome=np.where(done, outcome, 0.5).astype(np.float32),
        )
