"""One-shot two-player zero-sum matrix games with known Nash equilibria, for fast tests.

Both players move at once; seat 0 (``player_0``) receives ``A[a0, a1]`` and seat 1 its negation.
The observation is a constant ``[1.0]``; every action is always legal. ``outcome`` is seat 0's
payoff mapped linearly from ``[min A, max A]`` to ``[0, 1]`` (1 / 0.5 / 0 for win / draw / loss
in ``rps``, whose payoffs are +1 / 0 / -1).

Games (``game=`` kwarg of :func:`make_batched` / :func:`make_parallel`; the registry names them):

* ``rps`` — rock, paper, scissors. Unique Nash: uniform (1/3, 1/3, 1/3), value 0.
* ``biased_rps`` — ``[[0, -1, 2], [1, 0, -1], [-2, 1, 0]]``: winning with rock pays 2. Unique
  Nash: (1/4, 1/2, 1/4) for both players, value 0 (each pure strategy earns 0 against it).
* ``disc`` — the disc game of Balduzzi et al. (2019, "Open-ended learning in symmetric zero-sum
  games"): ``num_points`` points ``v_k = (cos t_k, sin t_k)``, ``t_k = 2 pi k / num_points``, and
  ``A[i, j] = v_i^T [[0, -1], [1, 0]] v_j = sin(t_i - t_j)``: every point beats the ones up to half a
  turn behind it. ``A`` has rank 2, so the Nash equilibria are exactly the mixtures whose mean
  point is the origin (value 0); the uniform mixture is the one of maximum entropy, and for
  ``num_points = 3`` it is the only one.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from typing import Any

import gymnasium
import numpy as np
from pettingzoo import ParallelEnv

from light_league.envs.base import BatchedEnv, BatchStep, EnvSpec
from light_league.envs.parallel import UniformRandomPolicy

AGENTS = ("player_0", "player_1")
BIASED_RPS = ((0.0, -1.0, 2.0), (1.0, 0.0, -1.0), (-2.0, 1.0, 0.0))
RPS = ((0.0, -1.0, 1.0), (1.0, 0.0, -1.0), (-1.0, 1.0, 0.0))
GAMES = ("rps", "biased_rps", "disc")


def disc_matrix(num_points: int) -> tuple[tuple[float, ...], ...]:
    """``A[i, j] = sin(t_i - t_j)`` for ``num_points`` equally spaced points on the unit circle."""
    if not isinstance(num_points, int) or not 3 <= num_points <= 64:
        raise ValueError(f"disc num_points must be an integer in [3, 64], got {num_points!r}")
    t = [2.0 * math.pi * k / num_points for k in range(num_points)]
    return tuple(tuple(math.sin(ti - tj) for tj in t) for ti in t)


def payoff_matrix(game: str, num_points: int = 7) -> tuple[tuple[float, ...], ...]:
    """Seat 0's payoff matrix of ``game``."""
    if game == "rps":
        return RPS
    if game == "biased_rps":
        return BIASED_RPS
    if game == "disc":
        return disc_matrix(num_points)
    raise ValueError(f"unknown matrix game {game!r} (valid: {', '.join(GAMES)})")


def nash_strategy(game: str, num_points: int = 7) -> np.ndarray:
    """A Nash strategy of ``game`` (the same for both seats): the documented one."""
    if game == "biased_rps":
        return np.array([0.25, 0.5, 0.25])
    size = len(payoff_matrix(game, num_points))
    return np.full(size, 1.0 / size)


def make_spec(game: str, num_points: int = 7) -> EnvSpec:
    a = payoff_matrix(game, num_points)
    lo, hi = min(min(r) for r in a), max(max(r) for r in a)
    return EnvSpec(
        name=game,
        agents=AGENTS,
        seats=((0,), (1,)),
        obs_dim=1,
        state_dim=1,
        num_actions=len(a),
        symmetric=True,
        turn_based=False,
        score_range=(lo, hi),
        max_steps=1,
        win_loss=game == "rps",
    )


class MatrixGameParallelEnv(ParallelEnv):
    """One round of a matrix game behind PettingZoo's Parallel API (plain Python).

    ``infos[agent]`` holds ``action_mask`` (all ones) and, after the move, ``outcome`` (the
    agent's own result in ``[0, 1]``).
    """

    metadata = {"name": "matrix_game_v0", "render_modes": []}

    def __init__(self, *, game: str = "rps", num_points: int = 7) -> None:
        self._a = payoff_matrix(game, num_points)
        self.spec_ = make_spec(game, num_points)
        self.possible_agents = list(AGENTS)
        self.agents: list[str] = []

    @functools.cache  # noqa: B019 - one space object per agent, as PettingZoo asks
    def observation_space(self, agent: str) -> gymnasium.spaces.Box:
        return gymnasium.spaces.Box(0.0, 1.0, shape=(1,), dtype=np.float32)

    @functools.cache  # noqa: B019
    def action_space(self, agent: str) -> gymnasium.spaces.Discrete:
        return gymnasium.spaces.Discrete(len(self._a))

    def _obs(self) -> np.ndarray:
        return np.ones(1, dtype=np.float32)

    def _mask(self) -> np.ndarray:
        return np.ones(len(self._a), dtype=np.int8)

    def reset(
        self, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[dict[str, np.ndarray], dict[str, dict[str, Any]]]:
        self.agents = list(self.possible_agents)
        return {a: self._obs() for a in self.agents}, {a: {"action_mask": self._mask()} for a in self.agents}

    def step(self, actions: dict[str, int]) -> tuple[dict[str, Any], ...]:
        if not self.agents:
            raise RuntimeError("matrix game: step() called on a finished game; call reset() first")
        a0, a1 = (int(actions[a]) for a in AGENTS)
        payoff = self._a[a0][a1]
        lo, hi = self.spec_.score_range
        out0 = (payoff - lo) / (hi - lo)
        rew = {AGENTS[0]: payoff, AGENTS[1]: -payoff}
        infos = {
            AGENTS[0]: {"action_mask": self._mask(), "outcome": out0},
            AGENTS[1]: {"action_mask": self._mask(), "outcome": 1.0 - out0},
        }
        obs = {a: self._obs() for a in AGENTS}
        self.agents = []
        return obs, rew, dict.fromkeys(AGENTS, True), dict.fromkeys(AGENTS, False), infos


class MatrixGameBatchedEnv(BatchedEnv):
    """``num_envs`` rounds of a matrix game per call; every step ends (and restarts) every game."""

    def __init__(self, num_envs: int, *, game: str = "rps", num_points: int = 7) -> None:
        if not isinstance(num_envs, int) or num_envs < 1:
            raise ValueError(f"num_envs must be a positive integer, got {num_envs!r}")
        self.spec = make_spec(game, num_points)
        self.num_envs = num_envs
        self._a = np.array(payoff_matrix(game, num_points))

    def _batch_step(self, payoff: np.ndarray, done: bool) -> BatchStep:
        b, n = self.num_envs, self.spec.num_actions
        lo, hi = self.spec.score_range
        reward = np.stack([payoff, -payoff], 1).astype(np.float32)
        return BatchStep(
            obs=np.ones((b, 2, 1), dtype=np.float32),
            state=np.ones((b, 2, 1), dtype=np.float32),
            action_mask=np.ones((b, 2, n), dtype=bool),
            active=np.ones((b, 2), dtype=bool),
            reward=reward,
            done=np.full(b, done),
            truncated=np.zeros(b, dtype=bool),
            seat_return=reward.copy(),
            outcome=((payoff - lo) / (hi - lo) if done else np.full(b, 0.5)).astype(np.float32),
        )

    def reset(self, seed: int | None = None) -> BatchStep:
        return self._batch_step(np.zeros(self.num_envs), done=False)

    def step(self, actions: np.ndarray) -> BatchStep:
        a = np.asarray(actions, dtype=np.int64)
        if a.shape != (self.num_envs, 2):
            raise ValueError(f"actions must have shape {(self.num_envs, 2)}, got {a.shape}")
        return self._batch_step(self._a[a[:, 0], a[:, 1]], done=True)


def make_batched(num_envs: int, *, game: str = "rps", num_points: int = 7) -> MatrixGameBatchedEnv:
    return MatrixGameBatchedEnv(num_envs, game=game, num_points=num_points)


def make_parallel(*, game: str = "rps", num_points: int = 7) -> MatrixGameParallelEnv:
    return MatrixGameParallelEnv(game=game, num_points=num_points)


class NashPolicy:
    """Plays the documented Nash strategy of the matrix game named by ``spec.name``."""

    def __init__(self, spec: EnvSpec) -> None:
        self._logp = np.log(nash_strategy(spec.name, spec.num_actions)).astype(np.float32)

    def log_probs(self, obs: np.ndarray, mask: np.ndarray, agent_idx: np.ndarray) -> np.ndarray:
        return np.broadcast_to(self._logp, (len(obs), len(self._logp))).copy()


#: Fixed opponents: uniform random and the documented Nash strategy.
FIXED_POLICIES: dict[str, Callable[[EnvSpec], Any]] = {"random": UniformRandomPolicy, "nash": NashPolicy}
#: Elo anchors of the fixed opponents (random 800, the equilibrium player at the initial 1000)
FIXED_POLICY_RATINGS: dict[str, float] = {"random": 800.0, "nash": 1000.0}
