"""Battalion: two teams of battalions manoeuvre and fire on a unit square until one side breaks.

Rules (both faces implement exactly these; the batched one is vectorised over games):

* Seat 0 is ``blue`` (starts near ``y = 0.3`` facing north), seat 1 is ``red`` (the mirror image
  near ``y = 0.7`` facing south). Each side has ``team_size`` battalions with a position, a facing
  (one of 24 compass directions, 15 degrees apart), strength and morale (both start at 1).
* Actions: hold, advance, withdraw, turn left, turn right, step left, step right, fire. A battalion
  that fires does not move that step. Fire is legal when an enemy is inside the firing arc
  (45 degrees either side of the facing) and range; the shot hits the enemy closest to the line
  of fire. Fire sent with no target does nothing.
* Damage = base x shooter strength x range factor (1 at point blank, 0.5 at maximum range)
  x flank factor (1 from the front, up to 1.5 into the rear) x noise in [0.75, 1.25].
  Every shot of a step is resolved from the positions before anyone moves.
* Morale falls by 2.5 x the strength lost and recovers slowly when not hit. A battalion routs
  below morale 0.3 and is destroyed at strength 0.05 or less; either way it stops acting, and its
  team plays on.
* A side wins when every enemy battalion has routed or been destroyed while it still has one in
  play; both sides breaking on the same step, or reaching ``max_steps``, is a draw.
* Team reward per step (shared by the agents of a seat): (damage dealt - damage taken) / team_size,
  plus 1 for a win and -1 for a loss. Episode returns lie in ``[-2, 2]``.

Observations are in the agent's own frame: red sees the field rotated by 180 degrees, so both
seats see themselves starting at the bottom facing up and one policy plays either seat.
Layout (``team_size = n``, ``2n`` battalions): 7 own features ``[x, y, cos, sin, strength, morale,
active]``, then 13 features for each ally (seat order, self skipped) and each enemy (seat
order) ``[active, ahead, left, distance, cos, sin of its facing relative to ours, strength, morale,
targetable, threatening, aimed, aiming, allies_aimed]`` (all zero once it is out of play), then the
elapsed fraction of the episode. ``targetable``: it is inside our arc and range; ``threatening``:
we are inside its; ``aimed``: our fire would hit it now (of the enemies we can target, the one
nearest our line of fire); ``aiming``: its fire would hit us; ``allies_aimed``: the share of our
team-mates in play whose fire would hit it (the last three are zero for allies). The critic's
state appends ``[x, y, cos, sin, strength, morale, active]`` of every battalion (own side first)
in the agent's frame. ``BatchStep.positions`` holds each agent's position in its own frame.

Option ``unit_classes`` (default false: the rules above, exactly): every battalion belongs to a
class (infantry, cavalry, archers) that its team chooses on the first step, each class's fire
doing extra damage into one class and less into another, a counter triangle that both teams see.
The rules, the three actions it adds and the observation features it appends are in
:mod:`light_league.envs.battalion_classes`; ``docs/battalion.md`` tells the game.

Randomness (start jitter, fire noise) comes from the counter-based streams of :mod:`light_league.envs._rng`, so
game ``b`` of a batch seeded ``s`` replays exactly like :class:`BattalionParallelEnv` seeded
``s + b``.
"""

from __future__ import annotations

import functools
import math
from typing import Any

import gymnasium
import numpy as np
from pettingzoo import ParallelEnv

from light_league.envs import _rng
from light_league.envs import battalion_classes as bc
from light_league.envs.base import BatchedEnv, BatchStep, EnvSpec

N_DIRS = 24
COS: tuple[float, ...] = tuple(math.cos(2.0 * math.pi * k / N_DIRS) for k in range(N_DIRS))
SIN: tuple[float, ...] = tuple(math.sin(2.0 * math.pi * k / N_DIRS) for k in range(N_DIRS))
NORTH = 6
HALF_TURN = N_DIRS // 2

HOLD, ADVANCE, WITHDRAW, TURN_LEFT, TURN_RIGHT, STEP_LEFT, STEP_RIGHT, FIRE = range(8)
ACTION_NAMES = ("hold", "advance", "withdraw", "turn_left", "turn_right", "step_left", "step_right", "fire")
NUM_ACTIONS = len(ACTION_NAMES)

ADVANCE_SPEED = 0.02
WITHDRAW_SPEED = 0.01
STEP_SPEED = 0.012
FIRE_RANGE = 0.6
ARC_COS = math.cos(math.pi / 4.0)
BASE_DAMAGE = 0.015
MORALE_LOSS = 2.5
MORALE_RECOVERY = 0.002
ROUT_MORALE = 0.3
DESTROYED_STRENGTH = 0.05
START_Y = 0.3
JITTER_X = 0.04
JITTER_Y = 0.03
WIN_BONUS = 1.0
DEFAULT_MAX_STEPS = 200
OWN_FEATURES = 7
OTHER_FEATURES = 13
UNIT_STATE_FEATURES = 7
RESET_STREAM = 1 << 20


def obs_dim(team_size: int, unit_classes: bool = False) -> int:
    """Length of an agent's observation for ``team_size`` battalions a side."""
    classic = OWN_FEATURES + OTHER_FEATURES * (2 * team_size - 1) + 1
    return classic + (bc.extra_obs_dim(team_size) if unit_classes else 0)


def num_actions(unit_classes: bool = False) -> int:
    """Number of actions: the classic eight, then the three class choices with ``unit_classes``."""
    return NUM_ACTIONS + (bc.N_CLASSES if unit_classes else 0)


def action_names_for(*, unit_classes: bool = False, **_: Any) -> tuple[str, ...]:
    """The names of the actions of a game with these options (the registry's ``action_names``)."""
    return ACTION_NAMES + (bc.CHOICE_NAMES if unit_classes else ())


def _check_args(team_size: int, max_steps: int, unit_classes: bool = False) -> None:
    if not isinstance(team_size, int) or not 1 <= team_size <= 16:
        raise ValueError(f"battalion team_size must be an integer in [1, 16], got {team_size!r}")
    if not isinstance(max_steps, int) or not 1 <= max_steps <= 100_000:
        raise ValueError(f"battalion max_steps must be an integer in [1, 100000], got {max_steps!r}")
    bc.check_option(unit_classes)


def make_spec(team_size: int, max_steps: int, unit_classes: bool = False) -> EnvSpec:
    """The :class:`EnvSpec` of a ``team_size`` v ``team_size`` battle (``unit_classes``: the
    counter triangle of :mod:`light_league.envs.battalion_classes`)."""
    _check_args(team_size, max_steps, unit_classes)
    n_obs = obs_dim(team_size, unit_classes)
    agents = tuple(f"blue_{k}" for k in range(team_size)) + tuple(f"red_{k}" for k in range(team_size))
    return EnvSpec(
        name="battalion",
        agents=agents,
        seats=(tuple(range(team_size)), tuple(range(team_size, 2 * team_size))),
        obs_dim=n_obs,
        state_dim=n_obs + UNIT_STATE_FEATURES * 2 * team_size,
        num_actions=num_actions(unit_classes),
        symmetric=True,
        turn_based=False,
        score_range=(-1.0 - WIN_BONUS, 1.0 + WIN_BONUS),
        max_steps=max_steps,
        win_loss=True,
    )


def _orders(team_size: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per observer: the other units in observation order, all units in state order, and seats."""
    n_units = 2 * team_size
    seat = np.repeat(np.arange(2), team_size)
    others, state = [], []
    for i in range(n_units):
        own = [j for j in range(n_units) if seat[j] == seat[i]]
        enemy = [j for j in range(n_units) if seat[j] != seat[i]]
        others.append([j for j in own if j != i] + enemy)
        state.append(own + enemy)
    return np.array(others, dtype=np.int64), np.array(state, dtype=np.int64), seat


def _start_unit(seed: int, episode: int, unit: int, team_size: int) -> tuple[float, float, int]:
    """Start position (absolute frame) and facing of ``unit`` (plain Python)."""
    k = unit % team_size
    ux = _rng.uniform(seed, episode, 0, RESET_STREAM + 3 * unit)
    uy = _rng.uniform(seed, episode, 0, RESET_STREAM + 3 * unit + 1)
    uh = _rng.uniform(seed, episode, 0, RESET_STREAM + 3 * unit + 2)
    x = (k + 1.0) / (team_size + 1.0) + JITTER_X * (2.0 * ux - 1.0)
    y = START_Y + JITTER_Y * (2.0 * uy - 1.0)
    h = NORTH + (1 if uh > 0.75 else 0) - (1 if uh < 0.25 else 0)
    if unit >= team_size:
        return 1.0 - x, 1.0 - y, (h + HALF_TURN) % N_DIRS
    return x, y, h


# ----------------------------------------------------------------------------------------------
# Single game, plain Python: the reference semantics.
# ----------------------------------------------------------------------------------------------


class _Game:
    """One battle in plain Python lists (absolute frame)."""

    def __init__(self, team_size: int, max_steps: int, unit_classes: bool = False) -> None:
        self.n = team_size
        self.max_steps = max_steps
        self.n_units = 2 * team_size
        self.classes = unit_classes
        self.n_actions = num_actions(unit_classes)
        self.seat = [0] * team_size + [1] * team_size
        others, state, _ = _orders(team_size)
        self.others = others.tolist()
        self.enemy = [[self.seat[j] != self.seat[i] for j in row] for i, row in enumerate(self.others)]
        self.state_order = state.tolist()
        self.seed = 0
        self.episode = 0
        self.t = 0
        self.x: list[float] = []
        self.y: list[float] = []
        self.h: list[int] = []
        self.s: list[float] = []
        self.m: list[float] = []
        self.active: list[bool] = []
        self.cls: list[int] = []  # each unit's class (-1: none yet, or no classes)

    def start(self, seed: int, episode: int) -> None:
        self.seed, self.episode, self.t = seed, episode, 0
        units = [_start_unit(seed, episode, u, self.n) for u in range(self.n_units)]
        self.x = [u[0] for u in units]
        self.y = [u[1] for u in units]
        self.h = [u[2] for u in units]
        self.s = [1.0] * self.n_units
        self.m = [1.0] * self.n_units
        self.active = [True] * self.n_units
        self.cls = [-1] * self.n_units

    def choosing(self) -> bool:
        """Whether this is the choice step of a game with classes."""
        return self.classes and self.t == 0

    def target(self, u: int) -> tuple[int, float]:
        """The enemy unit ``u`` would hit and the distance, or ``(-1, 0.0)``."""
        best, best_score, best_d = -1, -2.0, 0.0
        for v in range(self.n_units):
            if self.seat[v] == self.seat[u] or not self.active[v]:
                continue
            dx, dy = self.x[v] - self.x[u], self.y[v] - self.y[u]
            d = math.sqrt(dx * dx + dy * dy)
            f = dx * COS[self.h[u]] + dy * SIN[self.h[u]]
            if d <= FIRE_RANGE and f >= ARC_COS * d:
                score = f / d if d > 0.0 else 1.0
                if score > best_score:
                    best, best_score, best_d = v, score, d
        return best, best_d

    def damage(self, u: int, v: int, d: float) -> float:
        noise = 0.75 + 0.5 * _rng.uniform(self.seed, self.episode, self.t, u)
        range_f = 1.0 - 0.5 * d / FIRE_RANGE
        back = (self.x[u] - self.x[v]) * COS[self.h[v]] + (self.y[u] - self.y[v]) * SIN[self.h[v]]
        cos_back = back / d if d > 0.0 else 1.0
        flank = 1.25 - 0.25 * cos_back
        dmg = BASE_DAMAGE * self.s[u] * range_f * flank * noise
        return dmg * bc.damage_factor(self.cls[u], self.cls[v]) if self.classes else dmg

    def move(self, u: int, a: int) -> None:
        h = self.h[u]
        dx, dy = 0.0, 0.0
        if a == ADVANCE:
            dx, dy = ADVANCE_SPEED * COS[h], ADVANCE_SPEED * SIN[h]
        elif a == WITHDRAW:
            dx, dy = -(WITHDRAW_SPEED * COS[h]), -(WITHDRAW_SPEED * SIN[h])
        elif a == STEP_LEFT:
            dx, dy = -(STEP_SPEED * SIN[h]), STEP_SPEED * COS[h]
        elif a == STEP_RIGHT:
            dx, dy = STEP_SPEED * SIN[h], -(STEP_SPEED * COS[h])
        elif a == TURN_LEFT:
            self.h[u] = (h + 1) % N_DIRS
        elif a == TURN_RIGHT:
            self.h[u] = (h + N_DIRS - 1) % N_DIRS
        self.x[u] = min(max(self.x[u] + dx, 0.0), 1.0)
        self.y[u] = min(max(self.y[u] + dy, 0.0), 1.0)

    def step(self, actions: list[int]) -> tuple[list[float], int]:
        """Advance one step. Returns the strength lost per seat and the result:
        -1 running, 0 seat 0 lost, 1 draw, 2 seat 0 won, 3 draw at the step limit."""
        if self.choosing():
            self.cls = [bc.chosen_class(a, NUM_ACTIONS) for a in actions]
            self.t += 1
            return [0.0, 0.0], self._result()
        incoming = [0.0] * self.n_units
        firing = [False] * self.n_units
        for u in range(self.n_units):
            if self.active[u] and actions[u] == FIRE:
                v, d = self.target(u)
                if v >= 0:
                    firing[u] = True
                    incoming[v] = incoming[v] + self.damage(u, v, d)
        for u in range(self.n_units):
            if self.active[u] and not firing[u]:
                self.move(u, actions[u])
        lost = [0.0, 0.0]
        for u in range(self.n_units):
            if not self.active[u]:
                continue
            taken = min(incoming[u], self.s[u])
            self.s[u] = self.s[u] - taken
            self.m[u] = (
                self.m[u] - MORALE_LOSS * taken if taken > 0.0 else min(1.0, self.m[u] + MORALE_RECOVERY)
            )
            self.active[u] = self.s[u] > DESTROYED_STRENGTH and self.m[u] >= ROUT_MORALE
            lost[self.seat[u]] = lost[self.seat[u]] + taken
        self.t += 1
        return lost, self._result()

    def _result(self) -> int:
        out = [not any(self.active[u] for u in range(self.n_units) if self.seat[u] == s) for s in (0, 1)]
        if out[0] and out[1]:
            return 1
        if out[1]:
            return 2
        if out[0]:
            return 0
        return 3 if self.t >= self.max_steps else -1

    def observe(self, i: int) -> tuple[np.ndarray, np.ndarray]:
        """Observation and critic state of unit ``i`` in its seat's frame."""
        flip = self.seat[i] == 1
        xs = [1.0 - v for v in self.x] if flip else self.x
        ys = [1.0 - v for v in self.y] if flip else self.y
        hs = [(v + HALF_TURN) % N_DIRS for v in self.h] if flip else self.h
        hi = hs[i]
        obs = [xs[i], ys[i], COS[hi], SIN[hi], self.s[i], self.m[i], float(self.active[i])]
        aim = [self.target(u)[0] if self.active[u] else -1 for u in range(self.n_units)]
        mates = [u for u in range(self.n_units) if self.seat[u] == self.seat[i] and u != i and self.active[u]]
        for j in self.others[i]:
            if not self.active[j]:
                obs.extend([0.0] * OTHER_FEATURES)
                continue
            dx, dy = xs[j] - xs[i], ys[j] - ys[i]
            d = math.sqrt(dx * dx + dy * dy)
            ahead = dx * COS[hi] + dy * SIN[hi]
            left = dy * COS[hi] - dx * SIN[hi]
            r = (hs[j] - hi) % N_DIRS
            enemy = self.seat[j] != self.seat[i]
            their = (-dx) * COS[hs[j]] + (-dy) * SIN[hs[j]]
            targetable = enemy and d <= FIRE_RANGE and ahead >= ARC_COS * d
            threat = enemy and d <= FIRE_RANGE and their >= ARC_COS * d
            allies_aimed = sum(aim[u] == j for u in mates) / len(mates) if enemy and mates else 0.0
            obs.extend(
                [1.0, ahead, left, d, COS[r], SIN[r], self.s[j], self.m[j], float(targetable), float(threat)]
                + [float(aim[i] == j), float(enemy and aim[j] == i), allies_aimed]
            )
        obs.append(self.t / self.max_steps)
        if self.classes:
            obs.extend(bc.observe_one(self.cls, self.active, i, self.others[i], self.enemy[i]))
        state = list(obs)
        for j in self.state_order[i]:
            state.extend([xs[j], ys[j], COS[hs[j]], SIN[hs[j]], self.s[j], self.m[j], float(self.active[j])])
        return np.array(obs, dtype=np.float32), np.array(state, dtype=np.float32)

    def mask(self, i: int) -> np.ndarray:
        out = np.zeros(self.n_actions, dtype=np.int8)
        if self.choosing():
            out[NUM_ACTIONS:] = 1
            return out
        if not self.active[i]:
            out[HOLD] = 1
            return out
        out[:FIRE] = 1
        out[FIRE] = 1 if self.target(i)[0] >= 0 else 0
        return out


class BattalionParallelEnv(ParallelEnv):
    """One battle behind PettingZoo's Parallel API (plain Python; the reference semantics).

    A battalion that routs or is destroyed is terminated and leaves ``agents``; the game ends for
    everyone when one side has none left or at ``max_steps`` (truncation). ``infos[agent]`` holds
    ``action_mask`` (int8), ``reward_components`` (``damage_dealt``, ``damage_taken``,
    ``outcome_bonus`` of the agent's team) and, on the last step, ``outcome`` (the team's result:
    1 win, 0.5 draw, 0 loss).
    """

    metadata = {"name": "battalion_v1", "render_modes": []}

    def __init__(
        self, *, team_size: int = 2, max_steps: int = DEFAULT_MAX_STEPS, unit_classes: bool = False
    ) -> None:
        self.spec_ = make_spec(team_size, max_steps, unit_classes)
        self.possible_agents = list(self.spec_.agents)
        self.agents: list[str] = []
        self._game = _Game(team_size, max_steps, unit_classes)
        self._seed = _rng.fresh_seed()
        self._episode = -1
        self._index = {a: k for k, a in enumerate(self.possible_agents)}

    @functools.cache  # noqa: B019 - one space object per agent, as PettingZoo asks
    def observation_space(self, agent: str) -> gymnasium.spaces.Box:
        return gymnasium.spaces.Box(-2.0, 2.0, shape=(self.spec_.obs_dim,), dtype=np.float32)

    @functools.cache  # noqa: B019
    def action_space(self, agent: str) -> gymnasium.spaces.Discrete:
        return gymnasium.spaces.Discrete(self.spec_.num_actions)

    def state(self) -> np.ndarray:
        """The critic state of the first blue battalion (blue's view of the whole field)."""
        return self._game.observe(0)[1]

    def reset(
        self, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[dict[str, np.ndarray], dict[str, dict[str, Any]]]:
        if seed is not None:
            self._seed, self._episode = _rng.check_seed(seed), 0
        else:
            self._episode += 1
        self._game.start(self._seed, self._episode)
        self.agents = list(self.possible_agents)
        zero = {"damage_dealt": 0.0, "damage_taken": 0.0, "outcome_bonus": 0.0}
        obs = {a: self._game.observe(k)[0] for k, a in enumerate(self.possible_agents)}
        infos = {a: self._info(k, zero) for k, a in enumerate(self.possible_agents)}
        return obs, infos

    def _info(self, k: int, components: dict[str, float]) -> dict[str, Any]:
        return {"action_mask": self._game.mask(k), "reward_components": dict(components)}

    def step(self, actions: dict[str, int]) -> tuple[dict[str, Any], ...]:
        if not self.agents:
            raise RuntimeError("battalion: step() called on a finished game; call reset() first")
        acts = [int(actions.get(a, HOLD)) for a in self.possible_agents]
        lost, result = self._game.step(acts)
        n = self._game.n
        bonus0 = {0: -WIN_BONUS, 2: WIN_BONUS}.get(result, 0.0)
        parts = [
            {"damage_dealt": lost[1] / n, "damage_taken": lost[0] / n, "outcome_bonus": bonus0},
            {"damage_dealt": lost[0] / n, "damage_taken": lost[1] / n, "outcome_bonus": -bonus0},
        ]
        seat_reward = [(lost[1] - lost[0]) / n + bonus0, (lost[0] - lost[1]) / n - bonus0]
        obs, rew, term, trunc, infos = {}, {}, {}, {}, {}
        for a in self.agents:
            k = self._index[a]
            seat = self._game.seat[k]
            obs[a] = self._game.observe(k)[0]
            rew[a] = seat_reward[seat]
            term[a] = result in (0, 1, 2) or not self._game.active[k]
            trunc[a] = result == 3
            infos[a] = self._info(k, parts[seat])
            if result >= 0:
                infos[a]["outcome"] = _outcome(result) if seat == 0 else 1.0 - _outcome(result)
        self.agents = [a for a in self.agents if not (term[a] or trunc[a])]
        return obs, rew, term, trunc, infos


def _outcome(result: int) -> float:
    """Seat 0's outcome for a finished game's result code."""
    return {0: 0.0, 1: 0.5, 2: 1.0, 3: 0.5}[result]


# ----------------------------------------------------------------------------------------------
# B games in numpy: the same arithmetic, vectorised over games.
# ----------------------------------------------------------------------------------------------

_COS = np.array(COS)
_SIN = np.array(SIN)
#: per action, (dx, dy) = (m[0] cos + m[1] sin, m[2] cos + m[3] sin) of the unit's heading (the
#: zero terms add a signed zero, which leaves every position as the single-game env computes it)
_MOVE = np.zeros((8, 4))
_MOVE[ADVANCE] = (ADVANCE_SPEED, 0.0, 0.0, ADVANCE_SPEED)
_MOVE[WITHDRAW] = (-WITHDRAW_SPEED, 0.0, 0.0, -WITHDRAW_SPEED)
_MOVE[STEP_LEFT] = (0.0, -STEP_SPEED, STEP_SPEED, 0.0)
_MOVE[STEP_RIGHT] = (0.0, STEP_SPEED, -STEP_SPEED, 0.0)
#: heading change of each action
_TURN = np.zeros(8, dtype=np.int64)
_TURN[TURN_LEFT], _TURN[TURN_RIGHT] = 1, N_DIRS - 1
_OUTCOME = np.array([0.0, 0.5, 1.0, 0.5], dtype=np.float32)
#: eight compass points, counter-clockwise from east (heading 0)
_COMPASS = ("E", "NE", "N", "NW", "W", "SW", "S", "SE")
_BONUS0 = np.array([-WIN_BONUS, 0.0, WIN_BONUS, 0.0, 0.0])  # indexed by result (-1 -> last)


class BattalionBatchedEnv(BatchedEnv):
    """``num_envs`` battles stepped together; see the module docstring for the rules."""

    def __init__(
        self,
        num_envs: int,
        *,
        team_size: int = 2,
        max_steps: int = DEFAULT_MAX_STEPS,
        unit_classes: bool = False,
    ) -> None:
        if not isinstance(num_envs, int) or num_envs < 1:
            raise ValueError(f"num_envs must be a positive integer, got {num_envs!r}")
        self.spec = make_spec(team_size, max_steps, unit_classes)
        self.classes = unit_classes
        self.num_envs = num_envs
        self.n = team_size
        self.n_units = 2 * team_size
        others, state_order, seat = _orders(team_size)
        self._others, self._state_order, self._seat = others, state_order, seat
        self._flip = seat == 1
        self._enemy = seat[others] != seat[:, None]  # (U, U-1)
        self._rows = np.arange(self.n_units)[:, None]
        self._mates = (seat[:, None] == seat[None, :]) & ~np.eye(self.n_units, dtype=bool)  # (U, U)
        self._seat_firsts = np.array([[0], [team_size]])  # the first unit of each seat
        b, u = num_envs, self.n_units
        self.x, self.y = np.zeros((b, u)), np.zeros((b, u))
        self.h = np.zeros((b, u), dtype=np.int64)
        self.s, self.m = np.ones((b, u)), np.ones((b, u))
        self.active = np.ones((b, u), dtype=bool)
        self.t = np.zeros(b, dtype=np.int64)
        self.episode = np.zeros(b, dtype=np.int64)
        self.seed = np.zeros(b, dtype=np.uint64)
        self.ret = np.zeros((b, 2))
        self._tgt = np.full((b, u), -1, dtype=np.int64)
        self._dist = np.zeros((b, u))
        self.cls = np.full((b, u), -1, dtype=np.int64)  # each unit's class (-1: none yet, or no classes)
        self._classic_dim = obs_dim(team_size)  # the classic features lead the observation

    def reset(self, seed: int | None = None) -> BatchStep:
        base = _rng.check_seed(_rng.fresh_seed() if seed is None else seed)
        self.seed = (base + np.arange(self.num_envs)).astype(np.uint64)
        self.episode[:] = 0
        self._start(np.ones(self.num_envs, dtype=bool))
        zeros = np.zeros(self.num_envs, dtype=bool)
        return self._batch_step(np.zeros((self.num_envs, 2)), zeros, zeros, np.zeros(self.num_envs, np.int64))

    def render_text(self, game: int = 0, *, width: int = 41, height: int = 21) -> str:
        """Game ``game`` as a text frame: the field seen from above (north up, ``y = 1`` at the top),
        blue battalions ``A``, ``B`` ..., red ``a``, ``b`` ... (``x`` once out of play), then one
        line per battalion: position, facing, strength and morale."""
        grid = [["."] * width for _ in range(height)]
        lines = []
        for u in range(self.n_units):
            seat = int(self._seat[u])
            letter = chr((ord("A") if seat == 0 else ord("a")) + u % self.n)
            x, y = float(self.x[game, u]), float(self.y[game, u])
            row = height - 1 - min(height - 1, int(y * height))
            col = min(width - 1, int(x * width))
            grid[row][col] = letter if self.active[game, u] else "x"
            facing = _COMPASS[round(int(self.h[game, u]) * 360 / N_DIRS / 45) % 8]
            state = "" if self.active[game, u] else " (out)"
            if self.classes and self.cls[game, u] >= 0:
                state = f" {bc.CLASS_NAMES[int(self.cls[game, u])]}{state}"
            lines.append(
                f"{letter} {self.spec.agents[u]:<7} at ({x:.2f}, {y:.2f}) facing {facing:<2} "
                f"strength {self.s[game, u]:.2f} morale {self.m[game, u]:.2f}{state}"
            )
        field = ["+" + "-" * width + "+", *("|" + "".join(r) + "|" for r in grid), "+" + "-" * width + "+"]
        return "\n".join([f"step {int(self.t[game])} of {self.spec.max_steps}", *field, *lines])

    def _start(self, games: np.ndarray) -> None:
        """Fresh battles in the selected games (bool mask), same draws as :func:`_start_unit`."""
        seed, ep = self.seed[games], self.episode[games]
        for u in range(self.n_units):
            ux = _rng.uniform_np(seed, ep, 0, RESET_STREAM + 3 * u)
            uy = _rng.uniform_np(seed, ep, 0, RESET_STREAM + 3 * u + 1)
            uh = _rng.uniform_np(seed, ep, 0, RESET_STREAM + 3 * u + 2)
            x = (u % self.n + 1.0) / (self.n + 1.0) + JITTER_X * (2.0 * ux - 1.0)
            y = START_Y + JITTER_Y * (2.0 * uy - 1.0)
            h = NORTH + (uh > 0.75).astype(np.int64) - (uh < 0.25).astype(np.int64)
            if u >= self.n:
                x, y, h = 1.0 - x, 1.0 - y, (h + HALF_TURN) % N_DIRS
            self.x[games, u], self.y[games, u], self.h[games, u] = x, y, h
        self.s[games], self.m[games], self.active[games] = 1.0, 1.0, True
        self.t[games], self.ret[games] = 0, 0.0
        self.cls[games] = -1
        self._tgt, self._dist = self._targets()

    def _targets(self) -> tuple[np.ndarray, np.ndarray]:
        """For every unit, the enemy it would hit (-1 for none) and the distance to it."""
        tgt = np.full(self.x.shape, -1, dtype=np.int64)
        dist = np.zeros(self.x.shape)
        for u in range(self.n_units):
            best_score = np.full(self.num_envs, -2.0)
            cu, su = _COS[self.h[:, u]], _SIN[self.h[:, u]]
            for v in np.flatnonzero(self._seat != self._seat[u]):
                dx, dy = self.x[:, v] - self.x[:, u], self.y[:, v] - self.y[:, u]
                d = np.sqrt(dx * dx + dy * dy)
                f = dx * cu + dy * su
                ok = self.active[:, v] & (d <= FIRE_RANGE) & (f >= ARC_COS * d)
                score = np.where(d > 0.0, f / np.where(d > 0.0, d, 1.0), 1.0)
                better = ok & (score > best_score)
                tgt[:, u] = np.where(better, v, tgt[:, u])
                dist[:, u] = np.where(better, d, dist[:, u])
                best_score = np.where(better, score, best_score)
        return tgt, dist

    def _incoming(self, firing: np.ndarray) -> np.ndarray:
        """Damage each unit receives this step, summed in shooter order."""
        incoming = np.zeros(self.x.shape)
        games = np.arange(self.num_envs)
        units = np.arange(self.n_units)
        noises = 0.75 + 0.5 * _rng.uniform_np(
            self.seed[:, None], self.episode[:, None], self.t[:, None], units
        )
        for u in range(self.n_units):
            v = np.maximum(self._tgt[:, u], 0)
            d = self._dist[:, u]
            noise = noises[:, u]
            range_f = 1.0 - 0.5 * d / FIRE_RANGE
            hv = self.h[games, v]
            back = (self.x[:, u] - self.x[games, v]) * _COS[hv] + (self.y[:, u] - self.y[games, v]) * _SIN[hv]
            cos_back = np.where(d > 0.0, back / np.where(d > 0.0, d, 1.0), 1.0)
            flank = 1.25 - 0.25 * cos_back
            dmg = BASE_DAMAGE * self.s[:, u] * range_f * flank * noise
            if self.classes:
                dmg = dmg * bc.damage_factors(self.cls[:, u], self.cls[games, v])
            for w in np.flatnonzero(self._seat != self._seat[u]):
                incoming[:, w] += np.where(firing[:, u] & (self._tgt[:, u] == w), dmg, 0.0)
        return incoming

    def _move(self, a: np.ndarray, moving: np.ndarray) -> None:
        c, s = _COS[self.h], _SIN[self.h]
        k = _MOVE[a]  # (B, U, 4): each action's coefficients of cos and sin in dx and dy
        dx = k[..., 0] * c + k[..., 1] * s
        dy = k[..., 2] * c + k[..., 3] * s
        self.h = np.where(moving, (self.h + _TURN[a]) % N_DIRS, self.h)
        self.x = np.where(moving, np.minimum(np.maximum(self.x + dx, 0.0), 1.0), self.x)
        self.y = np.where(moving, np.minimum(np.maximum(self.y + dy, 0.0), 1.0), self.y)

    def _apply_damage(self, incoming: np.ndarray) -> np.ndarray:
        """Strength, morale and rout; returns the strength lost per seat, ``(B, 2)``."""
        taken = np.minimum(incoming, self.s)
        s_new = self.s - taken
        m_new = np.where(taken > 0.0, self.m - MORALE_LOSS * taken, np.minimum(1.0, self.m + MORALE_RECOVERY))
        self.s = np.where(self.active, s_new, self.s)
        self.m = np.where(self.active, m_new, self.m)
        lost = np.zeros((self.num_envs, 2))
        for u in range(self.n_units):
            seat = self._seat[u]
            lost[:, seat] = lost[:, seat] + np.where(self.active[:, u], taken[:, u], 0.0)
        self.active = self.active & (self.s > DESTROYED_STRENGTH) & (self.m >= ROUT_MORALE)
        return lost

    def step(self, actions: np.ndarray) -> BatchStep:
        a = np.asarray(actions, dtype=np.int64)
        if a.shape != (self.num_envs, self.n_units):
            raise ValueError(f"actions must have shape {(self.num_envs, self.n_units)}, got {a.shape}")
        firing = self.active & (a == FIRE) & (self._tgt >= 0)
        moving = self.active & ~firing
        if self.classes:
            a, firing, moving = self._choose(a, firing, moving)
        incoming = self._incoming(firing)
        self._move(a, moving)
        lost = self._apply_damage(incoming)
        self.t += 1
        out0 = ~self.active[:, : self.n].any(axis=1)
        out1 = ~self.active[:, self.n :].any(axis=1)
        result = np.where(out0 & out1, 1, np.where(out1, 2, np.where(out0, 0, -1)))
        result = np.where((result < 0) & (self.t >= self.spec.max_steps), 3, result)
        bonus0 = _BONUS0[result]
        reward = np.stack(
            [(lost[:, 1] - lost[:, 0]) / self.n + bonus0, (lost[:, 0] - lost[:, 1]) / self.n - bonus0], 1
        )
        self.ret += reward
        done = result >= 0
        seat_return = self.ret.copy()
        if done.any():
            self.episode[done] += 1
            self._start(done)
        else:
            self._tgt, self._dist = self._targets()
        return self._batch_step(reward, done, result == 3, result, seat_return)

    def _choose(
        self, a: np.ndarray, firing: np.ndarray, moving: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The choice step of the games at ``t = 0``: their classes are set and nobody there fires
        or moves. Returns the actions (a class action elsewhere holds), firing and moving."""
        choosing = (self.t == 0)[:, None]
        self.cls = np.where(choosing, bc.chosen_classes(a, NUM_ACTIONS), self.cls)
        a = np.where(a < NUM_ACTIONS, a, HOLD)
        return a, firing & ~choosing, moving & ~choosing

    def _batch_step(
        self,
        reward: np.ndarray,
        done: np.ndarray,
        truncated: np.ndarray,
        result: np.ndarray,
        seat_return: np.ndarray | None = None,
    ) -> BatchStep:
        obs, state, positions = self._observe()
        mask = np.zeros((self.num_envs, self.n_units, self.spec.num_actions), dtype=bool)
        mask[:, :, :FIRE] = self.active[:, :, None]
        mask[:, :, HOLD] = True
        mask[:, :, FIRE] = self.active & (self._tgt >= 0)
        if self.classes:
            choosing = (self.t == 0)[:, None, None]
            mask[:, :, :NUM_ACTIONS] &= ~choosing
            mask[:, :, NUM_ACTIONS:] = choosing
        return BatchStep(
            obs=obs,
            state=state,
            action_mask=mask,
            active=self.active.copy(),
            reward=reward[:, self._seat].astype(np.float32),
            done=done,
            truncated=truncated,
            seat_return=(self.ret if seat_return is None else seat_return).astype(np.float32),
            outcome=np.where(done, _OUTCOME[np.maximum(result, 0)], 0.5).astype(np.float32),
            positions=positions,
        )

    def _observe(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Observations, critic states and positions of every unit in its seat's frame."""
        b, u, n_obs = self.num_envs, self.n_units, self.spec.obs_dim
        flip = self._flip[None, :, None]
        xs = np.where(flip, 1.0 - self.x[:, None, :], self.x[:, None, :])  # (B, observer, unit)
        ys = np.where(flip, 1.0 - self.y[:, None, :], self.y[:, None, :])
        hs = (self.h[:, None, :] + HALF_TURN * flip) % N_DIRS
        diag = np.arange(u)
        xi, yi, hi = xs[:, diag, diag], ys[:, diag, diag], hs[:, diag, diag]
        state = np.empty((b, u, self.spec.state_dim), dtype=np.float32)
        obs = state[:, :, :n_obs]
        for k, feat in enumerate((xi, yi, _COS[hi], _SIN[hi], self.s, self.m, self.active)):
            obs[:, :, k] = feat
        self._observe_others(obs, xs, ys, hs, xi, yi, hi)
        obs[:, :, self._classic_dim - 1] = (self.t / self.spec.max_steps)[:, None]
        if self.classes:
            obs[:, :, self._classic_dim :] = bc.observe(self.cls, self.active, self._others, self._enemy)
        # the critic's view of the units is the same for every observer of a seat (units 0..n-1
        # sit in seat 0, n..2n-1 in seat 1): build it from each seat's first unit, copy it to all
        firsts, so = self._seat_firsts, self._state_order[self._seat_firsts[:, 0]]  # so: (2, U)
        hs_so = hs[:, firsts, so]
        units = (
            xs[:, firsts, so],
            ys[:, firsts, so],
            _COS[hs_so],
            _SIN[hs_so],
            self.s[:, so],
            self.m[:, so],
            self.active[:, so],
        )
        per_seat = np.empty((b, 2, u, UNIT_STATE_FEATURES), dtype=np.float32)
        for k, feat in enumerate(units):
            per_seat[..., k] = feat
        tail = state[:, :, n_obs:].reshape(b, 2, self.n, u * UNIT_STATE_FEATURES)
        tail[...] = per_seat.reshape(b, 2, 1, u * UNIT_STATE_FEATURES)
        positions = np.stack([xi, yi], -1).astype(np.float32)
        return obs.copy(), state, positions

    def _observe_others(
        self,
        obs: np.ndarray,
        xs: np.ndarray,
        ys: np.ndarray,
        hs: np.ndarray,
        xi: np.ndarray,
        yi: np.ndarray,
        hi: np.ndarray,
    ) -> None:
        """Fill the per-ally and per-enemy features of ``obs`` in place."""
        b, u = self.num_envs, self.n_units
        rows, cols = self._rows, self._others
        xj, yj, hj = xs[:, rows, cols], ys[:, rows, cols], hs[:, rows, cols]
        dx, dy = xj - xi[:, :, None], yj - yi[:, :, None]
        d = np.sqrt(dx * dx + dy * dy)
        ci, si = _COS[hi][:, :, None], _SIN[hi][:, :, None]
        ahead = dx * ci + dy * si
        r = (hj - hi[:, :, None]) % N_DIRS
        their = (-dx) * _COS[hj] + (-dy) * _SIN[hj]
        in_range = self._enemy & (d <= FIRE_RANGE)
        other = obs[:, :, OWN_FEATURES : OWN_FEATURES + OTHER_FEATURES * (u - 1)].reshape(
            b, u, u - 1, OTHER_FEATURES
        )
        feats = (
            1.0,
            ahead,
            dy * ci - dx * si,
            d,
            _COS[r],
            _SIN[r],
            self.s[:, cols],
            self.m[:, cols],
            in_range & (ahead >= ARC_COS * d),
            in_range & (their >= ARC_COS * d),
            *self._aim_features(cols),
        )
        buf = np.empty((OTHER_FEATURES, b, u, u - 1), dtype=np.float32)  # obs dtype: one cast per value
        for k, feat in enumerate(feats):
            buf[k] = feat
        buf *= self.active[:, cols]
        other[...] = np.moveaxis(buf, 0, -1)

    def _aim_features(self, cols: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``aimed``, ``aiming`` and ``allies_aimed`` of every observer for every other unit,
        each ``(B, U, U - 1)``."""
        tgt = np.where(self.active, self._tgt, -1)  # the unit each one's fire would hit now
        aimed = tgt[:, :, None] == cols[None]
        aiming = tgt[:, cols] == self._rows[None]
        mates = self._mates[None] & self.active[:, None, :]  # (B, observer, team-mate)
        hits = tgt[:, None, :, None] == cols[None, :, None, :]  # (B, observer, team-mate, other)
        share = (hits & mates[..., None]).sum(2) / np.maximum(mates.sum(2), 1)[..., None]
        return aimed, aiming, share


def make_batched(
    num_envs: int, *, team_size: int = 2, max_steps: int = DEFAULT_MAX_STEPS, unit_classes: bool = False
) -> BattalionBatchedEnv:
    """``num_envs`` battalion games in one numpy call (``team_size`` battalions a side;
    ``unit_classes``: the counter triangle of :mod:`light_league.envs.battalion_classes`)."""
    return BattalionBatchedEnv(num_envs, team_size=team_size, max_steps=max_steps, unit_classes=unit_classes)


def make_parallel(
    *, team_size: int = 2, max_steps: int = DEFAULT_MAX_STEPS, unit_classes: bool = False
) -> BattalionParallelEnv:
    """One battalion game behind PettingZoo's Parallel API."""
    return BattalionParallelEnv(team_size=team_size, max_steps=max_steps, unit_classes=unit_classes)
