"""Leduc poker: rules, seeding and step-by-step agreement with OpenSpiel's ``leduc_poker``."""

from __future__ import annotations

import numpy as np
import pytest
from pettingzoo.test import parallel_api_test

from light_league.envs import _poker
from light_league.envs import leduc_poker as leduc

N_GAMES = 3_000  #: the single-game env (a Python step per move)
N_BATCHED = 10_000
F, C, R = leduc.FOLD, leduc.CALL, leduc.RAISE


def test_spec_follows_the_contract() -> None:
    spec = leduc.SPEC
    assert spec.agents == ("player_0", "player_1") and spec.seats == ((0,), (1,))
    assert (spec.obs_dim, spec.state_dim, spec.num_actions, spec.max_steps) == (30, 36, 3, 8)
    assert spec.score_range == (-13.0, 13.0) and not spec.symmetric and spec.turn_based and not spec.win_loss


def _final(actions: list[int]) -> int:
    node = 0
    for a in actions:
        node = int(leduc.GAME.tables.next_node[node, a])
        assert node >= 0, f"illegal action {a}"
    return node


@pytest.mark.parametrize(
    ("cards", "actions", "expected"),
    [
        ((0, 4, 1), [C, C, C, C], 1.0),  # pair of rank 0 beats a lone rank 2
        ((4, 2, 0), [C, C, C, C], 1.0),  # no pair: higher rank wins
        ((0, 1, 4), [R, R, C, R, R, C], 0.0),  # equal ranks split the pot
        ((4, 0, 5), [R, R, C, R, R, C], 13.0),  # the largest pot: 1 + 2 + 2 + 4 + 4
        ((5, 3, 2), [R, R, C, R, R, C], -13.0),
        ((5, 3, 2), [R, F], 1.0),
        ((5, 3, 2), [C, R, F], -1.0),
        ((0, 2, 4), [C, C, R, F], 1.0),
        ((0, 2, 4), [C, C, C, R, R, F], 5.0),
    ],
)
def test_known_payoffs(cards: tuple[int, int, int], actions: list[int], expected: float) -> None:
    node = _final(actions)
    assert leduc.GAME.tables.player[node] == -1
    assert leduc.GAME.returns(np.array(node), np.array(cards)).tolist() == [expected, -expected]


def test_fold_only_under_a_raise_and_at_most_two_raises_per_round() -> None:
    legal = leduc.GAME.tables.legal
    assert np.flatnonzero(legal[_final([])]).tolist() == [C, R]
    assert np.flatnonzero(legal[_final([R])]).tolist() == [F, C, R]
    assert np.flatnonzero(legal[_final([R, R])]).tolist() == [F, C]
    assert np.flatnonzero(legal[_final([R, C])]).tolist() == [C, R]


def test_batched_games_deal_like_single_games_seeded_s_plus_b_across_auto_resets() -> None:
    env = leduc.make_batched(4)
    step = env.reset(seed=-3)
    episodes = np.zeros(4, dtype=np.int64)
    rng = np.random.default_rng(0)
    for _ in range(40):
        for b in range(4):
            assert env.cards[b].tolist() == leduc.GAME.deal(-3 + b, int(episodes[b])).tolist()
        acting = np.argmax(step.active, axis=1)
        actions = np.zeros((4, 2), dtype=np.int64)
        actions[np.arange(4), acting] = _poker._sample_legal(step.action_mask[np.arange(4), acting], rng)
        step = env.step(actions)
        episodes += step.done
    assert episodes.min() >= 3


def test_deals_are_uniform_over_the_120_ordered_deals() -> None:
    idx = _poker.deal_index(
        _poker.seed_to_uint64(np.arange(120_000)), np.zeros(120_000, dtype=np.uint64), len(leduc.GAME.deals)
    )
    counts = np.bincount(idx, minlength=120)
    assert counts.min() > 850 and counts.max() < 1150
    assert len({tuple(d) for d in leduc.GAME.deals.tolist()}) == 120


def test_batched_first_games_equal_single_games_with_the_same_actions() -> None:
    rng = np.random.default_rng(1)
    batched = _poker.play_random_batched(leduc.make_batched(300), seed=9, rng=rng)
    single = _poker.play_parallel(
        leduc.make_parallel(), [9 + b for b in range(300)], rng, actions=[r.actions for r in batched]
    )
    assert all(_poker.records_equal(a, b) for a, b in zip(batched, single))


@pytest.mark.openspiel
def test_single_game_env_agrees_with_openspiel_on_3000_games() -> None:
    pyspiel = pytest.importorskip("pyspiel")
    records = _poker.play_parallel(
        leduc.make_parallel(), [5] + [None] * (N_GAMES - 1), np.random.default_rng(2)
    )
    assert max(len(r.actions) for r in records) == 8
    errors = _poker.reference_mismatches(records, pyspiel.load_game("leduc_poker"), leduc.infostate_string)
    assert errors == []


@pytest.mark.openspiel
def test_batched_env_agrees_with_openspiel_on_10000_games() -> None:
    pyspiel = pytest.importorskip("pyspiel")
    records = _poker.play_random_batched(leduc.make_batched(N_BATCHED), seed=13, rng=np.random.default_rng(3))
    errors = _poker.reference_mismatches(records, pyspiel.load_game("leduc_poker"), leduc.infostate_string)
    assert errors == []


def test_critic_state_adds_the_opponent_card() -> None:
    env = leduc.make_batched(3)
    step = env.reset(seed=1)
    assert np.array_equal(step.state[:, :, :30], step.obs)
    assert np.argmax(step.state[:, 0, 30:], axis=1).tolist() == env.cards[:, 1].tolist()
    assert np.argmax(step.state[:, 1, 30:], axis=1).tolist() == env.cards[:, 0].tolist()


def test_illegal_action_is_refused_with_the_legal_ones() -> None:
    env = leduc.make_batched(2)
    env.reset(seed=0)
    with pytest.raises(ValueError, match=r"illegal action 0 for player 0 in game 1 \(legal: \[1, 2\]\)"):
        env.step(np.array([[1, 0], [0, 0]]))
    with pytest.raises(ValueError, match="takes no options"):
        leduc.make_batched(2, raise_sizes=(1, 2))


def test_pettingzoo_parallel_api() -> None:
    parallel_api_test(leduc.make_parallel(), num_cycles=50)
