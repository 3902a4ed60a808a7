"""PayoffTable: the array-backed table against a plain per-pair loop, and its known answers."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from light_league.agents.payoff_table import PayoffTable


def reference_matrix(
    pairs: dict[tuple[str, str], tuple[float, float]], ids: list[str]
) -> tuple[np.ndarray, np.ndarray]:
    """The definition, one pair at a time: both seat orders pooled, NaN where never played."""
    n = len(ids)
    rates, games = np.full((n, n), np.nan), np.zeros((n, n))
    for i, a in enumerate(ids):
        for j, b in enumerate(ids):
            s_ab, n_ab = pairs.get((a, b), (0.0, 0.0))
            s_ba, n_ba = pairs.get((b, a), (0.0, 0.0))
            if i == j:
                rates[i, j] = 0.5
            elif n_ab + n_ba > 0:
                rates[i, j] = (s_ab + n_ba - s_ba) / (n_ab + n_ba)
                games[i, j] = n_ab + n_ba
    return rates, games


def random_table(
    seed: int, agents: int, played: float
) -> tuple[PayoffTable, dict[tuple[str, str], tuple[float, float]]]:
    rng = np.random.default_rng(seed)
    ids = [f"agent_{k}" for k in range(agents)]
    table, pairs = PayoffTable(), {}
    for a in ids:
        for b in ids:
            if a != b and rng.random() < played:
                n = float(rng.integers(1, 20))
                s = float(rng.integers(0, int(n) + 1))
                table.add(a, b, s / 2, n / 2)  # two calls accumulate
                table.add(a, b, s / 2, n / 2)
                pairs[(a, b)] = (s, n)
    return table, pairs


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_matrix_equals_the_per_pair_reference(seed: int) -> None:
    table, pairs = random_table(seed, agents=23, played=0.3)  # > 8: the arrays grew twice
    ids = [f"agent_{k}" for k in (5, 0, 22, 7, 3, 11, 19)] + ["never_added"]
    rates, games = table.matrix(ids)
    ref_rates, ref_games = reference_matrix(pairs, ids)
    np.testing.assert_allclose(rates, ref_rates, equal_nan=True)
    np.testing.assert_array_equal(games, ref_games)
    played = ~np.isnan(rates)
    assert np.allclose((rates + rates.T)[played], 1.0)
    expected_missing = [
        (a, b) for i, a in enumerate(ids) for b in ids[i + 1 :] if ref_games[i, ids.index(b)] == 0
    ]
    assert table.missing(ids) == expected_missing


def test_known_answer_both_seat_orders_pooled() -> None:
    table = PayoffTable()
    table.add("a", "b", 3.0, 4.0)  # a won 3 of 4 from seat 0
    table.add("b", "a", 1.0, 4.0)  # b won 1 of 4 from seat 0: a won 3 of those
    assert table.win_rate("a", "b") == pytest.approx(6 / 8)
    assert table.win_rate("b", "a") == pytest.approx(2 / 8)
    assert table.games("a", "b") == table.games("b", "a") == 8.0
    assert math.isnan(table.win_rate("a", "c")) and table.games("a", "c") == 0.0
    rates, games = table.matrix(["a", "b", "c"])
    assert rates[0, 1] == pytest.approx(0.75) and rates[2, 2] == 0.5 and math.isnan(rates[0, 2])
    assert games.tolist() == [[0, 8, 0], [8, 0, 0], [0, 0, 0]]
    assert table.missing(["a", "b", "c"]) == [("a", "c"), ("b", "c")]


def test_state_round_trips_through_json() -> None:
    table, _ = random_table(4, agents=12, played=0.5)
    ids = [f"agent_{k}" for k in range(12)]
    restored = PayoffTable.from_state_dict(json.loads(json.dumps(table.state_dict())))
    for got, want in zip(restored.matrix(ids), table.matrix(ids), strict=True):
        np.testing.assert_array_equal(got, want)


def test_bad_outcome_sum_names_the_values() -> None:
    with pytest.raises(ValueError, match="outcome_sum <= games, got 5.0 over 4.0"):
        PayoffTable().add("a", "b", 5.0, 4.0)
