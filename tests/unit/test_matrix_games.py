"""Matrix games: payoffs, documented Nash equilibria, batched == single game."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.optimize import linprog

from light_league import envs
from light_league.envs import matrix_games as mg


def _game_value_and_strategy(a: np.ndarray) -> tuple[float, np.ndarray]:
    """Row player's maxmin LP: max v s.t. x^T A >= v, sum x = 1, x >= 0 (reference solver)."""
    n, m = a.shape
    c = np.r_[np.zeros(n), -1.0]
    a_ub = np.c_[-a.T, np.ones(m)]
    res = linprog(
        c,
        A_ub=a_ub,
        b_ub=np.zeros(m),
        A_eq=[np.r_[np.ones(n), 0.0]],
        b_eq=[1.0],
        bounds=[(0, None)] * n + [(None, None)],
    )
    return float(res.x[-1]), res.x[:n]


@pytest.mark.parametrize("game", ["rps", "biased_rps", "disc"])
def test_documented_nash_is_an_equilibrium_with_value_zero(game: str) -> None:
    a = np.array(mg.payoff_matrix(game))
    np.testing.assert_allclose(a, -a.T, atol=1e-12)  # symmetric zero-sum
    x = mg.nash_strategy(game)
    value, _ = _game_value_and_strategy(a)
    assert value == pytest.approx(0.0, abs=1e-9)
    assert (x @ a).min() >= -1e-12  # no column does better than the value against x


def test_biased_rps_nash_is_unique_quarter_half_quarter() -> None:
    _, x = _game_value_and_strategy(np.array(mg.BIASED_RPS))
    np.testing.assert_allclose(x, [0.25, 0.5, 0.25], atol=1e-9)


def test_disc_nash_set_is_mixtures_centred_at_origin() -> None:
    a = np.array(mg.disc_matrix(6))
    assert np.linalg.matrix_rank(a) == 2
    triangle = np.array([1, 0, 1, 0, 1, 0]) / 3.0  # every other point: mean at the origin
    assert (triangle @ a).min() >= -1e-12
    off_centre = np.array([0.5, 0.5, 0, 0, 0, 0])
    assert (off_centre @ a).min() < -0.1
    assert mg.disc_matrix(3)[1][0] == pytest.approx(np.sin(2 * np.pi / 3))


@pytest.mark.parametrize("game", ["rps", "biased_rps", "disc"])
def test_batched_matches_parallel_and_outcome_in_unit_interval(game: str) -> None:
    n = len(mg.payoff_matrix(game))
    batched = envs.make_batched(game, n * n)
    batched.reset(seed=0)
    actions = np.array([(i, j) for i in range(n) for j in range(n)])
    step = batched.step(actions)
    assert step.done.all() and not step.truncated.any()
    assert ((step.outcome >= 0) & (step.outcome <= 1)).all()
    single = envs.make_parallel(game)
    for b, (i, j) in enumerate(actions):
        single.reset(seed=b)
        _, rew, term, _, infos = single.step({"player_0": int(i), "player_1": int(j)})
        assert rew["player_0"] == pytest.approx(float(step.reward[b, 0]))
        assert rew["player_1"] == pytest.approx(float(step.reward[b, 1]))
        assert infos["player_0"]["outcome"] == pytest.approx(float(step.outcome[b]))
        assert all(term.values())


def test_rps_outcome_is_win_draw_loss() -> None:
    env = envs.make_batched("rps", 3)
    env.reset(seed=0)
    step = env.step(np.array([[1, 0], [0, 0], [0, 1]]))  # paper beats rock, draw, rock loses to paper
    assert step.outcome.tolist() == [1.0, 0.5, 0.0]
    assert env.spec.win_loss and not envs.make_batched("biased_rps", 1).spec.win_loss


def test_nash_fixed_policy_and_bad_names() -> None:
    policy = envs.make_fixed_policy("biased_rps", "nash")
    logp = policy.log_probs(np.ones((2, 1)), np.ones((2, 3), bool), np.zeros(2, np.int64))
    np.testing.assert_allclose(np.exp(logp), [[0.25, 0.5, 0.25]] * 2, atol=1e-6)
    with pytest.raises(ValueError, match="unknown matrix game"):
        mg.make_batched(1, game="rsp")
    with pytest.raises(ValueError, match="fixes"):
        envs.make_batched("rps", 1, game="disc")
