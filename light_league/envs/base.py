"""The batched multi-agent environment contract.

Every shipped environment has two faces:

* a PettingZoo ``ParallelEnv`` (one game; AEC games through an adapter) for compatibility, and
* a :class:`BatchedEnv` that steps ``num_envs`` games in one numpy call, which is what the
  framework's rollout loop uses.

Conventions of the batched face (shared by every env, relied upon by ``light_league.rollout``):

* Agents are indexed ``0 .. n_agents-1`` in the order of ``spec.agents``. Every game has exactly
  two **seats** (teams); ``spec.seats[s]`` lists the agent indices of seat ``s``. One policy
  controls all agents of a seat (parameter sharing within a team).
* Each call returns a :class:`BatchStep`. ``obs``, ``state``, ``action_mask`` and ``active``
  describe the *next* decision. ``reward``, ``done``, ``seat_return`` and ``outcome`` describe
  what happened on the step just taken.
* ``active[b, i]`` is True when agent ``i`` of game ``b`` must act now (turn-based games: one
  agent; simultaneous games: every agent still in play). Actions of inactive agents are ignored.
* **Auto-reset**: when game ``b`` ends (``done[b]``), its final rewards are in ``reward[b]``, its
  episode return per seat in ``seat_return[b]`` and its result in ``outcome[b]``; ``obs[b]`` etc.
  already belong to the first decision of a fresh game.
* **Seeding**: ``reset(seed=s)`` makes game ``b`` behave exactly like a single-game env reset
  with ``seed = s + b`` (and so on across its auto-resets), whatever ``num_envs`` is.
* ``outcome`` is seat 0's result in ``[0, 1]``: 1 win, 0.5 draw, 0 loss for win/draw/loss games;
  for games scored in chips (poker) it is seat 0's return mapped linearly from
  ``spec.score_range`` to ``[0, 1]`` (an affine map, so the Nash of the meta-game is unchanged).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class EnvSpec:
    """Static description of a batched environment."""

    name: str
    agents: tuple[str, ...]
    seats: tuple[tuple[int, ...], ...]
    obs_dim: int
    state_dim: int
    num_actions: int
    #: seats are interchangeable: a policy sees the game the same way from either seat,
    #: so evaluation may play one seat order only.
    symmetric: bool
    turn_based: bool
    #: (min, max) of a seat's episode return, used to map returns to ``outcome``.
    score_range: tuple[float, float]
    #: hard bound on decision steps per episode.
    max_steps: int
    #: the env reports win / draw / loss (True) or a chip score (False).
    win_loss: bool = True
    #: the OpenSpiel game this env plays exactly (its module then provides
    #: ``infostate_string(obs, player)``): the framework computes exact payoffs, best responses
    #: and NashConv for it. None for games it only samples.
    openspiel_game: str | None = None

    @property
    def n_agents(self) -> int:
        return len(self.agents)

    @property
    def team_size(self) -> int:
        return len(self.seats[0])

    def seat_of(self) -> np.ndarray:
        """``(n_agents,)`` seat index of each agent."""
        out = np.zeros(self.n_agents, dtype=np.int64)
        for s, idx in enumerate(self.seats):
            out[list(idx)] = s
        return out

    def index_in_team(self) -> np.ndarray:
        """``(n_agents,)`` position of each agent within its seat (for an agent-id input)."""
        out = np.zeros(self.n_agents, dtype=np.int64)
        for idx in self.seats:
            out[list(idx)] = np.arange(len(idx))
        return out


@dataclass
class BatchStep:
    """What a batched env returns from ``reset`` and ``step`` (shapes for ``B`` games, ``N`` agents)."""

    obs: np.ndarray  #: (B, N, obs_dim) float32
    state: np.ndarray  #: (B, N, state_dim) float32, agent-specific global state for the critic
    action_mask: np.ndarray  #: (B, N, num_actions) bool, at least one True where active
    active: np.ndarray  #: (B, N) bool
    reward: np.ndarray  #: (B, N) float32, reward for the step just taken
    done: np.ndarray  #: (B,) bool, the game ended on the step just taken (then auto-reset)
    truncated: np.ndarray  #: (B,) bool, subset of ``done``: ended by the step limit
    seat_return: np.ndarray  #: (B, 2) float32, episode return per seat (valid where done)
    outcome: np.ndarray  #: (B,) float32 seat 0's result in [0, 1] (valid where done)
    #: (B, N, 2) positions in [0, 1] for behaviour-diversity embeddings, or None.
    positions: np.ndarray | None = None


class BatchedEnv(ABC):
    """``num_envs`` games stepped together. Subclasses set ``spec`` and ``num_envs``."""

    spec: EnvSpec
    num_envs: int

    @abstractmethod
    def reset(self, seed: int | None = None) -> BatchStep:
        """Start all games; game ``b`` uses seed ``seed + b``."""

    @abstractmethod
    def step(self, actions: np.ndarray) -> BatchStep:
        """Advance every game by one decision. ``actions``: (B, N) int64."""

    def close(self) -> None:  # noqa: B027 - optional hook
        """Release resources (most envs hold none)."""
