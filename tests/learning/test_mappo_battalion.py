"""MAPPO learns to beat the level-1 scripted opponent in 2v2 battalion.

Default MAPPO settings; 32 games x 100 steps per iteration (3,200 env steps, 6,400 learner
decisions), both seats (drawn per episode). Training stops once three iterations in a row win at
least 90% of their finished games, or after ``MAX_ITERATIONS``; then the policy plays 64 fresh
evaluation games (32 per seat, actions sampled) and must win at least 80% of them.

CPU budget: at most 120 iterations (384k env steps). Seed 0 crosses 80% training win rate at
iteration 50 and stops at 53 (170k env steps), about 40 s on one core.
"""

from __future__ import annotations

import numpy as np
import pytest

import envs
from light_league.algorithms.mappo import MAPPOConfig, MAPPOLearner
from light_league.rollout.episode import EpisodeLoop

NUM_ENVS, STEPS, MAX_ITERATIONS = 32, 100, 120


def train(seed: int) -> tuple[MAPPOLearner, list[float]]:
    env = envs.make_batched("battalion", num_envs=NUM_ENVS, team_size=2)
    learner = MAPPOLearner(env.spec, MAPPOConfig(), seed=seed)
    loop = EpisodeLoop(env, seed=seed)
    opponent = {"scripted_l1": envs.make_fixed_policy("battalion", "scripted_l1")}
    curve: list[float] = []
    for _ in range(MAX_ITERATIONS):
        res = loop.collect(learner.policy, opponent, {"scripted_l1": 1.0}, STEPS)
        learner.update(res.batch)
        curve.append(float(np.mean([r.outcome == 1.0 for r in res.results])) if res.results else 0.0)
        if len(curve) >= 3 and min(curve[-3:]) >= 0.9:
            break
    return learner, curve


def evaluation_win_rate(learner: MAPPOLearner, episodes_per_seat: int = 32) -> float:
    env = envs.make_batched("battalion", num_envs=32, team_size=2)
    policies = {"learner": learner.policy, "scripted_l1": envs.make_fixed_policy("battalion", "scripted_l1")}
    pairings = [("learner", "scripted_l1", episodes_per_seat), ("scripted_l1", "learner", episodes_per_seat)]
    res = EpisodeLoop(env, seed=12345).evaluate(policies, pairings)
    wins = [r.outcome == 1.0 if r.player_id == "learner" else r.outcome == 0.0 for r in res.results]
    assert len(wins) == 2 * episodes_per_seat
    return float(np.mean(wins))


@pytest.mark.slow
def test_mappo_beats_scripted_level_1() -> None:
    learner, curve = train(seed=0)
    rate = evaluation_win_rate(learner)
    assert rate >= 0.8, f"evaluation win rate {rate:.2f}; training curve {np.round(curve, 2).tolist()}"
