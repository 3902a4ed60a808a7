"""Paired games (``evaluation.paired_games``): both seat orders of a pairing replay the same chance.

Checked on Kuhn poker, whose deals come from the game's seed and episode: two copies of one
deterministic policy score exactly even over paired games (each plays both seats of every deal),
the paired estimate of a cell is unbiased against the exact expected payoff, and its spread is
smaller than that of the same number of unpaired games.
"""

from __future__ import annotations

import numpy as np
import pytest
from fixed_policies import Pure

from light_league import envs
from light_league.algorithms.game_tree import expected_payoff_matrix
from light_league.rollout.episode import EpisodeLoop, mirrored_halves


class Mixed:
    """Action 1 with probability ``p`` where legal, else the other legal action."""

    def __init__(self, p: float) -> None:
        self.p = p

    def log_probs(self, obs: np.ndarray, mask: np.ndarray, agent_idx: np.ndarray) -> np.ndarray:
        probs = np.where(mask, np.where(np.arange(mask.shape[1]) == 1, self.p, 1.0 - self.p), 0.0)
        probs /= probs.sum(axis=1, keepdims=True)
        with np.errstate(divide="ignore"):
            return np.log(probs)


def x_returns(results: list, x: str) -> np.ndarray:
    """``x``'s return in each game it played (results are from seat 0's side)."""
    return np.array([r.player_return if r.player_id == x else -r.player_return for r in results])


def test_mirrored_halves_pair_each_pairing_with_its_seat_swap() -> None:
    halves = mirrored_halves(
        [("a", "b", 8), ("b", "a", 8), ("c", "a", 4), ("a", "c", 4), ("a", "a", 2), ("a", "a", 2)]
    )
    assert halves is not None
    first, mirrors = halves
    assert first == [("a", "b", 8), ("c", "a", 4), ("a", "a", 2)]
    assert mirrors == [("b", "a", 8), ("a", "c", 4), ("a", "a", 2)]
    assert mirrored_halves([("a", "b", 8), ("b", "a", 7)]) is None  # quotas differ
    assert mirrored_halves([("a", "b", 8)]) is None
    assert mirrored_halves([("a", "b", 0)]) is None


def test_two_copies_of_a_deterministic_policy_score_exactly_even_over_paired_games() -> None:
    pols = {"x": Pure(1), "y": Pure(1)}  # both always bet or call: every game is a showdown
    pairings = [("x", "y", 301), ("y", "x", 301)]
    paired = EpisodeLoop(envs.make_batched("kuhn_poker", 64), seed=3).evaluate(pols, pairings, paired=True)
    counts: dict[tuple[str, str], int] = {}
    for r in paired.results:
        counts[(r.player_id, r.opponent_id)] = counts.get((r.player_id, r.opponent_id), 0) + 1
    assert counts == {("x", "y"): 301, ("y", "x"): 301}
    assert x_returns(paired.results, "x").sum() == 0.0  # each deal won once by each
    unpaired = EpisodeLoop(envs.make_batched("kuhn_poker", 64), seed=3).evaluate(pols, pairings)
    assert abs(x_returns(unpaired.results, "x").sum()) > 0.0  # the cards' luck stays in
    assert paired.seat_returns is not None and paired.seat_returns.shape == (602, 2)


def test_paired_estimate_is_unbiased_and_tighter_than_unpaired() -> None:
    x, y = Mixed(0.6), Mixed(0.5)
    values = expected_payoff_matrix("kuhn_poker", [x, y], [x, y])
    exact = (values[0, 1] - values[1, 0]) / 2  # x's mean return over both seat orders
    pols = {"x": x, "y": y}
    n, reps = 200, 60
    estimates: dict[bool, list[float]] = {False: [], True: []}
    for paired in (False, True):
        for rep in range(reps):
            loop = EpisodeLoop(envs.make_batched("kuhn_poker", 64), seed=100 + rep)
            out = loop.evaluate(pols, [("x", "y", n), ("y", "x", n)], paired=paired)
            estimates[paired].append(float(x_returns(out.results, "x").mean()))
    paired_est, unpaired_est = np.array(estimates[True]), np.array(estimates[False])
    se = paired_est.std(ddof=1) / np.sqrt(reps)
    assert paired_est.mean() == pytest.approx(exact, abs=4 * se)
    assert unpaired_est.mean() == pytest.approx(exact, abs=4 * unpaired_est.std(ddof=1) / np.sqrt(reps))
    assert paired_est.std() < 0.8 * unpaired_est.std()  # 0.67 measured; about 1 unpaired
