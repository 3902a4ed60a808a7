"""Env throughput: the batched fast path vs a plain per-game loop over the PettingZoo API.

For each env and batch size B both sides play B games with uniformly random legal actions for a
fixed wall-clock budget and count agent-steps (decisions of agents that had to act). The batched
side draws all actions with one vectorised call per step; the per-game side steps B single-game
Parallel envs one after another, drawing each action with ``random`` from the legal ones (the
mask read straight from the observation dict or the info dict, whichever the env uses). Both run
in this process, side by side, so the ratio is meaningful even on a busy machine.

    python bench/env_throughput.py            # ~1 s per measurement
    python bench/env_throughput.py --quick    # smoke run
"""

from __future__ import annotations

import argparse
import random
import time
from typing import Any

import numpy as np

import envs

CASES: list[tuple[str, str, dict[str, Any]]] = [
    ("battalion 2v2", "battalion", {"team_size": 2}),
    ("leduc_poker", "leduc_poker", {}),
    ("kuhn_poker", "kuhn_poker", {}),
    ("rps", "rps", {}),
]


def batched_rate(name: str, kwargs: dict[str, Any], num_envs: int, budget_s: float) -> float:
    """Agent-steps per second of ``make_batched(name, num_envs)`` under random legal actions."""
    env = envs.make_batched(name, num_envs, **kwargs)
    rng = np.random.default_rng(0)
    step = env.reset(seed=0)
    agent_steps = 0
    start = time.perf_counter()
    while time.perf_counter() - start < budget_s:
        actions = np.argmax(step.action_mask * rng.random(step.action_mask.shape, dtype=np.float32), axis=-1)
        agent_steps += int(step.active.sum())
        step = env.step(actions)
    return agent_steps / (time.perf_counter() - start)


def per_game_rate(name: str, kwargs: dict[str, Any], num_envs: int, budget_s: float) -> float:
    """Agent-steps per second of a loop over ``num_envs`` single-game Parallel envs."""
    games = [envs.make_parallel(name, **kwargs) for _ in range(num_envs)]
    current = [game.reset(seed=b) for b, game in enumerate(games)]
    rand = random.Random(0)
    agent_steps = 0
    start = time.perf_counter()
    while time.perf_counter() - start < budget_s:
        for b, game in enumerate(games):
            obs, infos = current[b]
            actions = {}
            for agent in game.agents:
                ob = obs[agent]
                legal = np.flatnonzero(
                    ob["action_mask"] if isinstance(ob, dict) else infos[agent]["action_mask"]
                )
                actions[agent] = int(legal[rand.randrange(len(legal))]) if len(legal) else 0
                agent_steps += len(legal) > 0
            obs, _, _, _, infos = game.step(actions)
            current[b] = (obs, infos) if game.agents else game.reset()
    return agent_steps / (time.perf_counter() - start)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="short budget and small batches (smoke run)")
    args = parser.parse_args()
    budget = 0.2 if args.quick else 1.0
    sizes = (1, 64) if args.quick else (1, 64, 1024)
    print(f"{'env':<14} {'B':>5} {'batched ag-steps/s':>19} {'per-game ag-steps/s':>20} {'ratio':>7}")
    for label, name, kwargs in CASES:
        for num_envs in sizes:
            fast = batched_rate(name, kwargs, num_envs, budget)
            slow = per_game_rate(name, kwargs, num_envs, budget)
            print(f"{label:<14} {num_envs:>5} {fast:>19,.0f} {slow:>20,.0f} {fast / slow:>6.1f}x")


if __name__ == "__main__":
    main()
