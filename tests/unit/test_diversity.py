"""Behaviour embeddings and diversity: known distances, identical behaviour scores 0."""

from __future__ import annotations

import json

import numpy as np
import pytest

from light_league.game_theory.diversity import behaviour_features
from light_league.league import (
    DiversityTracker,
    TrajectoryBatch,
    diversity_score,
    embed_trajectory,
    pairwise_cosine_distances,
)


def batch(
    agent_id: str, seed: int, *, t: int = 200, corner: float = 0.5, shift: float = 0.0
) -> TrajectoryBatch:
    rng = np.random.default_rng(seed)
    return TrajectoryBatch(
        actions=rng.standard_normal((t, 3)) + shift,
        positions=np.clip(rng.normal(corner, 0.05, (t, 2)), 0, 1),
        agent_id=agent_id,
    )


def test_cosine_distances_known_values() -> None:
    e = np.array([[1.0, 0.0], [0.0, 2.0], [3.0, 3.0], [2.0, 0.0]])
    d = pairwise_cosine_distances(e)
    assert d[0, 1] == pytest.approx(1.0)  # orthogonal
    assert d[0, 3] == pytest.approx(0.0)  # parallel
    assert d[0, 2] == pytest.approx(1 - np.sqrt(0.5))
    np.testing.assert_allclose(d, d.T)
    np.testing.assert_array_equal(np.diag(d), 0.0)


def test_zero_embedding_is_refused() -> None:
    with pytest.raises(ValueError, match=r"rows \[1\]"):
        pairwise_cosine_distances(np.array([[1.0, 0.0], [0.0, 0.0]]))


def test_embedding_is_fixed_length_and_in_unit_range() -> None:
    short, long = (
        embed_trajectory(batch("a", 0, t=5), n_bins=6),
        embed_trajectory(batch("b", 1, t=500), n_bins=6),
    )
    # 3 action dims x 6 bins + 6 x 6 heatmap + (2 x 3 action stats + 5 position stats)
    assert short.shape == long.shape == (3 * 6 + 36 + 11,)
    assert short.min() >= 0.0 and short.max() <= 1.0


def test_discrete_action_histogram() -> None:
    b = TrajectoryBatch(actions=np.array([0, 0, 1, 3]), positions=None, agent_id="a")
    hist, heat, stats = behaviour_features(b, n_bins=4, n_actions=5)
    np.testing.assert_allclose(hist, [0.5, 0.25, 0.0, 0.25, 0.0])
    assert not heat.any()
    assert stats[0] == pytest.approx(np.mean([0, 0, 1, 3]) / 4)
    with pytest.raises(ValueError, match="n_actions=3"):
        embed_trajectory(b, n_actions=3)


def test_identical_behaviour_scores_zero() -> None:
    tracker = DiversityTracker()
    for agent in ("a", "b", "c"):
        tracker.update(agent, batch(agent, seed=7))
    assert tracker.diversity_score() == pytest.approx(0.0, abs=1e-12)
    assert diversity_score(tracker, reduce="min") == pytest.approx(0.0, abs=1e-12)


def test_different_behaviour_scores_higher_than_resampled_behaviour() -> None:
    same = DiversityTracker()
    different = DiversityTracker()
    for i, agent in enumerate(("a", "b", "c")):
        same.update(agent, batch(agent, seed=i))
        different.update(agent, batch(agent, seed=i, corner=[0.1, 0.5, 0.9][i], shift=[-2.0, 0.0, 2.0][i]))
    assert same.diversity_score() < 0.1
    assert different.diversity_score() > 0.5
    assert different.diversity_score() <= 1.0


def test_reductions() -> None:
    e = {"a": np.array([1.0, 0.0]), "b": np.array([0.0, 1.0]), "c": np.array([1.0, 1.0])}
    far, near = 1.0, 1 - np.sqrt(0.5)
    assert diversity_score(e, reduce="mean") == pytest.approx((far + 2 * near) / 3)
    assert diversity_score(e, reduce="min") == pytest.approx(near)
    assert diversity_score(e, reduce="median") == pytest.approx(near)
    assert diversity_score(np.stack(list(e.values()))) == pytest.approx((far + 2 * near) / 3)
    with pytest.raises(ValueError, match="did you mean median"):
        diversity_score(e, reduce="medain")


def test_fewer_than_two_agents_score_zero() -> None:
    assert diversity_score({}) == 0.0
    assert diversity_score(np.ones((1, 4))) == 0.0
    assert DiversityTracker().diversity_score() == 0.0


def test_tracker_pools_batches_by_length() -> None:
    first, second = batch("a", 1, t=100), batch("a", 2, t=300)
    tracker = DiversityTracker(n_bins=5)
    tracker.update("a", first)
    tracker.update("a", second)
    pooled = TrajectoryBatch(
        actions=np.concatenate([first.actions, second.actions]),
        positions=np.concatenate([first.positions, second.positions]),
        agent_id="a",
    )
    # histograms and means pool exactly; the std features are averaged, so compare the blocks that pool exactly
    np.testing.assert_allclose(tracker.embeddings()["a"][:15], embed_trajectory(pooled, n_bins=5)[:15])
    assert len(tracker) == 1


def test_bad_batches_are_refused() -> None:
    with pytest.raises(ValueError, match=r"shape \(T, 2\) = \(3, 2\)"):
        TrajectoryBatch(actions=np.zeros((3, 2)), positions=np.zeros((4, 2)), agent_id="a")
    with pytest.raises(ValueError, match="T >= 1"):
        TrajectoryBatch(actions=np.zeros((0, 2)), positions=None, agent_id="a")
    with pytest.raises(ValueError, match="belongs to 'a'"):
        DiversityTracker().update("b", batch("a", 0))
    tracker = DiversityTracker()
    tracker.update("a", batch("a", 0))
    with pytest.raises(ValueError, match="different length"):
        tracker.update("a", TrajectoryBatch(actions=np.zeros((5, 1)), positions=None, agent_id="a"))


def test_tracker_state_round_trips_through_json() -> None:
    tracker = DiversityTracker(n_bins=4, n_actions=6)
    tracker.update("a", TrajectoryBatch(actions=np.array([0, 1, 5, 5]), positions=None, agent_id="a"))
    tracker.update(
        "b", TrajectoryBatch(actions=np.array([2, 2, 3]), positions=np.full((3, 2), 0.3), agent_id="b")
    )
    restored = DiversityTracker.from_state_dict(json.loads(json.dumps(tracker.state_dict())))
    assert restored.diversity_score() == tracker.diversity_score()
    restored.update("a", TrajectoryBatch(actions=np.array([4]), positions=None, agent_id="a"))
    tracker.update("a", TrajectoryBatch(actions=np.array([4]), positions=None, agent_id="a"))
    np.testing.assert_array_equal(restored.embeddings()["a"], tracker.embeddings()["a"])
    with pytest.raises(ValueError, match="state_dict"):
        DiversityTracker.from_state_dict({"n_bins": 4})
