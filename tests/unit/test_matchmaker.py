"""LeagueMatchmaker: PFSP probabilities, custom weights, Nash weights, sampling."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from light_league.league import AgentPool, AgentType, LeagueMatchmaker, MatchDatabase


@pytest.fixture
def league(tmp_path: Path) -> tuple[AgentPool, MatchDatabase]:
    pool = AgentPool(pool_manifest=tmp_path / "pool.json")
    for kind in (
        AgentType.MAIN_AGENT,
        AgentType.MAIN_EXPLOITER,
        AgentType.LEAGUE_EXPLOITER,
        AgentType.BASELINE,
    ):
        pool.add(f"{kind.value}.pt", kind)
    db = MatchDatabase(db_path=tmp_path / "matches.jsonl")
    # main_agent_0000 beats the main exploiter 3 of 4, league exploiter 1 of 4; never met the baseline
    db.record_many([("main_agent_0000", "main_exploiter_0000", o) for o in (1.0, 1.0, 1.0, 0.0)])
    db.record_many([("main_agent_0000", "league_exploiter_0000", o) for o in (1.0, 0.0, 0.0, 0.0)])
    return pool, db


FOCAL = "main_agent_0000"
OPPONENTS = ["main_exploiter_0000", "league_exploiter_0000", "baseline_0000"]
RATES = np.array([0.75, 0.25, 0.5])


def test_default_is_hard_first_pfsp(league: tuple[AgentPool, MatchDatabase]) -> None:
    for p in (1.0, 2.0, 0.5):
        probs = LeagueMatchmaker(*league, pfsp_temperature=p).opponent_probabilities(FOCAL)
        expected = (1 - RATES) ** p / ((1 - RATES) ** p).sum()
        assert list(probs) == OPPONENTS
        np.testing.assert_allclose(list(probs.values()), expected)


def test_custom_weight_function_and_reset(league: tuple[AgentPool, MatchDatabase]) -> None:
    mm = LeagueMatchmaker(*league)
    default = mm.opponent_probabilities(FOCAL)
    mm.set_weight_function(lambda x: x)  # easy-first
    np.testing.assert_allclose(list(mm.opponent_probabilities(FOCAL).values()), RATES / RATES.sum())
    mm.set_weight_function(None)
    assert mm.opponent_probabilities(FOCAL) == default


def test_all_zero_weights_fall_back_to_uniform(league: tuple[AgentPool, MatchDatabase]) -> None:
    mm = LeagueMatchmaker(*league)
    mm.set_weight_function(lambda x: 0.0)
    np.testing.assert_allclose(list(mm.opponent_probabilities(FOCAL).values()), np.full(3, 1 / 3))


def test_bad_weight_function_output_is_refused(league: tuple[AgentPool, MatchDatabase]) -> None:
    mm = LeagueMatchmaker(*league)
    mm.set_weight_function(lambda x: x - 0.6)
    with pytest.raises(ValueError, match="finite weights >= 0"):
        mm.opponent_probabilities(FOCAL)


def test_nash_weights_drive_sampling_and_zero_is_never_drawn(league: tuple[AgentPool, MatchDatabase]) -> None:
    mm = LeagueMatchmaker(*league, seed=0)
    mm.set_nash_weights(
        {FOCAL: 0.5, "main_exploiter_0000": 0.1, "league_exploiter_0000": 0.4, "baseline_0000": 0.0}
    )
    probs = mm.opponent_probabilities(FOCAL)
    assert probs == pytest.approx(
        {"main_exploiter_0000": 0.2, "league_exploiter_0000": 0.8, "baseline_0000": 0.0}
    )
    draws = Counter(mm.select_opponent(FOCAL) for _ in range(2000))
    assert draws["baseline_0000"] == 0
    assert draws["league_exploiter_0000"] / 2000 == pytest.approx(0.8, abs=0.05)
    mm.set_nash_weights(None)
    assert mm.opponent_probabilities(FOCAL)["baseline_0000"] > 0.0


def test_members_missing_from_the_mixture_are_never_drawn(league: tuple[AgentPool, MatchDatabase]) -> None:
    mm = LeagueMatchmaker(*league, seed=1)
    mm.set_nash_weights({"league_exploiter_0000": 1.0})
    assert {mm.select_opponent(FOCAL) for _ in range(200)} == {"league_exploiter_0000"}


def test_nash_mass_only_on_focal_falls_back_to_pfsp(
    league: tuple[AgentPool, MatchDatabase], caplog: pytest.LogCaptureFixture
) -> None:
    mm = LeagueMatchmaker(*league)
    mm.set_nash_weights({FOCAL: 1.0})
    expected = (1 - RATES) / (1 - RATES).sum()
    np.testing.assert_allclose(list(mm.opponent_probabilities(FOCAL).values()), expected)
    assert "no weight to any opponent" in caplog.text


def test_bad_nash_weights_are_refused(league: tuple[AgentPool, MatchDatabase]) -> None:
    mm = LeagueMatchmaker(*league)
    with pytest.raises(ValueError, match="did you mean main_agent_0000"):
        mm.set_nash_weights({"main_agent_000": 1.0})
    with pytest.raises(ValueError, match=">= 0"):
        mm.set_nash_weights({FOCAL: -0.5})


def test_no_candidates_gives_none(tmp_path: Path) -> None:
    pool = AgentPool(pool_manifest=tmp_path / "pool.json")
    db = MatchDatabase(db_path=tmp_path / "m.jsonl")
    mm = LeagueMatchmaker(pool, db)
    assert mm.select_opponent("learner") is None and mm.opponent_probabilities("learner") == {}
    only = pool.add("a.pt", AgentType.MAIN_AGENT)
    assert mm.select_opponent(only.agent_id) is None
    assert mm.select_opponent("learner") == only.agent_id  # a live learner outside the pool


def test_sampling_follows_probabilities_and_is_reproducible(league: tuple[AgentPool, MatchDatabase]) -> None:
    mm = LeagueMatchmaker(*league, pfsp_temperature=2.0)
    n = 4000
    rng = np.random.default_rng(11)
    counts = Counter(mm.select_opponent(FOCAL, rng=rng) for _ in range(n))
    for opponent, p in mm.opponent_probabilities(FOCAL).items():
        assert counts[opponent] / n == pytest.approx(p, abs=0.03)
    seeded = [LeagueMatchmaker(*league, seed=3) for _ in range(2)]
    assert [seeded[0].select_opponent(FOCAL) for _ in range(20)] == [
        seeded[1].select_opponent(FOCAL) for _ in range(20)
    ]


def test_bad_temperature_is_refused(league: tuple[AgentPool, MatchDatabase]) -> None:
    with pytest.raises(ValueError, match="pfsp_temperature"):
        LeagueMatchmaker(*league, pfsp_temperature=-1.0)
