"""Kuhn poker: rules, seeding and step-by-step agreement with OpenSpiel's ``kuhn_poker``."""

from __future__ import annotations

import numpy as np
import pytest
from pettingzoo.test import parallel_api_test

from light_league.envs import _poker
from light_league.envs import kuhn_poker as kuhn

N_GAMES = 3_000  #: the single-game env (a Python step per move)
N_BATCHED = 10_000


def test_spec_follows_the_contract() -> None:
    spec = kuhn.SPEC
    assert spec.agents == ("player_0", "player_1") and spec.seats == ((0,), (1,))
    assert (spec.obs_dim, spec.state_dim, spec.num_actions) == (11, 14, 2)
    assert spec.score_range == (-2.0, 2.0) and not spec.symmetric and spec.turn_based and not spec.win_loss


@pytest.mark.parametrize(
    ("cards", "actions", "expected"),
    [
        ((2, 0), [kuhn.PASS, kuhn.PASS], 1.0),
        ((0, 2), [kuhn.BET, kuhn.BET], -2.0),
        ((1, 0), [kuhn.PASS, kuhn.BET, kuhn.BET], 2.0),
        ((2, 1), [kuhn.PASS, kuhn.BET, kuhn.PASS], -1.0),
        ((0, 1), [kuhn.BET, kuhn.PASS], 1.0),
    ],
)
def test_known_payoffs(cards: tuple[int, int], actions: list[int], expected: float) -> None:
    node = 0
    for a in actions:
        node = int(kuhn.GAME.tables.next_node[node, a])
    assert kuhn.GAME.tables.player[node] == -1
    result = kuhn.GAME.returns(np.array(node), np.array([*cards, -1]))
    assert result.tolist() == [expected, -expected]


def test_batched_games_deal_like_single_games_seeded_s_plus_b_across_auto_resets() -> None:
    env = kuhn.make_batched(5)
    step = env.reset(seed=40)
    episodes = np.zeros(5, dtype=np.int64)
    rng = np.random.default_rng(0)
    for _ in range(30):
        for b in range(5):
            assert env.cards[b].tolist() == kuhn.GAME.deal(40 + b, int(episodes[b])).tolist()
        acting = np.argmax(step.active, axis=1)
        actions = np.zeros((5, 2), dtype=np.int64)
        actions[np.arange(5), acting] = rng.integers(0, 2, size=5)
        step = env.step(actions)
        episodes += step.done
    assert episodes.min() >= 5
    single = kuhn.make_parallel()
    deals = []
    for seed in (42, None, None, None):
        single.reset(seed=seed)
        deals.append(single.cards.tolist())
    assert deals == [kuhn.GAME.deal(42, e).tolist() for e in range(4)]


def test_batched_first_games_equal_single_games_with_the_same_actions() -> None:
    rng = np.random.default_rng(1)
    batched = _poker.play_random_batched(kuhn.make_batched(200), seed=7, rng=rng)
    smaller = _poker.play_random_batched(kuhn.make_batched(50), seed=7, rng=rng)
    assert all(np.array_equal(a.cards, b.cards) for a, b in zip(batched, smaller))
    single = _poker.play_parallel(
        kuhn.make_parallel(), [7 + b for b in range(200)], rng, actions=[r.actions for r in batched]
    )
    assert all(_poker.records_equal(a, b) for a, b in zip(batched, single))


@pytest.mark.openspiel
def test_single_game_env_agrees_with_openspiel_on_3000_games() -> None:
    pyspiel = pytest.importorskip("pyspiel")
    env = kuhn.make_parallel()
    records = _poker.play_parallel(env, [3] + [None] * (N_GAMES - 1), np.random.default_rng(2))
    assert len({r.cards.tobytes() for r in records}) == 6
    errors = _poker.reference_mismatches(records, pyspiel.load_game("kuhn_poker"), kuhn.infostate_string)
    assert errors == []


@pytest.mark.openspiel
def test_batched_env_agrees_with_openspiel_on_10000_games() -> None:
    pyspiel = pytest.importorskip("pyspiel")
    records = _poker.play_random_batched(kuhn.make_batched(N_BATCHED), seed=11, rng=np.random.default_rng(3))
    errors = _poker.reference_mismatches(records, pyspiel.load_game("kuhn_poker"), kuhn.infostate_string)
    assert errors == []


def test_illegal_or_missing_actions_are_refused_with_the_legal_ones() -> None:
    env = kuhn.make_batched(2)
    env.reset(seed=0)
    with pytest.raises(ValueError, match="illegal action 5 for player 0 in game 0"):
        env.step(np.array([[5, 0], [0, 0]]))
    single = kuhn.make_parallel()
    single.reset(seed=0)
    with pytest.raises(ValueError, match="no action for player_0"):
        single.step({"player_1": 0})


def test_inactive_player_action_is_ignored_and_its_mask_is_empty() -> None:
    env = kuhn.make_batched(1)
    step = env.reset(seed=0)
    assert step.active.tolist() == [[True, False]] and not step.action_mask[0, 1].any()
    a = env.step(np.array([[kuhn.BET, 0]]))
    env.reset(seed=0)
    b = env.step(np.array([[kuhn.BET, 1]]))
    assert np.array_equal(a.obs, b.obs)


def test_outcome_maps_seat_0_return_to_unit_interval() -> None:
    env = kuhn.make_batched(64)
    step = env.reset(seed=5)
    for _ in range(2):
        acting = np.argmax(step.active, axis=1)
        actions = np.zeros((64, 2), dtype=np.int64)
        actions[np.arange(64), acting] = kuhn.BET
        step = env.step(actions)
    assert step.done.all()
    assert np.allclose(step.outcome, (step.seat_return[:, 0] + 2.0) / 4.0)
    assert set(np.abs(step.seat_return[:, 0]).tolist()) == {2.0}


def test_random_policy_is_uniform_over_legal_actions() -> None:
    mask = np.array([[True, True], [True, False]])
    lp = kuhn.FIXED_POLICIES["random"](kuhn.SPEC).log_probs(
        np.zeros((2, 11)), mask, np.zeros(2, dtype=np.int64)
    )
    assert np.allclose(np.exp(lp), [[0.5, 0.5], [1.0, 0.0]])


def test_infostate_string_names_the_owner() -> None:
    obs = kuhn.make_batched(1).reset(seed=0).obs[0, 1]
    with pytest.raises(ValueError, match="belongs to player 1"):
        kuhn.infostate_string(obs, 0)


def test_pettingzoo_parallel_api() -> None:
    parallel_api_test(kuhn.make_parallel(), num_cycles=50)
