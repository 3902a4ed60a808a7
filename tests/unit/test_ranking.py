"""The leaderboard's order (light_league/game_theory/ranking.py) on issue 55's failure shape.

A population half of old main-agent snapshots, an exploiter that beats only them (and scores 0
against scripted levels 3 to 5), scripted levels where level 5 beats level 3 0.88: the rating fitted
to the whole population puts the exploiter first and level 3 above level 5; Nash clustering puts
them where their games do, and each of its top ten beats every one below it.
"""

from __future__ import annotations

import numpy as np

from light_league.game_theory.elo import bradley_terry_ratings
from light_league.game_theory.ranking import (
    Ranking,
    nash_clustering,
    order_note,
    rank_population,
)

LEVELS = ["random", "scripted_l1", "scripted_l2", "scripted_l3", "scripted_l4", "scripted_l5"]
MAINS = [f"main_agent_0-v{k}" for k in range(1, 21)]
EXPLOITER = "league_exploiter_0-v14"


def failure_shape() -> tuple[list[str], np.ndarray]:
    """Issue 55's population: six scripted levels on a logistic ladder (level 5 beats level 3
    0.88), twenty main-agent snapshots that lose to levels 3-5 (level 3 most of all: 0.15, against 0.3 for levels 4 and 5) and beat the
    rest, each newer one beating the older 0.55, and an exploiter that beats every snapshot and
    scores 0 against levels 3-5."""
    ids = [*LEVELS, *MAINS, EXPLOITER]
    index = {a: i for i, a in enumerate(ids)}
    w = np.full((len(ids), len(ids)), 0.5)

    def put(a: str, b: str, rate: float) -> None:
        w[index[a], index[b]], w[index[b], index[a]] = rate, 1.0 - rate

    strength = dict(zip(LEVELS, [-2.0, 0.0, 1.0, 2.0, 3.0, 4.0]))
    for a in LEVELS:
        for b in LEVELS:
            if a != b:
                w[index[a], index[b]] = 1.0 / (1.0 + np.exp(strength[b] - strength[a]))
    against = dict(zip(LEVELS, [0.9, 0.7, 0.6, 0.15, 0.3, 0.3]))  # a snapshot against each level
    for k, m in enumerate(MAINS):
        for level, rate in against.items():
            put(m, level, rate)
        for older in MAINS[:k]:
            put(m, older, 0.55)
        put(EXPLOITER, m, 1.0)
    for level, rate in zip(LEVELS, [0.6, 0.6, 0.6, 0.0, 0.0, 0.0]):
        put(EXPLOITER, level, rate)
    return ids, w


def population_fit_order(ids: list[str], w: np.ndarray) -> list[str]:
    """The former order: a Bradley-Terry fit over every pair's games (32 each), random held at 800."""
    games = np.full(w.shape, 32.0)
    np.fill_diagonal(games, 0.0)
    fixed = np.full(len(ids), np.nan)
    fixed[0] = 800.0
    ratings = bradley_terry_ratings(w * games, games, fixed)
    return [ids[i] for i in np.argsort(-ratings, kind="stable")]


def test_the_population_fit_ranks_the_exploiter_first_and_level_3_above_level_5() -> None:
    ids, w = failure_shape()
    old = population_fit_order(ids, w)
    assert old[0] == EXPLOITER
    assert old.index("scripted_l3") < old.index("scripted_l5")


def test_nash_clustering_ranks_by_who_beats_whom() -> None:
    ids, w = failure_shape()
    ranking = rank_population(w)
    order = [ids[i] for i in ranking.order]
    assert order[:5] == ["scripted_l5", "scripted_l4", "scripted_l3", EXPLOITER, MAINS[-1]]
    assert order[5:10] == MAINS[-2:-7:-1]
    assert order.index("scripted_l2") < order.index("scripted_l1") < order.index("random")
    assert [ranking.layer[i] for i in ranking.order[:10]] == list(range(1, 11))
    assert order_note(ids, w, ranking.order) is None


def test_no_scripted_level_outranks_a_stronger_one_that_beats_it_0_6() -> None:
    ids, w = failure_shape()
    place = {ids[i]: k for k, i in enumerate(rank_population(w).order)}
    for a in LEVELS:
        for b in LEVELS:
            if w[ids.index(b), ids.index(a)] >= 0.6:
                assert place[b] < place[a], f"{a} outranks {b}, which beats it"


def test_each_of_the_top_ten_beats_every_one_below_it() -> None:
    ids, w = failure_shape()
    top = rank_population(w).order[:10]
    assert all(w[a, b] >= 0.5 for k, a in enumerate(top) for b in top[k + 1 :])


def test_nash_averaging_orders_the_members_below_the_layers() -> None:
    ids, w = failure_shape()
    ranking = rank_population(w, places=2)
    assert [ids[i] for i in ranking.order[:2]] == ["scripted_l5", "scripted_l4"]
    rest = ranking.order[2:]
    assert all(ranking.nash_average[a] >= ranking.nash_average[b] for a, b in zip(rest, rest[1:]))
    assert ranking.nash_average[ids.index("scripted_l5")] == 0.5  # the Nash mixture is level 5 alone


def test_adding_copies_of_a_beaten_snapshot_changes_nothing_above_it() -> None:
    ids, w = failure_shape()
    n = len(ids)
    copies = 30
    big = np.full((n + copies, n + copies), 0.5)
    big[:n, :n] = w
    first = ids.index(MAINS[0])
    big[n:, :n] = w[first]
    big[:n, n:] = w[:, [first]]
    top = [ids[i] for i in rank_population(w).order[:5]]
    assert [ids[i] for i in rank_population(big).order[:5]] == top


def cycle() -> tuple[list[str], np.ndarray]:
    """Rock, paper and scissors (each beats the next 0.7) above two members they all beat."""
    ids = ["rock", "paper", "scissors", "weak_1", "weak_2"]
    w = np.full((5, 5), 0.5)
    for a, b in ((0, 2), (2, 1), (1, 0)):
        w[a, b], w[b, a] = 0.7, 0.3
    for a in range(3):
        for b in (3, 4):
            w[a, b], w[b, a] = 0.9, 0.1
    w[3, 4], w[4, 3] = 0.6, 0.4
    return ids, w


def test_a_cycle_at_the_top_is_one_layer_and_its_line_names_it() -> None:
    ids, w = cycle()
    assert nash_clustering(w, places=5) == [[0, 1, 2], [3], [4]]
    ranking = rank_population(w)
    assert sorted(ranking.order[:3]) == [0, 1, 2]
    note = order_note(ids, w, ranking.order)
    assert note is not None and "\n" not in note
    assert note.startswith("not a strict order, the top holds a cycle: ")
    for link in ("rock beats scissors 0.70", "scissors beats paper 0.70", "paper beats rock 0.70"):
        assert link in note


def test_a_pair_out_of_order_without_a_cycle_is_named() -> None:
    ids = ["a", "b", "c"]
    w = np.array([[0.5, 0.4, 0.6], [0.6, 0.5, 0.6], [0.4, 0.4, 0.5]])
    assert order_note(ids, w, [1, 0, 2]) is None
    assert order_note(ids, w, [0, 1, 2]) == (
        "not a strict order: a ranks above b, which beats it 0.60, because a's layer beats b as a mixture"
    )


def test_an_empty_population_has_an_empty_order() -> None:
    empty = rank_population(np.zeros((0, 0)))
    assert isinstance(empty, Ranking) and empty.order == [] and empty.layer == {}
