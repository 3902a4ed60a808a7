"""Battalion's unit classes (``unit_classes: true``): a counter triangle chosen at the start.

With the option on, every battalion belongs to one of three classes, which its team chooses on
the game's first step (the *choice step*): the three actions ``choose_infantry``,
``choose_cavalry`` and ``choose_archers`` are the only legal ones then, and only then. Nothing
moves or fires on the choice step; it counts towards ``max_steps`` like any other step.

The classes differ in one thing only, the damage their fire does to each other class:

* infantry beats cavalry, cavalry beats archers, archers beat infantry;
* fire into the class it beats does :data:`STRONG` times the classic damage, fire into the class
  that beats it :data:`WEAK` times, fire into its own class the classic damage.

Every class is visible to both teams from the step after the choice: the observation appends
the observer's class (one-hot, 3), then for each other battalion in the classic order (allies,
then enemies) its class (one-hot, 3) and ``edge`` (+1: our fire into it is strong, -1: weak, 0
otherwise or for an ally), all zero before the choice and once the battalion is out of play.
The critic's state starts with the observation, so it holds them too.

This module holds the rules' numbers and their vectorised pieces; :mod:`light_league.envs.battalion` applies
them in both of its faces.
"""

from __future__ import annotations

from typing import Any

import numpy as np

INFANTRY, CAVALRY, ARCHERS = range(3)
CLASS_NAMES = ("infantry", "cavalry", "archers")
N_CLASSES = len(CLASS_NAMES)
#: damage multiplier into the class a class beats (the next one: infantry -> cavalry -> archers ->
#: infantry) and into the class that beats it
STRONG = 1.5
WEAK = 1.0 / STRONG
#: ``EDGE[a, b]``: +1 where class ``a`` beats class ``b``, -1 where ``b`` beats ``a``, else 0
EDGE = np.array(
    [
        [((b - a) % N_CLASSES == 1) - ((a - b) % N_CLASSES == 1) for b in range(N_CLASSES)]
        for a in range(N_CLASSES)
    ]
)
#: ``DAMAGE[shooter class, target class]``: the multiplier of the classic damage
DAMAGE = np.where(EDGE > 0, STRONG, np.where(EDGE < 0, WEAK, 1.0))
#: the class actions, numbered after the classic eight (``light_league.envs.battalion.NUM_ACTIONS``)
CHOICE_NAMES = tuple(f"choose_{name}" for name in CLASS_NAMES)
OWN_CLASS_FEATURES = N_CLASSES
OTHER_CLASS_FEATURES = N_CLASSES + 1


def extra_obs_dim(team_size: int) -> int:
    """Observation features the classes append for ``team_size`` battalions a side."""
    return OWN_CLASS_FEATURES + OTHER_CLASS_FEATURES * (2 * team_size - 1)


def check_option(unit_classes: Any) -> None:
    """A one-line error for anything but a bool."""
    if not isinstance(unit_classes, bool):
        raise ValueError(
            f"battalion unit_classes must be true or false, got {unit_classes!r}; write unit_classes: true "
            "for the counter triangle of docs/battalion.md, or leave it out for the classic rules"
        )


def chosen_class(action: int, first_choice: int) -> int:
    """The class a choice-step action picks (plain Python); an action that is no choice picks infantry."""
    k = action - first_choice
    return k if 0 <= k < N_CLASSES else INFANTRY


def chosen_classes(actions: np.ndarray, first_choice: int) -> np.ndarray:
    """:func:`chosen_class` of every entry of ``actions``."""
    k = actions - first_choice
    return np.where((k >= 0) & (k < N_CLASSES), k, INFANTRY)


def damage_factor(shooter: int, target: int) -> float:
    """The multiplier of the classic damage (plain Python; 1 before the classes are chosen)."""
    return 1.0 if shooter < 0 or target < 0 else float(DAMAGE[shooter, target])


def damage_factors(shooter: np.ndarray, target: np.ndarray) -> np.ndarray:
    """:func:`damage_factor` of every pair."""
    known = (shooter >= 0) & (target >= 0)
    return np.where(known, DAMAGE[np.maximum(shooter, 0), np.maximum(target, 0)], 1.0)


def one_hot(cls: int) -> list[float]:
    """A class as three floats (all zero for none yet)."""
    return [float(cls == k) for k in range(N_CLASSES)]


def observe_one(
    cls: list[int], active: list[bool], i: int, others: list[int], enemy: list[bool]
) -> list[float]:
    """The class features of observer ``i`` (plain Python; the reference of :func:`observe`)."""
    out = one_hot(cls[i])
    for j, is_enemy in zip(others, enemy, strict=True):
        if not active[j] or cls[j] < 0:
            out.extend([0.0] * OTHER_CLASS_FEATURES)
            continue
        edge = float(EDGE[cls[i], cls[j]]) if is_enemy and cls[i] >= 0 else 0.0
        out.extend([*one_hot(cls[j]), edge])
    return out


def _row_table() -> np.ndarray:
    """``ROWS[ci + 1, cj + 1, enemy]``: what an observer of class ``ci`` sees of a unit of class
    ``cj`` in play (class -1: none yet, index 0), by :func:`observe_one`'s rule."""
    out = np.zeros((N_CLASSES + 1, N_CLASSES + 1, 2, OTHER_CLASS_FEATURES))
    for ci in range(-1, N_CLASSES):
        for cj in range(N_CLASSES):
            for enemy in (False, True):
                seen = observe_one([ci, cj], [True, True], 0, [1], [enemy])
                out[ci + 1, cj + 1, int(enemy)] = seen[OWN_CLASS_FEATURES:]
    return out


ROWS = _row_table()
#: ``OWN[c + 1]``: the observer's own class features (class -1: none yet)
OWN = np.array([one_hot(c) for c in range(-1, N_CLASSES)])


def observe(cls: np.ndarray, active: np.ndarray, others: np.ndarray, enemy: np.ndarray) -> np.ndarray:
    """The class features of every observer, ``(B, U, extra_obs_dim)``: ``cls`` ``(B, U)`` (-1
    before the choice), ``active`` ``(B, U)``, ``others`` ``(U, U - 1)`` (each observer's other
    units in observation order), ``enemy`` ``(U, U - 1)`` (which of them are enemies)."""
    b, u = cls.shape
    rows = ROWS[cls[:, :, None] + 1, cls[:, others] + 1, enemy.astype(np.int64)]  # (B, U, U - 1, 4)
    rows *= active[:, others, None]
    return np.concatenate([OWN[cls + 1], rows.reshape(b, u, (u - 1) * OTHER_CLASS_FEATURES)], axis=-1)
