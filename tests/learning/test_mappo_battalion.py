"""MAPPO learns to beat the level-1 scripted opponent in 2v2 battalion, and to focus its fire
against level 5.

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

from light_league import envs
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


#: against scripted_l5: bench/learner_vs_fixed.py's shape (64 games x 50 steps per update)
L5_ENVS, L5_STEPS, L5_UPDATES = 64, 50, 100


@pytest.mark.slow
def test_mappo_leaves_the_always_fire_trap_against_scripted_level_5() -> None:
    """Default MAPPO trained against ``scripted_l5`` for 100 updates (320k env steps) scores at
    least 0.3 against it (wins + draws / 2, 128 games). A policy that fires on every step scores
    0.16, which is where every seed ended before the observation said which enemy a shot hits
    (notes/tuning.md, "What a battalion sees of its aim"). Measured: 0.449 here, 0.207 with the
    env before those features. About a minute on one core."""
    env = envs.make_batched("battalion", num_envs=L5_ENVS, team_size=2)
    learner = MAPPOLearner(env.spec, MAPPOConfig(), seed=0)
    loop = EpisodeLoop(env, seed=0)
    opponent = {"scripted_l5": envs.make_fixed_policy("battalion", "scripted_l5")}
    for _ in range(L5_UPDATES):
        learner.update(loop.collect(learner.policy, opponent, {"scripted_l5": 1.0}, L5_STEPS).batch)
    policies = {"learner": learner.policy, **opponent}
    res = EpisodeLoop(envs.make_batched("battalion", num_envs=64, team_size=2), seed=12345).evaluate(
        policies, [("learner", "scripted_l5", 64), ("scripted_l5", "learner", 64)]
    )
    score = float(np.mean([r.outcome if r.player_id == "learner" else 1.0 - r.outcome for r in res.results]))
    assert score >= 0.3, f"score {score:.3f} against scripted_l5 after {L5_UPDATES} updates"
