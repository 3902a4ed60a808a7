"""Scripted battalion opponents, levels 1 (weakest) to 5, acting from the observation vector only.

They satisfy the framework's ``Policy`` protocol structurally (``log_probs(obs, mask, agent_idx)``)
and read the observation layout documented in :mod:`light_league.envs.battalion` (the team size is read from
the observation width, so one policy object plays 1v1, 2v2 or 3v3):

* level 1 mostly holds its ground, drifts now and then and fires only occasionally;
* level 2 turns towards the nearest enemy and fires about half the time it can;
* level 3 (deterministic) fires whenever it can, otherwise turns to the nearest enemy or advances;
* level 4 (deterministic) concentrates on the weakest enemy in range (the lowest strength):
  turns to centre it in the arc so its shots hit that one, holds its fire while another enemy
  is nearer the line of fire, and advances only while the target is out of range;
* level 5 (deterministic) is level 4 with the whole team on one target (the enemy in range with
  the lowest morale, which every ally sees alike; the first in seat order while they are level),
  firing at whatever is in its arc while the focus target is outside it (more than 45 degrees
  off its facing).

With ``unit_classes`` (:mod:`light_league.envs.battalion_classes`) every level plays the same way after the
choice step, where it picks each battalion's class uniformly at random (the even mixture, which
no choice of classes beats). Level 5's committed variants, ``scripted_l5_infantry``,
``scripted_l5_cavalry`` and ``scripted_l5_archers``, choose their class for every battalion, then
play as level 5; they are fixed opponents of the env only with the option on.

The rules' pieces (``enemy_bearing``, ``nearest``, ``weakest_in_range``, ``most_centred``,
``one_hot``, ``TURN_STEP``) are public: ``bench/scripted_headroom.py`` builds level 5's variants
from them.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from light_league.envs import battalion_classes as bc
from light_league.envs.base import EnvSpec
from light_league.envs.battalion import (
    ADVANCE,
    FIRE,
    FIRE_RANGE,
    HOLD,
    NUM_ACTIONS,
    OTHER_FEATURES,
    OWN_FEATURES,
    TURN_LEFT,
    TURN_RIGHT,
    obs_dim,
)
from light_league.envs.parallel import UniformRandomPolicy

#: one turn action, in radians
TURN_STEP = 2.0 * math.pi / 24.0
#: probabilities of level 1: hold, fire (when legal), and a drift shared by the six moves.
_L1_HOLD, _L1_FIRE, _L1_DRIFT = 0.45, 0.35, 0.2


class ScriptedBattalionPolicy:
    """A fixed battalion opponent of the given ``level`` (1..5) for ``spec.team_size`` a side;
    with ``unit_classes``, ``commit`` (a class of :mod:`light_league.envs.battalion_classes`) is the class it
    chooses for every battalion (None: each one's uniformly at random)."""

    def __init__(self, spec: EnvSpec, level: int, commit: int | None = None) -> None:
        if spec.name != "battalion":
            raise ValueError(f"scripted battalion policies need the battalion env, got {spec.name!r}")
        if level not in range(1, 6):
            raise ValueError(f"scripted level must be in 1..5, got {level!r}")
        if commit is not None and spec.num_actions != NUM_ACTIONS + bc.N_CLASSES:
            raise ValueError(
                f"a scripted policy committed to {bc.CLASS_NAMES[commit]} needs the battalion env with "
                "unit classes; set env.options.unit_classes: true"
            )
        self.spec = spec
        self.level = level
        self.commit = commit

    def log_probs(self, obs: np.ndarray, mask: np.ndarray, agent_idx: np.ndarray) -> np.ndarray:
        obs = np.asarray(obs, dtype=np.float64)
        mask = np.asarray(mask, dtype=bool)
        n = _team_size(obs.shape[1], classes=mask.shape[1] > NUM_ACTIONS)
        rows = obs[:, OWN_FEATURES : OWN_FEATURES + OTHER_FEATURES * (2 * n - 1)]
        enemies = rows.reshape(len(obs), 2 * n - 1, OTHER_FEATURES)[:, n - 1 :]
        if self.level == 1:
            probs = self._level1(mask)
        elif self.level == 2:
            probs = self._level2(enemies, mask)
        else:
            probs = one_hot(self._deterministic(enemies, mask), mask.shape[1])
        if mask.shape[1] > NUM_ACTIONS:
            probs = self._choose(probs, mask)
        probs = np.where(mask, probs, 0.0)
        total = probs.sum(axis=1, keepdims=True)
        probs = np.where(
            total > 0.0, probs / np.where(total > 0.0, total, 1.0), mask / mask.sum(1, keepdims=True)
        )
        with np.errstate(divide="ignore"):
            return np.where(mask, np.log(probs), -np.inf).astype(np.float32)

    def _choose(self, probs: np.ndarray, mask: np.ndarray) -> np.ndarray:
        """On the choice step (its actions legal), the committed class or each class alike."""
        choosing = mask[:, NUM_ACTIONS:].any(axis=1, keepdims=True)
        if self.commit is None:
            choice = np.zeros(mask.shape)
            choice[:, NUM_ACTIONS:] = 1.0
        else:
            choice = one_hot(np.full(len(mask), NUM_ACTIONS + self.commit), mask.shape[1])
        return np.where(choosing, choice, probs)

    @staticmethod
    def _level1(mask: np.ndarray) -> np.ndarray:
        probs = np.full(mask.shape, _L1_DRIFT / (NUM_ACTIONS - 2))
        probs[:, HOLD] = _L1_HOLD
        probs[:, FIRE] = _L1_FIRE
        return probs

    def _level2(self, enemies: np.ndarray, mask: np.ndarray) -> np.ndarray:
        bearing = enemy_bearing(enemies[np.arange(len(enemies)), nearest(enemies)])
        turn = np.where(bearing > 0.0, TURN_LEFT, TURN_RIGHT)
        probs = np.zeros(mask.shape)
        probs[:, HOLD] = 0.5
        can_fire = mask[:, FIRE]
        off_line = ~can_fire & (np.abs(bearing) > 1.5 * TURN_STEP)
        rows = np.arange(len(mask))
        probs[rows, np.where(can_fire, FIRE, np.where(off_line, turn, ADVANCE))] += 0.5
        return probs

    def _deterministic(self, enemies: np.ndarray, mask: np.ndarray) -> np.ndarray:
        rows = np.arange(len(enemies))
        if self.level == 3:
            target = nearest(enemies)
        else:
            target = weakest_in_range(enemies, enemies[..., 6 if self.level == 4 else 7])
        chosen = enemies[rows, target]
        bearing = enemy_bearing(chosen)
        turn = np.where(bearing > 0.0, TURN_LEFT, TURN_RIGHT)
        if self.level == 3:
            move = np.where(np.abs(bearing) > 2.0 * TURN_STEP, turn, ADVANCE)
            return np.where(mask[:, FIRE], FIRE, move)
        hits_target = mask[:, FIRE] & (chosen[:, 8] > 0.5) & most_centred(enemies, target)
        facing = np.abs(bearing) <= 0.5 * TURN_STEP
        move = np.where(facing, np.where(chosen[:, 3] > FIRE_RANGE, ADVANCE, HOLD), turn)
        action = np.where(hits_target, FIRE, move)
        if self.level == 5:
            long_turn = np.abs(bearing) > 3.0 * TURN_STEP
            action = np.where(~hits_target & mask[:, FIRE] & long_turn, FIRE, action)
        return action


def _team_size(width: int, *, classes: bool = False) -> int:
    """Battalions a side, read from the observation width (the policy works at any team size);
    ``classes``: the observation of a game with unit classes (its mask has the choice actions)."""
    per = 2 * (OTHER_FEATURES + (bc.OTHER_CLASS_FEATURES if classes else 0))
    n = round((width - obs_dim(0, classes)) / per)
    if n < 1 or obs_dim(n, classes) != width:
        form = "34 x team_size - 6" if classes else "26 x team_size - 5"
        raise ValueError(f"observation width {width} is not a battalion observation ({form})")
    return n


def enemy_bearing(enemy: np.ndarray) -> np.ndarray:
    """Angle of the enemy off our facing, positive to the left (radians)."""
    return np.arctan2(enemy[..., 2], enemy[..., 1])


def nearest(enemies: np.ndarray) -> np.ndarray:
    """The nearest live enemy."""
    dist = np.where(enemies[..., 0] > 0.5, enemies[..., 3], np.inf)
    return np.argmin(dist, axis=1)


def weakest_in_range(enemies: np.ndarray, score: np.ndarray) -> np.ndarray:
    """The enemy in range with the lowest ``score``, or the nearest one when none is in range."""
    in_range = (enemies[..., 0] > 0.5) & (enemies[..., 3] <= FIRE_RANGE)
    weakest = np.argmin(np.where(in_range, score, np.inf), axis=1)
    return np.where(in_range.any(axis=1), weakest, nearest(enemies))


def most_centred(enemies: np.ndarray, target: np.ndarray) -> np.ndarray:
    """Whether ``target`` is the targetable enemy closest to the line of fire (the one fire hits)."""
    off = np.where(enemies[..., 8] > 0.5, np.abs(enemy_bearing(enemies)), np.inf)
    return np.argmin(off, axis=1) == target


def one_hot(action: np.ndarray, width: int = NUM_ACTIONS) -> np.ndarray:
    """Probability rows (N, ``width``) that choose ``action``."""
    out = np.zeros((len(action), width))
    out[np.arange(len(action)), action] = 1.0
    return out


def _scripted(level: int, commit: int | None = None) -> Callable[[EnvSpec], ScriptedBattalionPolicy]:
    def build(spec: EnvSpec) -> ScriptedBattalionPolicy:
        return ScriptedBattalionPolicy(spec, level, commit)

    return build


#: Fixed opponents (Elo baselines) of the battalion env: scripted levels 1 (weakest) .. 5 and
#: uniform random (the registry reads them here: ``EnvEntry.policies``).
FIXED_POLICIES: dict[str, Callable[[EnvSpec], Any]] = {
    **{f"scripted_l{k}": _scripted(k) for k in range(1, 6)},
    "random": UniformRandomPolicy,
}

#: The fixed opponent every "vs baseline" figure of a run is against (where the run has it as a
#: baseline): the strongest scripted level, the same in every generation.
REFERENCE_OPPONENT = "scripted_l5"

#: Fixed Elo ratings of the fixed opponents, which anchor the league's rating scale: random at
#: 800, scripted level 1 at 1000 (a new agent's initial rating) and 100 more per level.
FIXED_POLICY_RATINGS: dict[str, float] = {
    "random": 800.0,
    **{f"scripted_l{k}": 900.0 + 100.0 * k for k in range(1, 6)},
}

#: Level 5 committed to each unit class: fixed opponents only with ``unit_classes`` (each beats
#: one of the others and loses to the third; docs/battalion.md, "Unit classes")
COMMITTED: dict[str, Callable[[EnvSpec], Any]] = {
    f"scripted_l5_{name}": _scripted(5, k) for k, name in enumerate(bc.CLASS_NAMES)
}


#: what a fixed opponent that exists only with some env options needs (the registry's
#: ``fixed_policy_needs``: a one-line error names it)
FIXED_POLICY_NEEDS: dict[str, str] = {name: "env.options.unit_classes: true" for name in COMMITTED}


def fixed_policies_for(*, unit_classes: bool = False, **_: Any) -> dict[str, Callable[[EnvSpec], Any]]:
    """The fixed opponents of a game with these env options (the registry's ``fixed_policy_names``):
    :data:`FIXED_POLICIES`, and with ``unit_classes`` the :data:`COMMITTED` scripts."""
    return {**FIXED_POLICIES, **(COMMITTED if unit_classes is True else {})}


def fixed_policy_ratings_for(*, unit_classes: bool = False, **_: Any) -> dict[str, float]:
    """The fixed ratings of :func:`fixed_policies_for`'s opponents: a committed script at level 5's."""
    committed = {name: FIXED_POLICY_RATINGS["scripted_l5"] for name in COMMITTED}
    return {**FIXED_POLICY_RATINGS, **(committed if unit_classes is True else {})}
