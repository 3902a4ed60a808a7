"""Per-cell intervals (coverage by simulation), posterior draws, and meta-strategy stability."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest

from light_league.agents.meta_solvers import META_SOLVERS, MetaSolver, PRDOptions
from light_league.game_theory import uncertainty
from light_league.game_theory.uncertainty import cell_intervals, meta_stability, sample_tables


@pytest.mark.parametrize(("games", "p"), [(100, 0.3), (100, 0.5), (100, 0.7), (500, 0.1), (40, 0.6)])
def test_95_percent_intervals_cover_a_known_win_probability(games: int, p: float) -> None:
    """1,000 simulated cells of ``games`` games with win probability ``p``: 93-97% coverage.

    (The exact coverage of these cases, from the binomial distribution, is 94.3-95.0%. With very
    few games it oscillates more, as every binomial interval does: 92.3% at 16 games and p = 0.5.)
    """
    rng = np.random.default_rng(2026)
    wins = rng.binomial(games, p, size=1000)
    low, high = cell_intervals(wins / games, np.full(1000, games))
    coverage = float(np.mean((low <= p) & (p <= high)))
    assert 0.93 <= coverage <= 0.97, coverage


def test_coverage_with_draws_and_mixed_game_counts() -> None:
    """Outcomes 1 / 0.5 / 0 (draws), 10-200 games per cell, the true mean outcome 0.55."""
    rng = np.random.default_rng(7)
    probs = np.array([0.45, 0.2, 0.35])  # win, draw, loss: mean outcome 0.45 + 0.1 = 0.55
    games = rng.integers(10, 201, size=1000)
    means = np.array([rng.choice([1.0, 0.5, 0.0], size=g, p=probs).mean() for g in games])
    low, high = cell_intervals(means, games)
    coverage = float(np.mean((low <= 0.55) & (0.55 <= high)))
    assert 0.93 <= coverage <= 0.99, coverage  # draws lower the variance: intervals err on the wide side


def test_interval_edges_diagonal_exact_and_unplayed() -> None:
    rates = np.array([[0.5, 1.0, np.nan], [0.0, 0.5, 0.25], [np.nan, 0.75, 0.5]])
    games = np.array([[0, 10, 0], [10, 0, 8], [0, 8, 0]])
    exact = np.zeros((3, 3), dtype=bool)
    exact[1, 2] = exact[2, 1] = True
    low, high = cell_intervals(rates, games, exact)
    assert high[0, 1] == 1.0 and 0.7 < low[0, 1] < 1.0  # 10 wins of 10: upper end 1
    assert low[1, 0] == 0.0 and 0.0 < high[1, 0] < 0.3
    assert np.isnan(low[0, 2]) and np.isnan(high[2, 0])  # never played: unknown
    assert low[1, 1] == high[1, 1] == 0.5  # a member against itself
    assert low[1, 2] == high[1, 2] == 0.25  # exact payoff: no sampling uncertainty
    # more games, narrower interval (about 0.5 wide at 16 games, 0.2 at 100)
    widths = [float(np.diff(cell_intervals(np.array([0.5]), np.array([g])), axis=0)[0, 0]) for g in (16, 100)]
    assert 0.4 < widths[0] < 0.5 and 0.18 < widths[1] < 0.2


def test_posterior_tables_are_symmetric_win_rate_tables() -> None:
    rates = np.array([[0.5, 0.8, 0.3], [0.2, 0.5, 0.6], [0.7, 0.4, 0.5]])
    games = np.full((3, 3), 50.0)
    exact = np.zeros((3, 3), dtype=bool)
    exact[0, 2] = exact[2, 0] = True
    tables = sample_tables(rates, games, 4000, np.random.default_rng(0), exact)
    assert tables.shape == (4000, 3, 3)
    np.testing.assert_allclose(tables + np.swapaxes(tables, 1, 2), 1.0)
    assert np.all(tables[:, 0, 2] == 0.3)
    # Jeffreys posterior mean (40.5 / 51) and sd of the (0, 1) cell
    assert tables[:, 0, 1].mean() == pytest.approx(40.5 / 51, abs=0.005)
    assert tables[:, 0, 1].std() == pytest.approx(0.0563, abs=0.004)


def test_stability_of_a_clear_and_of_a_near_tied_table() -> None:
    rng = np.random.default_rng(1)
    nash = META_SOLVERS["nash"]
    # member 0 beats both others by far, 1000 games per cell: Nash is pure on 0 in every draw
    clear = np.array([[0.5, 0.9, 0.9], [0.1, 0.5, 0.5], [0.1, 0.5, 0.5]])
    stab = meta_stability(nash, None, clear, np.full((3, 3), 1000.0), nash(clear), draws=100, rng=rng)
    assert stab is not None and stab.draws == 100
    assert stab.tv_mean == pytest.approx(0.0, abs=1e-9)
    np.testing.assert_allclose(stab.support, [1.0, 0.0, 0.0])
    # a near-tie from 16 games per cell: the Nash jumps between draws
    tied = np.array([[0.5, 0.55, 0.45], [0.45, 0.5, 0.55], [0.55, 0.45, 0.5]])
    stab = meta_stability(nash, None, tied, np.full((3, 3), 16.0), nash(tied), draws=100, rng=rng)
    assert stab is not None and stab.tv_mean > 0.2 and stab.support.min() < 1.0
    assert meta_stability(nash, None, tied, np.full((3, 3), 16.0), nash(tied), draws=0, rng=rng) is None


class SolveClock:
    """A clock that only solves move: each chunk of tables a solver is given takes ``seconds``."""

    def __init__(self, solver: MetaSolver, seconds: float) -> None:
        self.solver, self.seconds, self.now = solver, seconds, 0.0
        self.batched = solver.batched

    def perf_counter(self) -> float:
        return self.now

    def solve_many(self, payoffs: np.ndarray, options: Any = None) -> np.ndarray:
        self.now += self.seconds
        return self.solver.solve_many(payoffs, options)


def test_stability_draws_and_their_time_budget_for_a_20_member_table(monkeypatch: pytest.MonkeyPatch) -> None:
    """100 draws of a 20 x 20 table with the LP solver; PRD stopped by the time budget, on a clock
    that each chunk of PRD solves moves by 6 ms (how fast it is belongs to
    ``bench/meta_stability.py``, not to a test: timed verdicts fail under load)."""
    rng = np.random.default_rng(5)
    u = np.triu(rng.uniform(0.3, 0.7, size=(20, 20)), 1)
    rates = u + np.tril(1.0 - u.T, -1) + 0.5 * np.eye(20)
    games = np.full((20, 20), 100.0)
    nash = META_SOLVERS["nash"]
    stab = meta_stability(nash, None, rates, games, nash(rates), draws=100, rng=rng, max_seconds=math.inf)
    assert stab is not None and stab.draws == 100 and stab.seconds > 0.0
    prd = META_SOLVERS["prd"]
    options = PRDOptions(iterations=1000, dt=0.01)
    timed = SolveClock(prd, seconds=0.006)
    monkeypatch.setattr(uncertainty, "time", timed)
    stab = meta_stability(
        timed, options, rates, games, prd(rates, options), draws=100, rng=rng, max_seconds=0.01
    )
    # the first chunk of 10 takes 6 ms; a second would end at 12 ms, past the budget
    assert stab is not None and stab.draws == 10 and stab.seconds == pytest.approx(0.006)
    # a solve slower than the whole budget: no draws at all
    slow = meta_stability(
        timed,
        options,
        rates,
        games,
        prd(rates, options),
        draws=100,
        rng=rng,
        max_seconds=1.0,
        solve_seconds=2.0,
    )
    assert slow is None


def test_an_exact_table_has_nothing_to_resample() -> None:
    rates = np.array([[0.5, 0.7, 0.2], [0.3, 0.5, 0.6], [0.8, 0.4, 0.5]])
    nash = META_SOLVERS["nash"]
    mixture = nash(rates)
    stab = meta_stability(
        nash,
        None,
        rates,
        np.full((3, 3), 1000.0),
        mixture,
        draws=100,
        rng=np.random.default_rng(0),
        exact=np.ones((3, 3), dtype=bool),
    )
    assert stab is not None and stab.draws == 0 and stab.tv_mean == 0.0
    np.testing.assert_array_equal(stab.support, (mixture >= 1e-3).astype(float))


def test_snapshot_intervals_round_trip_through_json_markdown_and_csv() -> None:
    from light_league.tracking.logger import PayoffSnapshot
    from light_league.tracking.payoff_render import parse_payoff_markdown, payoff_cells_csv, payoff_markdown

    rates = np.array([[0.5, 0.75, np.nan], [0.25, 0.5, 0.6], [np.nan, 0.4, 0.5]])
    games = np.array([[0, 16, 0], [16, 0, 100], [0, 100, 0]])
    low, high = cell_intervals(rates, games)
    snap = PayoffSnapshot(
        2, ["a", "b", "c"], ["main_agent"] * 3, rates, games, np.array([1.0, 0.0, 0.0]), low, high
    )
    back = PayoffSnapshot.from_json(snap.to_json())
    np.testing.assert_allclose(back.ci_low, low)
    np.testing.assert_allclose(back.ci_high, high)
    text = payoff_markdown(snap)
    assert "0.750 [0.51, 0.91] (16)" in text and "– (0)" in text
    ids, parsed_rates, parsed_games = parse_payoff_markdown(text)
    assert ids == ["a", "b", "c"]
    np.testing.assert_allclose(parsed_rates, rates, atol=5e-4)
    np.testing.assert_array_equal(parsed_games, games)
    rows = payoff_cells_csv(snap).splitlines()
    assert rows[2].startswith("a,b,0.75,16,0.509") and rows[3] == "a,c,,0,,"
    # a snapshot written before the intervals existed still loads
    old = snap.to_json()
    for key in ("ci_low", "ci_high", "interval"):
        old.pop(key)
    assert PayoffSnapshot.from_json(old).ci_low is None
