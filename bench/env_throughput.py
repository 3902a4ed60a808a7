"""Env throughput: the batched fast path vs a plain per-game loop over the PettingZoo API.

For each env and batch size B both sides play B games with uniformly random legal actions for a
fixed wall-clock budget (3 s each, in ten alternating slices, so a change in the machine's speed
hits both sides alike) and count agent-steps (decisions of agents that had to act). The batched
side draws all actions with one vectorised call per step; the per-game side steps B single-game
Parallel envs one after another, drawing each action with ``random`` from the legal ones (the
mask read straight from the observation dict or the info dict, whichever the env uses). Both run
in this process, side by side, so the ratio is meaningful even on a busy machine.

    python bench/env_throughput.py            # 3 s per side and measurement, ~75 s in all
    python bench/env_throughput.py --quick    # smoke run
"""

from __future__ import annotations

import argparse
import random
import time
from pathlib import Path
from typing import Any

import numpy as np
from bench_output import recorded

from light_league import envs

CASES: list[tuple[str, str, dict[str, Any]]] = [
    ("battalion 2v2", "battalion", {"team_size": 2}),
    ("leduc_poker", "leduc_poker", {}),
    ("kuhn_poker", "kuhn_poker", {}),
    ("rps", "rps", {}),
]


class Batched:
    """``make_batched(name, num_envs)`` under random legal actions, advanced in time slices."""

    def __init__(self, name: str, kwargs: dict[str, Any], num_envs: int) -> None:
        self.env = envs.make_batched(name, num_envs, **kwargs)
        self.rng = np.random.default_rng(0)
        self.step = self.env.reset(seed=0)

    def advance(self, budget_s: float) -> tuple[int, float]:
        """Play for ``budget_s``; agent-steps taken and seconds spent."""
        agent_steps = 0
        start = time.perf_counter()
        while time.perf_counter() - start < budget_s:
            mask = self.step.action_mask
            actions = np.argmax(mask * self.rng.random(mask.shape, dtype=np.float32), axis=-1)
            agent_steps += int(self.step.active.sum())
            self.step = self.env.step(actions)
        return agent_steps, time.perf_counter() - start


class PerGame:
    """``num_envs`` single-game Parallel envs stepped one after another, advanced in time slices."""

    def __init__(self, name: str, kwargs: dict[str, Any], num_envs: int) -> None:
        self.games = [envs.make_parallel(name, **kwargs) for _ in range(num_envs)]
        self.current = [game.reset(seed=b) for b, game in enumerate(self.games)]
        self.rand = random.Random(0)

    def advance(self, budget_s: float) -> tuple[int, float]:
        agent_steps = 0
        start = time.perf_counter()
        while time.perf_counter() - start < budget_s:
            for b, game in enumerate(self.games):
                obs, infos = self.current[b]
                actions = {}
                for agent in game.agents:
                    ob = obs[agent]
                    legal = np.flatnonzero(
                        ob["action_mask"] if isinstance(ob, dict) else infos[agent]["action_mask"]
                    )
                    actions[agent] = int(legal[self.rand.randrange(len(legal))]) if len(legal) else 0
                    agent_steps += len(legal) > 0
                obs, _, _, _, infos = game.step(actions)
                self.current[b] = (obs, infos) if game.agents else game.reset()
        return agent_steps, time.perf_counter() - start


def rates(
    name: str, kwargs: dict[str, Any], num_envs: int, budget_s: float, slices: int
) -> tuple[float, float]:
    """Agent-steps/s of both sides, measured in ``slices`` alternating slices of ``budget_s / slices``
    each, so a change in the machine's speed during the measurement hits both sides alike."""
    sides = (Batched(name, kwargs, num_envs), PerGame(name, kwargs, num_envs))
    totals = [[0, 0.0], [0, 0.0]]
    for _ in range(slices):
        for side, total in zip(sides, totals):
            steps, seconds = side.advance(budget_s / slices)
            total[0] += steps
            total[1] += seconds
    return totals[0][0] / totals[0][1], totals[1][0] / totals[1][1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="short budget and small batches (smoke run)")
    parser.add_argument("--out", type=Path, default=None, help="also write the output here (for docs/data/)")
    args = parser.parse_args()
    with recorded(args.out):
        budget = 0.2 if args.quick else 3.0
        sizes = (1, 64) if args.quick else (1, 64, 1024)
        print(f"{'env':<14} {'B':>5} {'batched ag-steps/s':>19} {'per-game ag-steps/s':>20} {'ratio':>7}")
        for label, name, kwargs in CASES:
            for num_envs in sizes:
                fast, slow = rates(name, kwargs, num_envs, budget, slices=2 if args.quick else 10)
                print(f"{label:<14} {num_envs:>5} {fast:>19,.0f} {slow:>20,.0f} {fast / slow:>6.1f}x")


if __name__ == "__main__":
    main()
