"""PSRO-Nash scheduler: best responses against the Nash mixture, snapshot and reset every generation."""

from __future__ import annotations

import pytest
from fake_league import FakeLeague, member

from light_league.scheduling.psro import PSROScheduler, PSROSchedulerConfig
from light_league.types import AgentRecord, AgentType

BR = AgentType.BEST_RESPONSE


def make(players: int = 1, **options: object) -> PSROScheduler:
    return PSROScheduler(PSROSchedulerConfig.model_validate({"players": players, **options}), seed=0)


def population() -> list[AgentRecord]:
    return [
        member("random", AgentType.BASELINE),
        member("br_0_s0", BR, parent="br_0"),
        member("br_1_s0", BR, parent="br_1"),
    ]


def test_one_learner_per_player() -> None:
    assert [(s.learner_id, s.role) for s in make(1).learners()] == [("br_0", BR)]
    assert [s.learner_id for s in make(2).learners()] == ["br_0", "br_1"]


def test_first_generation_is_uniform_over_the_initial_members() -> None:
    league = FakeLeague(
        {"br_0": BR}, population=[member("random", AgentType.BASELINE), member("rock", AgentType.BASELINE)]
    )
    (task,) = make().next_tasks(league)
    assert task.opponents == {"random": 0.5, "rock": 0.5}
    assert task.weighting == "uniform(no_meta_strategy)"
    assert task.info == {}


def test_tasks_follow_the_nash_mixture_without_zero_mass_members() -> None:
    nash = {"random": 0.25, "br_0_s0": 0.0, "br_1_s0": 0.75}
    league = FakeLeague({"br_0": BR}, population=population(), mixture=nash)
    (task,) = make(steps_per_generation=123).next_tasks(league)
    assert task.opponents == pytest.approx({"random": 0.25, "br_1_s0": 0.75})
    assert task.weighting == "meta_strategy"
    assert task.env_steps == 123


def test_two_players_face_the_other_seats_population_with_renormalised_nash() -> None:
    nash = {"random": 0.2, "br_0_s0": 0.5, "br_1_s0": 0.3}
    league = FakeLeague({"br_0": BR, "br_1": BR}, population=population(), mixture=nash)
    br0, br1 = make(2).next_tasks(league)
    assert (br0.learner_id, br0.info) == ("br_0", {"seat": 0})
    assert br0.opponents == pytest.approx({"random": 0.4, "br_1_s0": 0.6})
    assert (br1.learner_id, br1.info) == ("br_1", {"seat": 1})
    assert br1.opponents == pytest.approx({"random": 0.2 / 0.7, "br_0_s0": 0.5 / 0.7})


def test_empty_population_falls_back_to_a_live_learner() -> None:
    (task,) = make(1).next_tasks(FakeLeague({"br_0": BR}))
    assert task.opponents == {"br_0": 1.0}
    br0, br1 = make(2).next_tasks(FakeLeague({"br_0": BR, "br_1": BR}))
    assert br0.opponents == {"br_1": 1.0} and br1.opponents == {"br_0": 1.0}
    assert br0.weighting == "self_play(fallback:no_members)"


def test_nash_without_mass_on_candidates_is_uniform() -> None:
    league = FakeLeague({"br_0": BR}, population=population()[:1], mixture={"gone": 1.0})
    (task,) = make().next_tasks(league)
    assert task.opponents == {"random": 1.0}
    assert task.weighting == "uniform(fallback:zero_meta_strategy)"


def test_every_learner_is_snapshotted_and_reset_each_generation() -> None:
    league = FakeLeague({"br_0": BR, "br_1": BR})
    decisions = make(2).after_training(league)
    assert decisions.snapshot == ["br_0", "br_1"]
    assert decisions.reset == ["br_0", "br_1"]
    kept = make(2, reset_after_snapshot=False).after_training(league)
    assert kept.snapshot == ["br_0", "br_1"] and kept.reset == []
