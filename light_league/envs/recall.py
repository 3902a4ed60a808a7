"""Recall: a two-player game that only memory wins. Each agent is shown a private signal once, then
distractors, then must name the signal.

Rules (both faces implement exactly these; the batched one is vectorised over games):

* Two seats of ``team_size`` agents each; all agents decide at every step (simultaneous moves).
  An episode is ``delay + 2`` decisions long.
* Decision 0 (the **cue**): each agent sees its own signal, one of ``num_signals``, drawn
  uniformly. Decisions ``1 .. delay``: it sees a **distractor**, another uniform draw, in the
  same place. Decision ``delay + 1`` (the **answer**): it sees one more distractor and names a
  signal. Before the answer only action 0 (wait) is legal; at the answer every action is.
* An agent **hits** when its answer is its own cue. Each seat's reward, at the last step only,
  is its agents' mean hit minus the other seat's (zero-sum, within ``[-1, 1]``); the seat with
  the higher mean hit wins, equal is a draw.

Observation (``num_signals + 2`` floats): the shown signal one-hot, then ``[cue, answer]`` flags.
The latest signal is never the cue after decision 0, so a policy without memory answers at
chance (hit rate ``1 / num_signals``; against an opponent that does the same, expected return 0
and mean outcome 0.5), and one that remembers hits every time (against ``random``: return
``1 - 1 / num_signals``, mean outcome ``1 - 1 / (2 num_signals)``). The critic's state appends the
agent's own cue one-hot and the elapsed fraction of the episode (centralised training may see it).

Signals come from the counter-based streams of :mod:`light_league.envs._rng` (key: seed, episode, decision,
agent), so game ``b`` of a batch seeded ``s`` replays exactly like :class:`RecallParallelEnv`
seeded ``s + b``.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import gymnasium
import numpy as np
from pettingzoo import ParallelEnv

from light_league.envs import _rng
from light_league.envs.base import BatchedEnv, BatchStep, EnvSpec
from light_league.envs.parallel import UniformRandomPolicy

DEFAULT_NUM_SIGNALS = 4
DEFAULT_DELAY = 6
WAIT = 0


def _check_args(num_signals: int, delay: int, team_size: int) -> None:
    for name, value, low, high in (
        ("num_signals", num_signals, 2, 64),
        ("delay", delay, 0, 1000),
        ("team_size", team_size, 1, 8),
    ):
        if not isinstance(value, int) or isinstance(value, bool) or not low <= value <= high:
            raise ValueError(f"recall {name} must be an integer in [{low}, {high}], got {value!r}")


def make_spec(num_signals: int, delay: int, team_size: int) -> EnvSpec:
    """The :class:`EnvSpec` of a recall game."""
    _check_args(num_signals, delay, team_size)
    agents = tuple(f"player_{s}_{k}" for s in range(2) for k in range(team_size))
    return EnvSpec(
        name="recall",
        agents=agents,
        seats=(tuple(range(team_size)), tuple(range(team_size, 2 * team_size))),
        obs_dim=num_signals + 2,
        state_dim=2 * num_signals + 3,
        num_actions=num_signals,
        symmetric=True,
        turn_based=False,
        score_range=(-1.0, 1.0),
        max_steps=delay + 2,
        win_loss=True,
    )


def _outcome(hits0: float, hits1: float) -> float:
    return 1.0 if hits0 > hits1 else 0.0 if hits0 < hits1 else 0.5


class RecallParallelEnv(ParallelEnv):
    """One recall game behind PettingZoo's Parallel API (plain Python; the reference semantics).

    ``infos[agent]`` holds ``action_mask`` (int8) and, after the answer, ``outcome`` (the agent's
    seat's result: 1 win, 0.5 draw, 0 loss) and ``hit`` (whether its answer was its cue)."""

    metadata = {"name": "recall_v0", "render_modes": []}

    def __init__(
        self, *, num_signals: int = DEFAULT_NUM_SIGNALS, delay: int = DEFAULT_DELAY, team_size: int = 1
    ) -> None:
        self.spec_ = make_spec(num_signals, delay, team_size)
        self.num_signals, self.delay, self.team_size = num_signals, delay, team_size
        self.possible_agents = list(self.spec_.agents)
        self.agents: list[str] = []
        self._seed = _rng.fresh_seed()
        self._episode = -1
        self._t = 0
        self._cue = [0] * len(self.possible_agents)
        self.render_mode = None

    @functools.cache  # noqa: B019 - one space object per agent, as PettingZoo asks
    def observation_space(self, agent: str) -> gymnasium.spaces.Box:
        return gymnasium.spaces.Box(0.0, 1.0, shape=(self.spec_.obs_dim,), dtype=np.float32)

    @functools.cache  # noqa: B019
    def action_space(self, agent: str) -> gymnasium.spaces.Discrete:
        return gymnasium.spaces.Discrete(self.num_signals)

    def _signal(self, k: int) -> int:
        return int(self.num_signals * _rng.uniform(self._seed, self._episode, self._t, k))

    def _obs(self, k: int) -> np.ndarray:
        out = np.zeros(self.spec_.obs_dim, dtype=np.float32)
        out[self._signal(k)] = 1.0
        out[self.num_signals] = float(self._t == 0)
        out[self.num_signals + 1] = float(self._t == self.delay + 1)
        return out

    def _mask(self) -> np.ndarray:
        mask = np.zeros(self.num_signals, dtype=np.int8)
        mask[WAIT if self._t <= self.delay else slice(None)] = 1
        return mask

    def state(self) -> np.ndarray:
        """The critic state of the first agent: its observation, its cue one-hot, elapsed fraction."""
        cue = np.zeros(self.num_signals, dtype=np.float32)
        cue[self._cue[0]] = 1.0
        return np.concatenate([self._obs(0), cue, [self._t / (self.delay + 2)]]).astype(np.float32)

    def reset(
        self, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[dict[str, np.ndarray], dict[str, dict[str, Any]]]:
        if seed is not None:
            self._seed, self._episode = _rng.check_seed(seed), 0
        else:
            self._episode += 1
        self._t = 0
        self._cue = [self._signal(k) for k in range(len(self.possible_agents))]
        self.agents = list(self.possible_agents)
        obs = {a: self._obs(k) for k, a in enumerate(self.possible_agents)}
        return obs, {a: {"action_mask": self._mask()} for a in self.agents}

    def step(self, actions: dict[str, int]) -> tuple[dict[str, Any], ...]:
        if not self.agents:
            raise RuntimeError("recall: step() called on a finished game; call reset() first")
        answer = self._t == self.delay + 1
        self._t += 1
        rew = dict.fromkeys(self.agents, 0.0)
        infos: dict[str, dict[str, Any]] = {}
        if answer:
            hit = [int(actions.get(a, WAIT)) == self._cue[k] for k, a in enumerate(self.possible_agents)]
            n = self.team_size
            means = (sum(hit[:n]) / n, sum(hit[n:]) / n)
            for k, a in enumerate(self.possible_agents):
                seat = k // n
                rew[a] = means[seat] - means[1 - seat]
                outcome = _outcome(means[0], means[1])
                infos[a] = {
                    "action_mask": np.ones(self.num_signals, dtype=np.int8),
                    "outcome": outcome if seat == 0 else 1.0 - outcome,
                    "hit": hit[k],
                }
            obs = {a: self._obs(k) for k, a in enumerate(self.possible_agents)}  # a distractor, no flag
            done = dict.fromkeys(self.agents, True)
            self.agents = []
            return obs, rew, done, dict.fromkeys(done, False), infos
        obs = {a: self._obs(k) for k, a in enumerate(self.possible_agents)}
        infos = {a: {"action_mask": self._mask()} for a in self.agents}
        return obs, rew, dict.fromkeys(self.agents, False), dict.fromkeys(self.agents, False), infos


class RecallBatchedEnv(BatchedEnv):
    """``num_envs`` recall games stepped together; see the module docstring for the rules."""

    def __init__(
        self,
        num_envs: int,
        *,
        num_signals: int = DEFAULT_NUM_SIGNALS,
        delay: int = DEFAULT_DELAY,
        team_size: int = 1,
    ) -> None:
        if not isinstance(num_envs, int) or num_envs < 1:
            raise ValueError(f"num_envs must be a positive integer, got {num_envs!r}")
        self.spec = make_spec(num_signals, delay, team_size)
        self.num_envs = num_envs
        self.num_signals, self.delay, self.team_size = num_signals, delay, team_size
        n = self.spec.n_agents
        self._agents = np.arange(n, dtype=np.uint64)
        self._seat = self.spec.seat_of()
        self.seed = np.zeros(num_envs, dtype=np.uint64)
        self.episode = np.zeros(num_envs, dtype=np.int64)
        self.t = np.zeros(num_envs, dtype=np.int64)
        self.cue = np.zeros((num_envs, n), dtype=np.int64)

    def _signals(self) -> np.ndarray:
        """(B, N) the signal each agent is shown now."""
        u = _rng.uniform_np(
            self.seed[:, None],
            self.episode[:, None].astype(np.uint64),
            self.t[:, None].astype(np.uint64),
            self._agents,
        )
        return (u * self.num_signals).astype(np.int64)

    def reset(self, seed: int | None = None) -> BatchStep:
        base = _rng.check_seed(_rng.fresh_seed() if seed is None else seed)
        self.seed = (base + np.arange(self.num_envs)).astype(np.uint64)
        self.episode[:] = 0
        self.t[:] = 0
        self.cue = self._signals()
        b, n = self.num_envs, self.spec.n_agents
        zero = np.zeros(b, dtype=bool)
        return self._batch_step(np.zeros((b, n)), zero, np.zeros((b, 2)), np.full(b, 0.5))

    def step(self, actions: np.ndarray) -> BatchStep:
        a = np.asarray(actions, dtype=np.int64)
        b, n = self.num_envs, self.spec.n_agents
        if a.shape != (b, n):
            raise ValueError(f"actions must have shape {(b, n)}, got {a.shape}")
        done = self.t == self.delay + 1
        hits = (a == self.cue).astype(np.float64)
        means = np.stack([hits[:, self._seat == 0].mean(axis=1), hits[:, self._seat == 1].mean(axis=1)], 1)
        seat_reward = np.where(done[:, None], means - means[:, ::-1], 0.0)
        outcome = np.where(means[:, 0] > means[:, 1], 1.0, np.where(means[:, 0] < means[:, 1], 0.0, 0.5))
        self.t += 1
        if done.any():
            self.episode[done] += 1
            self.t[done] = 0
        signals = self._signals()
        self.cue = np.where(done[:, None], signals, self.cue)
        return self._batch_step(seat_reward[:, self._seat], done, seat_reward, outcome, signals)

    def _batch_step(
        self,
        reward: np.ndarray,
        done: np.ndarray,
        seat_return: np.ndarray,
        outcome: np.ndarray,
        signals: np.ndarray | None = None,
    ) -> BatchStep:
        b, n, k = self.num_envs, self.spec.n_agents, self.num_signals
        shown = self.cue if signals is None else signals
        obs = np.zeros((b, n, k + 2), dtype=np.float32)
        np.put_along_axis(obs, shown[:, :, None], 1.0, axis=2)
        obs[:, :, k] = (self.t == 0)[:, None]
        obs[:, :, k + 1] = (self.t == self.delay + 1)[:, None]
        cue = np.zeros((b, n, k), dtype=np.float32)
        np.put_along_axis(cue, self.cue[:, :, None], 1.0, axis=2)
        elapsed = np.broadcast_to((self.t / (self.delay + 2))[:, None, None], (b, n, 1))
        mask = np.zeros((b, n, k), dtype=bool)
        mask[:, :, WAIT] = True
        mask[self.t == self.delay + 1] = True
        return BatchStep(
            obs=obs,
            state=np.concatenate([obs, cue, elapsed], axis=2).astype(np.float32),
            action_mask=mask,
            active=np.ones((b, n), dtype=bool),
            reward=reward.astype(np.float32),
            done=done,
            truncated=np.zeros(b, dtype=bool),
            seat_return=seat_return.astype(np.float32),
            outcome=np.where(done, outcome, 0.5).astype(np.float32),
        )


def make_batched(
    num_envs: int, *, num_signals: int = DEFAULT_NUM_SIGNALS, delay: int = DEFAULT_DELAY, team_size: int = 1
) -> RecallBatchedEnv:
    return RecallBatchedEnv(num_envs, num_signals=num_signals, delay=delay, team_size=team_size)


def make_parallel(
    *, num_signals: int = DEFAULT_NUM_SIGNALS, delay: int = DEFAULT_DELAY, team_size: int = 1
) -> RecallParallelEnv:
    return RecallParallelEnv(num_signals=num_signals, delay=delay, team_size=team_size)


#: Fixed opponents: uniform random over the legal actions (it answers at chance, as any policy
#: without memory does at best)
FIXED_POLICIES: dict[str, Callable[[EnvSpec], Any]] = {"random": UniformRandomPolicy}
#: Elo anchor of the fixed opponent
FIXED_POLICY_RATINGS: dict[str, float] = {"random": 800.0}
