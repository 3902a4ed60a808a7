"""The league scheduler's role table: built-in roles as objects, roles added by config entry
(built-in class, ``module:Class`` or entry point of ``light_league.roles``), labels checked."""

from __future__ import annotations

import importlib.metadata
from pathlib import Path
from typing import Any

import pytest
from fake_league import FakeLeague, member

from light_league.errors import ConfigError
from light_league.scheduling.alphastar import (
    ROLE_ENTRY_POINT_GROUP,
    ROLES,
    LeagueExploiterRole,
    LeagueScheduler,
    MainAgentRole,
    MainExploiterRole,
    resolve_role,
)
from light_league.scheduling.registry import build_scheduler
from light_league.types import AgentType, LearnerSetup, MatchResult

REPO_ROOT = Path(__file__).resolve().parents[2]
PLUGIN = "light_league.examples.historical_exploiter:HistoricalExploiterRole"


@pytest.fixture(autouse=True)
def repo_on_path(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.syspath_prepend(str(REPO_ROOT))


def league_with(roles: dict[str, Any], **options: Any) -> LeagueScheduler:
    scheduler = build_scheduler("league", {"league_exploiters": 1, "roles": roles, **options}, seed=0)
    assert isinstance(scheduler, LeagueScheduler)
    return scheduler


def test_the_alphastar_roles_are_a_table_of_objects() -> None:
    assert ROLES == {
        "main_agent": MainAgentRole,
        "main_exploiter": MainExploiterRole,
        "league_exploiter": LeagueExploiterRole,
    }
    scheduler = league_with({})
    assert [type(role) for role, _ in scheduler.roles.values()] == list(ROLES.values())
    assert [s.learner_id for s in scheduler.learners()] == [
        "main_agent_0",
        "main_exploiter_0",
        "league_exploiter_0",
    ]
    assert [s.initial_member for s in scheduler.learners()] == [True, False, False]


def test_a_role_added_by_config_entry_gets_learners_tasks_and_decisions() -> None:
    scheduler = league_with({"old_main": {"kind": PLUGIN, "count": 2, "options": {"min_age": 0}}})
    setups = scheduler.learners()
    assert [s.learner_id for s in setups[-2:]] == ["old_main_0", "old_main_1"]
    assert setups[-1].role == "old_main" and isinstance(setups[-1].role, AgentType)
    old = member("main_agent_0-v1", AgentType.MAIN_AGENT, parent="main_agent_0")
    old.metadata["generation"] = 0
    league = FakeLeague({s.learner_id: s.role for s in setups}, population=[old], generation_index=2)
    tasks = {t.learner_id: t for t in scheduler.next_tasks(league)}
    assert tasks["old_main_1"].opponents == {"main_agent_0-v1": 1.0}
    assert tasks["old_main_1"].role == "old_main"
    results = [
        MatchResult("old_main_0", "main_agent_0-v1", 0, 1.0, 1.0),
        MatchResult("old_main_1", "x", 1, 0.0, -1.0),
    ]
    assert scheduler.metrics(league, results)["historical/win_rate"] == 0.5


def test_a_built_in_role_class_can_serve_a_second_label() -> None:
    scheduler = league_with(
        {"sharp_exploiter": {"kind": "main_exploiter", "options": {"main_win_rate": 0.5}}}
    )
    role, count = scheduler.roles["sharp_exploiter"]
    assert isinstance(role, MainExploiterRole) and count == 1 and role.name == "sharp_exploiter"


def test_role_entry_point(monkeypatch: pytest.MonkeyPatch) -> None:
    def fake_entry_points(**selection: Any) -> list[importlib.metadata.EntryPoint]:
        assert selection == {"group": ROLE_ENTRY_POINT_GROUP}
        return [importlib.metadata.EntryPoint(name="historical", value=PLUGIN, group=ROLE_ENTRY_POINT_GROUP)]

    monkeypatch.setattr(importlib.metadata, "entry_points", fake_entry_points)
    assert resolve_role("historical") is resolve_role(PLUGIN)
    with pytest.raises(ConfigError, match=r"unknown league role 'histrical'; did you mean historical\?"):
        resolve_role("histrical")


def test_labels_are_validated_and_baseline_is_reserved() -> None:
    with pytest.raises(ValueError, match="is not valid"):
        AgentType("Main Agent")
    with pytest.raises(ValueError, match="'baseline' is reserved"):
        LearnerSetup("x", AgentType.BASELINE)
    assert AgentType("historical_exploiter").value == "historical_exploiter"
    assert AgentType.MAIN_AGENT == "main_agent" and AgentType(AgentType.MAIN_AGENT) is AgentType.MAIN_AGENT


def test_a_learner_whose_role_the_table_lacks_is_a_clear_error() -> None:
    scheduler = league_with({})
    league = FakeLeague({"main_agent_0": AgentType.MAIN_AGENT, "ghost_0": AgentType("ghost")})
    with pytest.raises(ValueError, match="league scheduler has no role 'ghost'"):
        scheduler.next_tasks(league)
