"""Self-play and fictitious self-play scheduler."""

from __future__ import annotations

import pytest
from fake_league import FakeLeague, member

from light_league.scheduling.self_play import SelfPlayScheduler, SelfPlaySchedulerConfig
from light_league.types import AgentType

MA = "main_agent_0"


def make(**options: object) -> SelfPlayScheduler:
    return SelfPlayScheduler(SelfPlaySchedulerConfig.model_validate(options), seed=0)


def league_with_snapshots() -> FakeLeague:
    population = [
        member("random", AgentType.BASELINE, created_at=0.0),
        member("s0", AgentType.MAIN_AGENT, parent=MA, created_at=1.0),
        member("s1", AgentType.MAIN_AGENT, parent=MA, created_at=2.0),
    ]
    return FakeLeague({MA: AgentType.MAIN_AGENT}, population=population)


def test_latest_plays_the_current_self() -> None:
    (task,) = make().next_tasks(league_with_snapshots())
    assert (task.learner_id, task.opponents, task.weighting) == (MA, {MA: 1.0}, "self_play")


def test_latest_snapshot_plays_the_newest_own_snapshot() -> None:
    scheduler = make(latest_opponent="snapshot")
    (task,) = scheduler.next_tasks(league_with_snapshots())
    assert task.opponents == {"s1": 1.0}
    (first,) = scheduler.next_tasks(FakeLeague({MA: AgentType.MAIN_AGENT}))
    assert first.opponents == {MA: 1.0} and first.weighting == "self_play(fallback:no_snapshot)"


def test_fictitious_is_uniform_over_the_population() -> None:
    (task,) = make(mode="fictitious").next_tasks(league_with_snapshots())
    assert task.opponents == pytest.approx({"random": 1 / 3, "s0": 1 / 3, "s1": 1 / 3})
    assert task.weighting == "uniform"
    (first,) = make(mode="fictitious").next_tasks(FakeLeague({MA: AgentType.MAIN_AGENT}))
    assert first.opponents == {MA: 1.0}


def test_snapshot_every_k_generations_and_never_reset() -> None:
    scheduler = make(snapshot_every=3)
    league = FakeLeague({MA: AgentType.MAIN_AGENT})
    decisions = [scheduler.after_training(league) for _ in range(7)]
    assert [d.snapshot for d in decisions] == [[], [], [MA], [], [], [MA], []]
    assert all(d.reset == [] for d in decisions)
    resumed = make(snapshot_every=3)
    resumed.load_state_dict(scheduler.state_dict())
    assert [resumed.after_training(league).snapshot for _ in range(2)] == [[], [MA]]
