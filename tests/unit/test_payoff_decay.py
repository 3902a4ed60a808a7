"""DecayedPayoff against a plain re-statement of AlphaStar's Payoff bookkeeping."""

from __future__ import annotations

import json
from collections import defaultdict

import numpy as np
import pytest

from light_league.game_theory.payoff import DecayedPayoff


class ReferencePayoff:
    """AlphaStar's pseudocode, with results 'win' / 'draw' / 'loss'."""

    def __init__(self, decay: float) -> None:
        self.decay = decay
        self.wins: defaultdict[tuple[str, str], float] = defaultdict(float)
        self.draws: defaultdict[tuple[str, str], float] = defaultdict(float)
        self.losses: defaultdict[tuple[str, str], float] = defaultdict(float)
        self.games: defaultdict[tuple[str, str], float] = defaultdict(float)

    def update(self, home: str, away: str, result: str) -> None:
        for stats in (self.games, self.wins, self.draws, self.losses):
            stats[home, away] *= self.decay
            stats[away, home] *= self.decay
        self.games[home, away] += 1
        self.games[away, home] += 1
        if result == "win":
            self.wins[home, away] += 1
            self.losses[away, home] += 1
        elif result == "draw":
            self.draws[home, away] += 1
            self.draws[away, home] += 1
        else:
            self.wins[away, home] += 1
            self.losses[home, away] += 1

    def win_rate(self, home: str, away: str) -> float:
        if self.games[home, away] == 0:
            return 0.5
        return (self.wins[home, away] + 0.5 * self.draws[home, away]) / self.games[home, away]


RESULT_OF = {1.0: "win", 0.5: "draw", 0.0: "loss"}


def random_games(seed: int, n: int) -> list[tuple[str, str, float]]:
    rng = np.random.default_rng(seed)
    players = ["a", "b", "c"]
    return [
        (str(players[rng.integers(3)]), str(players[rng.integers(3)]), float(rng.choice([0.0, 0.5, 1.0])))
        for _ in range(n)
    ]


def test_matches_reference_pseudocode_including_self_play() -> None:
    ours, ref = DecayedPayoff(decay=0.9), ReferencePayoff(decay=0.9)
    for home, away, outcome in random_games(0, 300):
        ours.update(home, away, outcome)
        ref.update(home, away, RESULT_OF[outcome])
    for home in "abc":
        for away in "abc":
            assert ours.win_rate(home, away) == pytest.approx(ref.win_rate(home, away), abs=1e-12)
            assert ours.games(home, away) == pytest.approx(ref.games[home, away], abs=1e-12)
            assert ours.wins(home, away) == pytest.approx(ref.wins[home, away], abs=1e-12)
            assert ours.draws(home, away) == pytest.approx(ref.draws[home, away], abs=1e-12)
            assert ours.losses(home, away) == pytest.approx(ref.losses[home, away], abs=1e-12)


def test_unplayed_pair_is_even() -> None:
    payoff = DecayedPayoff()
    assert payoff.win_rate("x", "y") == 0.5
    assert payoff.games("x", "y") == 0.0


def test_decay_known_answer() -> None:
    payoff = DecayedPayoff(decay=0.5)
    payoff.update("a", "b", 1.0)
    payoff.update("a", "b", 0.0)
    # wins 0.5*1 = 0.5, games 0.5*1 + 1 = 1.5
    assert payoff.win_rate("a", "b") == pytest.approx(0.5 / 1.5)
    assert payoff.win_rate("b", "a") == pytest.approx(1.0 / 1.5)
    assert payoff.games("b", "a") == pytest.approx(1.5)


def test_fractional_outcome_is_mean_score() -> None:
    payoff = DecayedPayoff(decay=1.0)
    for outcome in (0.7, 0.2, 1.0, 0.5):
        payoff.update("a", "b", outcome)
    assert payoff.win_rate("a", "b") == pytest.approx((0.7 + 0.2 + 1.0 + 0.5) / 4)
    assert payoff.win_rate("a", "b") + payoff.win_rate("b", "a") == pytest.approx(1.0)


@pytest.mark.parametrize(("home", "away"), [("a", "b"), ("a", "a")])
def test_update_many_equals_update_loop(home: str, away: str) -> None:
    outcomes = np.random.default_rng(3).choice([0.0, 0.5, 1.0, 0.25], size=57)
    looped, batched = DecayedPayoff(decay=0.97), DecayedPayoff(decay=0.97)
    for warmup in (("a", "b", 1.0), ("b", "a", 0.5), ("a", "a", 0.0)):
        looped.update(*warmup)
        batched.update(*warmup)
    for outcome in outcomes:
        looped.update(home, away, float(outcome))
    batched.update_many(home, away, outcomes)
    for pair in (("a", "b"), ("b", "a"), ("a", "a")):
        for counter in ("wins", "draws", "losses", "games"):
            assert getattr(batched, counter)(*pair) == pytest.approx(
                getattr(looped, counter)(*pair), rel=1e-12
            )


def test_update_many_accepts_lists_and_empty() -> None:
    payoff = DecayedPayoff()
    payoff.update_many("a", "b", [])
    assert payoff.games("a", "b") == 0.0
    payoff.update_many("a", "b", [1.0, 1.0])
    assert payoff.win_rate("a", "b") == 1.0


@pytest.mark.parametrize("bad", [1.5, -0.2, float("nan")])
def test_bad_outcomes_are_refused(bad: float) -> None:
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        DecayedPayoff().update("a", "b", bad)
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        DecayedPayoff().update_many("a", "b", [0.5, bad])


def test_state_dict_round_trips_through_json() -> None:
    payoff = DecayedPayoff(decay=0.95)
    for home, away, outcome in random_games(1, 50):
        payoff.update(home, away, outcome)
    restored = DecayedPayoff.from_state_dict(json.loads(json.dumps(payoff.state_dict())))
    assert restored.decay == 0.95
    ids = ["a", "b", "c"]
    np.testing.assert_array_equal(restored.win_rate_matrix(ids, ids), payoff.win_rate_matrix(ids, ids))


def test_bad_state_is_refused() -> None:
    with pytest.raises(ValueError, match="state_dict"):
        DecayedPayoff.from_state_dict({"decay": 0.9, "pairs": [["a", "b", 1.0]]})
