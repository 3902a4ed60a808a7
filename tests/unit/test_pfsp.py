"""PFSP weights and probabilities follow AlphaStar's formulas."""

from __future__ import annotations

import numpy as np
import pytest

from light_league.game_theory.pfsp import WEIGHTINGS, pfsp_probabilities, pfsp_weights

RATES = np.array([0.0, 0.1, 0.5, 0.8, 1.0])

# f(x) written out by hand for RATES
EXPECTED = {
    ("hard", 1.0): [1.0, 0.9, 0.5, 0.2, 0.0],
    ("hard", 3.0): [1.0, 0.729, 0.125, 0.008, 0.0],
    ("squared", 7.0): [1.0, 0.81, 0.25, 0.04, 0.0],  # p is ignored
    ("variance", 2.0): [0.0, 0.09, 0.25, 0.16, 0.0],
    ("linear", 2.0): [1.0, 0.9, 0.5, 0.2, 0.0],
    ("linear_capped", 2.0): [0.5, 0.5, 0.5, 0.2, 0.0],
}


def test_every_weighting_is_covered() -> None:
    assert {name for name, _ in EXPECTED} == set(WEIGHTINGS)


@pytest.mark.parametrize(("weighting", "p"), list(EXPECTED))
def test_weights_match_formula(weighting: str, p: float) -> None:
    np.testing.assert_allclose(pfsp_weights(RATES, weighting, p), EXPECTED[(weighting, p)], atol=1e-12)


@pytest.mark.parametrize(("weighting", "p"), list(EXPECTED))
def test_probabilities_are_normalised_weights(weighting: str, p: float) -> None:
    expected = np.array(EXPECTED[(weighting, p)])
    np.testing.assert_allclose(pfsp_probabilities(RATES, weighting, p), expected / expected.sum(), atol=1e-12)


def test_hard_with_p_zero_weights_everyone_equally() -> None:
    # 0 ** 0 == 1 in numpy: p = 0 gives every opponent weight 1
    np.testing.assert_allclose(pfsp_probabilities(np.array([0.2, 1.0]), "hard", 0.0), [0.5, 0.5])


@pytest.mark.parametrize("weighting", ["hard", "squared", "linear", "linear_capped"])
def test_uniform_fallback_when_all_opponents_are_beaten(weighting: str) -> None:
    np.testing.assert_allclose(pfsp_probabilities(np.ones(4), weighting, 2.0), np.full(4, 0.25))


def test_variance_falls_back_to_uniform_on_certain_outcomes() -> None:
    np.testing.assert_allclose(pfsp_probabilities(np.array([0.0, 1.0, 1.0]), "variance"), np.full(3, 1 / 3))


def test_single_candidate_gets_probability_one() -> None:
    np.testing.assert_allclose(pfsp_probabilities(np.array([0.3]), "squared"), [1.0])


def test_unknown_weighting_suggests_a_name() -> None:
    with pytest.raises(ValueError, match="did you mean squared"):
        pfsp_weights(RATES, "squard")


@pytest.mark.parametrize("bad", [[-0.1, 0.5], [0.5, 1.2], [np.nan, 0.5]])
def test_out_of_range_win_rates_are_refused(bad: list[float]) -> None:
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        pfsp_weights(np.array(bad))


def test_empty_candidates_are_refused() -> None:
    with pytest.raises(ValueError, match="at least one candidate"):
        pfsp_probabilities(np.array([]))
