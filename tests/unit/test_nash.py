"""Nash of zero-sum matrix games: known answers, an independent LP, regret matching, bad input."""

from __future__ import annotations

import itertools
import logging

import numpy as np
import pytest
from scipy.optimize import linprog

from light_league.game_theory import nash
from light_league.game_theory.nash import (
    build_payoff_matrix,
    compute_nash_distribution,
    nash_entropy,
    regret_matching,
    solve_zero_sum,
)

RPS = np.array([[0.0, -1.0, 1.0], [1.0, 0.0, -1.0], [-1.0, 1.0, 0.0]])
BIASED_RPS = np.array([[0.0, -1.0, 2.0], [1.0, 0.0, -1.0], [-2.0, 1.0, 0.0]])


def column_player_value(a: np.ndarray) -> float:
    """Game value from the column player's LP: min u s.t. (A y)_i <= u, y in the simplex."""
    m, n = a.shape
    res = linprog(
        np.r_[np.zeros(n), 1.0],
        A_ub=np.hstack([a, -np.ones((m, 1))]),
        b_ub=np.zeros(m),
        A_eq=np.r_[np.ones(n), 0.0][None, :],
        b_eq=[1.0],
        bounds=[(0, None)] * n + [(None, None)],
        method="highs",
    )
    assert res.status == 0
    return float(res.x[-1])


def brute_force_value(a: np.ndarray, grid: int = 200) -> float:
    """max over a fine grid of 2-action mixtures of the worst-case payoff (2-row games)."""
    ps = np.linspace(0.0, 1.0, grid + 1)
    return max(float(np.min(p * a[0] + (1 - p) * a[1])) for p in ps)


def worst_case(x: np.ndarray, a: np.ndarray) -> float:
    return float(np.min(x @ a))


def test_rps_is_uniform() -> None:
    np.testing.assert_allclose(compute_nash_distribution(RPS), np.full(3, 1 / 3), atol=1e-6)


def test_biased_rps_known_answer() -> None:
    np.testing.assert_allclose(compute_nash_distribution(BIASED_RPS), [0.25, 0.5, 0.25], atol=1e-6)


def test_win_rate_matrix_and_its_zero_sum_form_agree() -> None:
    p = 0.5 + BIASED_RPS / 4.0  # a valid win-rate matrix: P + P^T = 1
    np.testing.assert_allclose(p + p.T, 1.0)
    np.testing.assert_allclose(compute_nash_distribution(p), compute_nash_distribution(p - 0.5), atol=1e-9)


def test_negative_game_value_is_not_clipped() -> None:
    a = np.array([[-3.0, -1.0], [-2.0, -4.0]])  # value -2.5, far below scipy's default bound 0
    x, y, value = solve_zero_sum(a)
    assert value == pytest.approx(-2.5, abs=1e-9)
    np.testing.assert_allclose(x, [0.5, 0.5], atol=1e-9)
    np.testing.assert_allclose(y, [0.75, 0.25], atol=1e-9)


@pytest.mark.parametrize(("m", "n"), [(1, 1), (2, 2), (3, 5), (7, 4), (30, 30), (100, 100)])
def test_solve_zero_sum_matches_column_lp(m: int, n: int) -> None:
    rng = np.random.default_rng(m * 1000 + n)
    a = rng.uniform(-1.0, 1.0, (m, n))
    x, y, value = solve_zero_sum(a)
    reference = column_player_value(a)
    assert value == pytest.approx(reference, abs=1e-6)
    assert worst_case(x, a) == pytest.approx(reference, abs=1e-6)  # row guarantee
    assert float(np.max(a @ y)) == pytest.approx(reference, abs=1e-6)  # column guarantee
    assert x.min() >= 0.0 and y.min() >= 0.0
    assert x.sum() == pytest.approx(1.0) and y.sum() == pytest.approx(1.0)


@pytest.mark.parametrize("n", [2, 5, 20, 100])
def test_compute_nash_distribution_reaches_game_value(n: int) -> None:
    rng = np.random.default_rng(n)
    a = rng.uniform(0.0, 1.0, (n, n))
    x = compute_nash_distribution(a)
    assert x.shape == (n,)
    assert worst_case(x, a) == pytest.approx(column_player_value(a), abs=1e-6)


@pytest.mark.parametrize("seed", range(5))
def test_two_row_games_against_brute_force(seed: int) -> None:
    rng = np.random.default_rng(seed)
    a = rng.integers(-4, 5, (2, 3)).astype(float)
    _, _, value = solve_zero_sum(a)
    # the grid contains the optimum only approximately: value >= grid max, and close to it
    assert value >= brute_force_value(a) - 1e-12
    assert value == pytest.approx(brute_force_value(a, grid=20_000), abs=1e-3)


def test_symmetric_population_game_value_is_zero() -> None:
    rng = np.random.default_rng(7)
    upper = rng.uniform(0.0, 1.0, (12, 12))
    p = np.triu(upper, 1) + np.tril(1.0 - upper.T, -1) + 0.5 * np.eye(12)  # P + P^T = 1
    x, y, value = solve_zero_sum(p - 0.5)
    assert value == pytest.approx(0.0, abs=1e-9)
    assert worst_case(x, p - 0.5) == pytest.approx(0.0, abs=1e-9)


@pytest.mark.parametrize(("m", "n", "seed"), [(3, 3, 0), (6, 4, 1), (10, 10, 2)])
def test_regret_matching_reaches_lp_value(m: int, n: int, seed: int) -> None:
    a = np.random.default_rng(seed).uniform(-1.0, 1.0, (m, n))
    x, y = regret_matching(a, n_iterations=2000)
    value = column_player_value(a)
    assert worst_case(x, a) == pytest.approx(value, abs=1e-3)
    assert float(np.max(a @ y)) == pytest.approx(value, abs=1e-3)


def test_regret_matching_method_on_rps() -> None:
    x = compute_nash_distribution(RPS, method="regret_matching", n_iterations=2000)
    np.testing.assert_allclose(x, np.full(3, 1 / 3), atol=1e-3)


def test_lp_failure_falls_back_to_regret_matching(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    class Failed:
        status, message, x = 4, "numerical difficulties", None

    monkeypatch.setattr(nash, "_simplex_tableau", lambda a: None)
    monkeypatch.setattr(nash, "linprog", lambda *args, **kwargs: Failed())
    with caplog.at_level(logging.WARNING, logger=nash.__name__):
        x = compute_nash_distribution(BIASED_RPS, n_iterations=3000)
    np.testing.assert_allclose(x, [0.25, 0.5, 0.25], atol=1e-3)
    assert "falling back to regret matching" in caplog.text
    with pytest.raises(RuntimeError, match="regret_matching"):
        solve_zero_sum(BIASED_RPS)


@pytest.mark.parametrize(
    ("m", "n", "seed"), [(1, 1, 0), (1, 6, 1), (6, 1, 2), (4, 9, 3), (40, 40, 4), (150, 120, 5)]
)
def test_dense_simplex_matches_highs(m: int, n: int, seed: int) -> None:
    a = np.random.default_rng(seed).uniform(-3.0, 2.0, (m, n))
    solved = nash._simplex_tableau(a)
    assert solved is not None
    x, y, value = solved
    _, _, reference = nash.maximin_lp(a)
    assert value == pytest.approx(reference, abs=1e-9)
    assert worst_case(x, a) == pytest.approx(reference, abs=1e-9)
    assert float(np.max(a @ y)) == pytest.approx(reference, abs=1e-9)


def test_dense_simplex_on_degenerate_integer_games() -> None:
    """Small-integer payoffs tie in the ratio test; the answer must still be an equilibrium."""
    rng = np.random.default_rng(11)
    for _ in range(200):
        m, n = (int(k) for k in rng.integers(1, 12, 2))
        a = rng.integers(-2, 3, (m, n)).astype(float)
        solved = nash._simplex_tableau(a)
        assert solved is not None and nash._is_equilibrium(a, *solved)
        assert solved[2] == pytest.approx(column_player_value(a), abs=1e-9)


def test_unchecked_simplex_answer_falls_back_to_highs(monkeypatch: pytest.MonkeyPatch) -> None:
    wrong = (np.array([1.0, 0.0, 0.0]), np.array([1.0, 0.0, 0.0]), 0.0)  # pure rock: not a Nash
    monkeypatch.setattr(nash, "_simplex_tableau", lambda a: wrong)
    x, y, value = solve_zero_sum(BIASED_RPS)
    np.testing.assert_allclose(x, [0.25, 0.5, 0.25], atol=1e-9)
    assert value == pytest.approx(0.0, abs=1e-9)


@pytest.mark.parametrize(
    ("payoff", "message"),
    [
        (np.zeros((2, 3)), r"must be square.*\(2, 3\)"),
        (np.zeros(3), r"2-D matrix, got shape \(3,\)"),
        (np.zeros((0, 0)), r"non-empty"),
        (np.array([[0.5, np.nan], [0.5, 0.5]]), r"unknown \(NaN/inf\) entries, e\.g\. at \(0, 1\).*prior"),
    ],
)
def test_bad_payoff_is_refused(payoff: np.ndarray, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        compute_nash_distribution(payoff)


def test_nan_refused_by_general_solvers() -> None:
    with pytest.raises(ValueError, match="NaN"):
        solve_zero_sum(np.array([[np.nan, 1.0]]))
    with pytest.raises(ValueError, match="NaN"):
        regret_matching(np.array([[np.nan, 1.0]]), 10)


def test_unknown_method_lists_valid_ones() -> None:
    with pytest.raises(ValueError, match="did you mean lp"):
        compute_nash_distribution(RPS, method="lpp")


def test_nash_entropy_known_values() -> None:
    assert nash_entropy(np.full(4, 0.25)) == pytest.approx(np.log(4))
    assert nash_entropy(np.array([1.0, 0.0, 0.0])) == 0.0
    assert nash_entropy(np.array([0.5, 0.5, 0.0])) == pytest.approx(np.log(2))
    with pytest.raises(ValueError, match="sum to 1"):
        nash_entropy(np.array([0.5, 0.6]))


def test_build_payoff_matrix_calls_every_pair() -> None:
    table = {("a", "b"): 0.7, ("b", "a"): 0.3}
    payoff = build_payoff_matrix(["a", "b"], lambda x, y: table.get((x, y), 0.5))
    np.testing.assert_array_equal(payoff, [[0.5, 0.7], [0.3, 0.5]])
    unknown = build_payoff_matrix(["a", "b"], lambda x, y: float("nan") if x != y else 0.5)
    assert np.isnan(unknown[0, 1]) and unknown[0, 0] == 0.5


@pytest.mark.openspiel
def test_matches_open_spiel_lp_solver() -> None:
    lp_solver = pytest.importorskip("open_spiel.python.algorithms.lp_solver")
    pyspiel = pytest.importorskip("pyspiel")
    for m, n in itertools.product((3, 6), (4, 12)):
        a = np.random.default_rng(m + n).uniform(-1.0, 1.0, (m, n))
        p0, _, v0, _ = lp_solver.solve_zero_sum_matrix_game(pyspiel.create_matrix_game(a, -a))
        x, _, value = solve_zero_sum(a)
        assert value == pytest.approx(float(v0), abs=1e-6)
        assert worst_case(x, a) == pytest.approx(worst_case(np.asarray(p0).reshape(-1), a), abs=1e-6)
