"""The fitted rating: maximum-likelihood Bradley-Terry Elo with one anchor and 95% intervals,
independent of game order."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
from scipy.optimize import minimize

from light_league.agents.agent_manager import AgentManager
from light_league.game_theory.elo import Z95, bradley_terry_fit, bradley_terry_ratings
from light_league.rollout.episode import MatchResult
from light_league.run_dir import RunDir
from light_league.types import AgentType

NAN = float("nan")


def test_two_players_known_answer() -> None:
    # 75 % against a fixed 1000: odds 3 to 1, 400 * log10(3) points above it
    games = np.array([[0.0, 100.0], [100.0, 0.0]])
    scores = np.array([[0.0, 75.0], [25.0, 0.0]])
    r = bradley_terry_ratings(scores, games, np.array([NAN, 1000.0]), prior_games=1e-9)
    assert r[0] == pytest.approx(1000.0 + 400.0 * math.log10(3.0), abs=1e-4)
    assert r[1] == 1000.0


def test_fit_matches_a_direct_maximisation_of_the_likelihood() -> None:
    rng = np.random.default_rng(0)
    n = 7
    games = np.triu(rng.integers(0, 30, (n, n)), 1).astype(float)
    games = games + games.T
    true = rng.normal(1100, 200, n)
    p = 1.0 / (1.0 + 10 ** ((true[None, :] - true[:, None]) / 400))
    wins = np.triu(rng.binomial(games.astype(int), p), 1).astype(float)
    draws = np.triu(rng.integers(0, 3, (n, n)), 1) * (games > 0)
    scores = wins - 0.5 * draws * (wins > 0)  # some wins become draws: half credit
    scores = scores + np.triu(games - scores, 1).T
    fixed = np.full(n, NAN)
    fixed[[0, 3]] = [1000.0, 1300.0]
    got = bradley_terry_ratings(scores, games, fixed)

    free = np.isnan(fixed)
    c = math.log(10) / 400

    def negll(y: np.ndarray) -> float:  # y: free ratings in natural log-odds units
        s = c * fixed
        s[free] = y
        data = (scores * np.logaddexp(0.0, -(s[:, None] - s[None, :]))).sum()
        prior = 0.5 * (np.logaddexp(0, c * 1000 - y) + np.logaddexp(0, y - c * 1000)).sum()
        return float(data + prior)

    ref = minimize(negll, np.full(free.sum(), c * 1000.0), method="BFGS", options={"gtol": 1e-9}).x / c
    np.testing.assert_allclose(got[free], ref, atol=1e-3)
    assert (got[~free] == fixed[~free]).all()


def test_the_standard_error_has_the_known_two_player_answer() -> None:
    # 75 of 100 against a fixed opponent: the log-odds' variance is 1 / (n p (1 - p)) = 1 / 18.75
    games = np.array([[0.0, 100.0], [100.0, 0.0]])
    scores = np.array([[0.0, 75.0], [25.0, 0.0]])
    _, se = bradley_terry_fit(scores, games, np.array([NAN, 1000.0]), prior_games=1e-9)
    assert se[0] == pytest.approx(math.sqrt(1 / 18.75) * 400 / math.log(10), rel=1e-6)
    assert se[1] == 0.0


def test_intervals_match_the_curvature_of_an_independent_likelihood() -> None:
    """The standard errors are the inverse observed information: here against a finite-difference
    Hessian of the log-likelihood written out again, at a maximum found by BFGS."""
    rng = np.random.default_rng(3)
    n = 5
    games = np.triu(rng.integers(10, 40, (n, n)), 1).astype(float)
    games = games + games.T
    true = rng.normal(1100, 150, n)
    p = 1.0 / (1.0 + 10 ** ((true[None, :] - true[:, None]) / 400))
    wins = np.triu(rng.binomial(games.astype(int), p), 1).astype(float)
    scores = wins + np.triu(games - wins, 1).T
    fixed = np.full(n, NAN)
    fixed[0] = 800.0
    got, se = bradley_terry_fit(scores, games, fixed)

    def negll(r: np.ndarray) -> float:  # r: the free ratings in Elo points
        s = np.concatenate([[800.0], r]) * math.log(10) / 400
        data = (scores * np.logaddexp(0.0, -(s[:, None] - s[None, :]))).sum()
        s0 = 1000.0 * math.log(10) / 400
        prior = 0.5 * (np.logaddexp(0, s0 - s[1:]) + np.logaddexp(0, s[1:] - s0)).sum()
        return float(data + prior)

    best = minimize(negll, np.full(n - 1, 1000.0), method="BFGS", options={"gtol": 1e-8}).x
    np.testing.assert_allclose(got[1:], best, atol=1e-2)
    h = 0.5
    eye = np.eye(n - 1) * h
    hess = np.array(
        [
            [
                (negll(best + a + b) - negll(best + a - b) - negll(best - a + b) + negll(best - a - b))
                / (4 * h * h)
                for b in eye
            ]
            for a in eye
        ]
    )
    np.testing.assert_allclose(se[1:], np.sqrt(np.diag(np.linalg.inv(hess))), rtol=1e-3)
    assert se[0] == 0.0 and Z95 == pytest.approx(1.96, abs=1e-3)


def test_all_wins_and_all_losses_stay_finite_and_ordered() -> None:
    # a beats the 1400 baseline in all 16 games, b loses all 16 to the 800 one
    games = np.zeros((4, 4))
    scores = np.zeros((4, 4))
    games[0, 2] = games[2, 0] = 16
    scores[0, 2] = 16
    games[1, 3] = games[3, 1] = 16
    scores[3, 1] = 16
    r = bradley_terry_ratings(scores, games, np.array([NAN, NAN, 1400.0, 800.0]))
    assert np.isfinite(r).all()
    assert r[0] > 1400.0 + 400 and r[1] < 800.0 - 400


def test_unrelated_players_sit_at_the_prior_and_bad_input_is_refused() -> None:
    r = bradley_terry_ratings(np.zeros((2, 2)), np.zeros((2, 2)), np.array([NAN, NAN]))
    np.testing.assert_allclose(r, [1000.0, 1000.0])
    with pytest.raises(ValueError, match="symmetric"):
        bradley_terry_ratings(np.zeros((2, 2)), np.array([[0.0, 1.0], [0.0, 0.0]]), np.array([NAN, NAN]))
    with pytest.raises(ValueError, match="prior_games"):
        bradley_terry_ratings(np.zeros((2, 2)), np.zeros((2, 2)), np.array([NAN, NAN]), prior_games=0.0)


def _manager(root: Path) -> AgentManager:
    run_dir = RunDir(root)
    run_dir.create()
    manager = AgentManager(
        run_dir,
        pool_max_size=100,
        payoff_decay=0.99,
        elo_k=32.0,
        baselines=["random", "scripted_l5"],
        num_actions=3,
    )
    for b in ("random", "scripted_l5"):
        manager.add_baseline(b)
    manager.register_learner("m", AgentType.MAIN_AGENT)
    for _ in range(4):
        manager.add_snapshot("m", "unused")
    return manager


def test_same_games_in_two_orders_give_the_same_ratings(tmp_path: Path) -> None:
    ids = ["random", "scripted_l5", "m-v0", "m-v1", "m-v2", "m-v3"]
    strength = dict(zip(ids, [800.0, 1400.0, 900.0, 1150.0, 1300.0, 1500.0]))
    rng = np.random.default_rng(1)
    results = []
    for i, a in enumerate(ids):
        for b in ids[i + 1 :]:
            p = 1.0 / (1.0 + 10 ** ((strength[b] - strength[a]) / 400))
            for seat in (0, 1):
                for u in rng.random(16):
                    outcome = 1.0 if u < 0.8 * p else 0.5 if u < p + 0.1 * (1 - p) else 0.0
                    pair = (a, b) if seat == 0 else (b, a)
                    results.append(MatchResult(*pair, 0, outcome if seat == 0 else 1.0 - outcome, 0.0))
    ratings, sequential = [], []
    for k, order in enumerate([np.arange(len(results)), rng.permutation(len(results))]):
        manager = _manager(tmp_path / f"run{k}")
        shuffled = [results[i] for i in order]
        for start in range(0, len(shuffled), 37):  # in several evaluation calls, as a run does
            manager.record_evaluation(shuffled[start : start + 37], {})
        stats = manager.solve()
        ratings.append(stats.rating)
        sequential.append(stats.elo)
    for agent in ids:
        assert ratings[0][agent] == pytest.approx(ratings[1][agent], abs=1e-6)
    # one anchor: random held at 800, scripted_l5 fitted from its games (hidden strength 1400)
    assert ratings[0]["random"] == 800.0 and abs(ratings[0]["scripted_l5"] - 1400.0) < 100.0
    # the fitted order follows the hidden strengths; the sequential Elo did depend on the order
    assert sorted(ids, key=ratings[0].__getitem__) == sorted(ids, key=strength.__getitem__)
    assert max(abs(sequential[0][a] - sequential[1][a]) for a in ids) > 1.0
