"""How far above ``scripted_l5`` can a fixed battalion policy get: the headroom under the league bar.

``league.yaml``'s target asks the main agent to beat ``scripted_l5`` in 75% of its evaluation
games. This bench asks whether any policy written down by hand does. Every candidate plays
``--games`` 2v2 games against ``scripted_l5`` (half per seat) and gets a 95% Jeffreys interval:

* the scripted levels 3 and 4, and level 5 against itself;
* one-rule changes of level 5 (named below);
* a random search over ``--search`` settings of level 5's rule family (how the focus target is
  scored, when to fire at whatever is in the arc, how closely to face the target, how near to
  close in, withdraw instead of hold), ``--search-games`` games each; the best ``--top`` are
  played again on ``--games`` fresh games, since the best of many noisy readings is biased up;
* the two openings the rules leave: ``rush`` (the battalion ``scripted_l5`` does not aim at closes
  to point blank, for the range factor) and ``shield`` (it stands in the enemy's line of fire
  towards its team-mate, where ``scripted_l5`` holds its fire: it fires only when its target is
  the battalion its shot would hit).

    python bench/scripted_headroom.py                          # 1,024 games a candidate
    python bench/scripted_headroom.py --out notes/data/tuning/battalion_headroom.txt
    python bench/scripted_headroom.py --opponent scripted_l4   # the same candidates against level 4

``--opponent`` (``scripted_l3``, ``scripted_l4`` or ``scripted_l5``) names the level every
candidate plays; the rule family, the search and the openings stay level 5's, so against another
level they ask how far level 5's rules, changed, get above that level.

One process, one core; the figures are game outcomes, not timings.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path
from typing import Any

import numpy as np
from bench_output import recorded

from light_league import envs
from light_league.envs import battalion_scripted as bs
from light_league.envs.battalion import (
    ADVANCE,
    ADVANCE_SPEED,
    FIRE,
    FIRE_RANGE,
    HOLD,
    OTHER_FEATURES,
    OWN_FEATURES,
    STEP_LEFT,
    STEP_RIGHT,
    STEP_SPEED,
    TURN_LEFT,
    TURN_RIGHT,
    WITHDRAW,
    WITHDRAW_SPEED,
)
from light_league.rollout.head_to_head import match

OPPONENT = "scripted_l5"  # the default opponent; the rule family below is always level 5
LEVELS = ("scripted_l3", "scripted_l4", "scripted_l5")
TEAM = 2
_TURN = bs.TURN_STEP

#: level 5's rule family; the defaults are level 5 itself (checked on every run)
RULE_SPACE: dict[str, tuple[Any, ...]] = {
    "fire_any": (1.0, 2.0, 3.0, 4.0, 6.0, 99.0),  # fire at the arc when the turn is > this many steps
    "face_tol": (0.5, 1.0, 1.5),  # "facing" the target: within this many turn steps
    "w_strength": (0.0, 1.0),  # focus-target score = weighted strength + morale + distance + bearing
    "w_morale": (0.0, 1.0),
    "w_distance": (0.0, 0.3, 1.0, 3.0),
    "w_bearing": (0.0, 0.1, 0.3, 1.0),
    "close": (0.2, 0.4, FIRE_RANGE),  # advance on the target while farther than this
    "withdraw": (False, True),  # withdraw (not hold) while facing a target in range that fire misses
}
L5 = {
    "fire_any": 3.0,
    "face_tol": 0.5,
    "w_strength": 0.0,
    "w_morale": 1.0,
    "w_distance": 0.0,
    "w_bearing": 0.0,
    "close": FIRE_RANGE,
    "withdraw": False,
}
#: one-rule changes of level 5
NAMED: dict[str, dict[str, Any]] = {
    "l5, fire at the arc after 1 turn": {"fire_any": 1.0},
    "l5, fire at the arc after 2 turns": {"fire_any": 2.0},
    "l5, never fire off target": {"fire_any": 99.0},
    "l5, close to 0.2": {"close": 0.2},
    "l5, facing within 1 turn": {"face_tol": 1.0},
    "l5, focus on strength + morale": {"w_strength": 1.0},
    "l5, focus the nearest weak": {"w_distance": 1.0},
    "l5, focus the one in line": {"w_bearing": 0.3},
    "l5, withdraw not hold": {"withdraw": True},
}


def _split(obs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The ally's and the enemies' feature rows of 2v2 observations."""
    others = obs[:, OWN_FEATURES:-1].reshape(len(obs), 2 * TEAM - 1, OTHER_FEATURES)
    return others[:, 0], others[:, TEAM - 1 :]


def _log_probs(action: np.ndarray, mask: np.ndarray) -> np.ndarray:
    rows = np.arange(len(action))
    action = np.where(mask[rows, action], action, HOLD)
    return np.where(mask, np.log(np.maximum(bs.one_hot(action), 1e-30)), -np.inf).astype(np.float32)


class RulePolicy:
    """Level 5's rules with its constants as settings (``L5`` is level 5 itself)."""

    def __init__(self, **settings: Any) -> None:
        self.s = {**L5, **settings}

    def actions(self, obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
        s = self.s
        _, enemies = _split(obs)
        rows = np.arange(len(obs))
        score = (
            s["w_strength"] * enemies[..., 6]
            + s["w_morale"] * enemies[..., 7]
            + s["w_distance"] * enemies[..., 3]
            + s["w_bearing"] * np.abs(bs.enemy_bearing(enemies))
        )
        target = bs.weakest_in_range(enemies, score)
        chosen = enemies[rows, target]
        bearing = bs.enemy_bearing(chosen)
        turn = np.where(bearing > 0.0, TURN_LEFT, TURN_RIGHT)
        hits = mask[:, FIRE] & (chosen[:, 8] > 0.5) & bs.most_centred(enemies, target)
        facing = np.abs(bearing) <= s["face_tol"] * _TURN
        idle = WITHDRAW if s["withdraw"] else HOLD
        action = np.where(
            hits, FIRE, np.where(facing, np.where(chosen[:, 3] > s["close"], ADVANCE, idle), turn)
        )
        return np.where(~hits & mask[:, FIRE] & (np.abs(bearing) > s["fire_any"] * _TURN), FIRE, action)

    def change(self, obs: np.ndarray, mask: np.ndarray, idx: np.ndarray, action: np.ndarray) -> np.ndarray:
        """The openings' departures from the rules (none here)."""
        return action

    def log_probs(self, obs: np.ndarray, mask: np.ndarray, agent_idx: np.ndarray) -> np.ndarray:
        obs, mask = np.asarray(obs, dtype=np.float64), np.asarray(mask, dtype=bool)
        return _log_probs(self.change(obs, mask, np.asarray(agent_idx), self.actions(obs, mask)), mask)


class RushPolicy(RulePolicy):
    """Level 5, except that battalion 1 (``scripted_l5`` aims at battalion 0 while both are fresh)
    advances on the focus target without firing until it is within ``close``."""

    def __init__(self, close: float) -> None:
        super().__init__()
        self.close = close

    def change(self, obs: np.ndarray, mask: np.ndarray, idx: np.ndarray, action: np.ndarray) -> np.ndarray:
        _, enemies = _split(obs)
        rows = np.arange(len(obs))
        chosen = enemies[rows, bs.weakest_in_range(enemies, enemies[..., 7])]
        bearing = bs.enemy_bearing(chosen)
        rush = np.where(
            np.abs(bearing) <= 0.5 * _TURN, ADVANCE, np.where(bearing > 0.0, TURN_LEFT, TURN_RIGHT)
        )
        mine = (idx == 1) & (obs[:, 6] > 0.5) & (chosen[:, 3] > self.close)
        return np.where(mine, rush, action)


_MOVES = {
    ADVANCE: (ADVANCE_SPEED, 0.0),
    WITHDRAW: (-WITHDRAW_SPEED, 0.0),
    STEP_LEFT: (0.0, STEP_SPEED),
    STEP_RIGHT: (0.0, -STEP_SPEED),
}


class ShieldPolicy(RulePolicy):
    """Level 5 for battalion 0 (without advancing); battalion 1 walks to where the enemies' lines
    of fire meet (or onto the nearest enemy's line towards battalion 0) and fires once there."""

    def __init__(self, tolerance: float) -> None:
        super().__init__()
        self.tolerance = tolerance

    def change(self, obs: np.ndarray, mask: np.ndarray, idx: np.ndarray, action: np.ndarray) -> np.ndarray:
        action = np.where((idx == 0) & (action == ADVANCE), HOLD, action)
        ally, enemies = _split(obs)
        for r in np.flatnonzero((idx == 1) & (obs[:, 6] > 0.5) & (ally[:, 0] > 0.5)):
            live = [k for k in range(TEAM) if enemies[r, k, 0] > 0.5]
            at = [enemies[r, k, 1:3] for k in live]  # (ahead, left) in our frame
            heading = [enemies[r, k, 4:6] for k in live]
            mate = ally[r, 1:3]
            spot = None
            if len(live) == 2:
                lhs = np.stack([heading[0], -heading[1]], 1)
                if abs(np.linalg.det(lhs)) > 1e-6:
                    t = np.linalg.solve(lhs, at[1] - at[0])
                    meet = at[0] + t[0] * heading[0]
                    if (t > 0).all() and np.linalg.norm(meet - mate) < 0.15:
                        spot = meet
            if spot is None:
                k = int(np.argmin([np.linalg.norm(mate - a) for a in at]))
                spot = at[k] + max(float(np.dot(mate - at[k], heading[k])), 0.0) * heading[k]
            if np.linalg.norm(spot) < self.tolerance:
                action[r] = FIRE if mask[r, FIRE] else HOLD
                continue
            gaps = {a: np.linalg.norm(spot - np.array(move)) for a, move in _MOVES.items()}
            best = min(gaps, key=lambda a: gaps[a])
            action[r] = best if gaps[best] < np.linalg.norm(spot) else HOLD
        return action


def play(policy: Any, games: int, seed: int, against: str = OPPONENT) -> tuple[float, float, float]:
    """``policy``'s score against ``against`` (wins + draws / 2) and its 95% interval."""
    env = envs.make_batched("battalion", num_envs=min(games, 128), team_size=TEAM)
    opponent = envs.make_fixed_policy("battalion", against, team_size=TEAM)
    result = match(env, policy, opponent, games, seed=seed)
    return result.score, *result.score_ci95


def check_rule_family_is_level_5(seed: int = 0) -> None:
    """``RulePolicy()`` must choose level 5's action everywhere (on a few hundred real states)."""
    env = envs.make_batched("battalion", num_envs=64, team_size=TEAM)
    level5 = envs.make_fixed_policy("battalion", OPPONENT, team_size=TEAM)
    step, rng = env.reset(seed=seed), np.random.default_rng(seed)
    for _ in range(30):
        obs = step.obs.reshape(-1, step.obs.shape[-1])
        mask = step.action_mask.reshape(-1, step.action_mask.shape[-1])
        ours = RulePolicy().actions(obs.astype(np.float64), mask)
        theirs = level5.log_probs(obs, mask, np.zeros(len(obs), dtype=np.int64)).argmax(1)
        live = mask.sum(1) > 1
        if not np.array_equal(ours[live], theirs[live]):
            raise AssertionError("RulePolicy() no longer plays scripted_l5: the bench's rule family is stale")
        legal = np.where(mask, rng.random(mask.shape), -1.0).argmax(1)  # wander: reach varied states
        step = env.step(legal.reshape(step.obs.shape[:2]))


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--games", type=int, default=1024, help="games per candidate (half per seat)")
    ap.add_argument("--search", type=int, default=200, help="random settings of the rule family")
    ap.add_argument("--search-games", type=int, default=256)
    ap.add_argument("--top", type=int, default=5, help="best settings of the search played again")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--opponent", choices=LEVELS, default=OPPONENT, help="the level every candidate plays")
    ap.add_argument("--out", type=Path, help="also write the output to this file")
    args = ap.parse_args(argv)
    check_rule_family_is_level_5(args.seed)
    start = time.perf_counter()
    with recorded(args.out):
        print(
            f"Against {args.opponent}, 2v2, {args.games} games a candidate (half per seat): score (wins + draws/2)"
        )
        print("and its 95% Jeffreys interval.\n")
        # level 5 plays through the rule family (checked above to be scripted_l5)
        levels = {lv: envs.make_fixed_policy("battalion", lv, team_size=TEAM) for lv in LEVELS[:-1]}
        levels["scripted_l5"] = RulePolicy()
        rows: list[tuple[str, Any]] = [
            *((lv + (" (itself)" if lv == args.opponent else ""), policy) for lv, policy in levels.items()),
            *((name, RulePolicy(**change)) for name, change in NAMED.items()),
            *((f"rush to {close}", RushPolicy(close)) for close in (0.1, 0.3)),
            *((f"shield, within {tol}", ShieldPolicy(tol)) for tol in (0.015, 0.03)),
        ]
        width = max(len(name) for name, _ in rows) + 2
        fresh = args.seed + 10_000
        for name, policy in rows:
            print(_line(name, play(policy, args.games, fresh, args.opponent), width))
        rng = np.random.default_rng(args.seed)
        found = []
        for i in range(args.search):
            setting = {key: values[rng.integers(len(values))] for key, values in RULE_SPACE.items()}
            found.append(
                (play(RulePolicy(**setting), args.search_games, args.seed + i, args.opponent)[0], setting)
            )
        found.sort(key=lambda item: -item[0])
        print(
            f"\nRandom search: {args.search} settings of level 5's rule family, {args.search_games} games each;"
            f" the best {args.top}"
        )
        print(f"(their search reading, then {args.games} fresh games):")
        for reading, setting in found[: args.top]:
            changed = {k: v for k, v in setting.items() if v != L5[k]} or "level 5"
            score, low, high = play(RulePolicy(**setting), args.games, fresh, args.opponent)
            print(f"  search {reading:.3f}  fresh {score:.3f} [{low:.3f}, {high:.3f}]  {changed}")
        median = float(np.median([s for s, _ in found]))
        print(f"  median search reading {median:.3f}; {time.perf_counter() - start:.0f} s in all")


def _line(name: str, result: tuple[float, float, float], width: int) -> str:
    score, low, high = result
    return f"  {name:<{width}}{score:.3f} [{low:.3f}, {high:.3f}]"


if __name__ == "__main__":
    main()
