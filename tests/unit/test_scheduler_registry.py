"""Scheduler registry: built-ins, module:Class plugins, entry points, and one-line errors."""

from __future__ import annotations

import importlib.metadata
from pathlib import Path
from typing import Any

import pytest
from fake_league import FakeLeague, member

from light_league.errors import ConfigError
from light_league.scheduling import (
    ENTRY_POINT_GROUP,
    SCHEDULERS,
    LeagueScheduler,
    PSROScheduler,
    SelfPlayScheduler,
    build_scheduler,
    resolve_scheduler,
)
from light_league.types import AgentType

REPO_ROOT = Path(__file__).resolve().parents[2]
PLUGIN = "examples.my_scheduler:HardestFirstScheduler"


@pytest.fixture(autouse=True)
def repo_on_path(monkeypatch: pytest.MonkeyPatch) -> None:
    """``examples`` is not an installed package: it imports from the repository root."""
    monkeypatch.syspath_prepend(str(REPO_ROOT))


@pytest.fixture
def one_entry_point(monkeypatch: pytest.MonkeyPatch) -> None:
    def fake_entry_points(**selection: Any) -> list[importlib.metadata.EntryPoint]:
        assert selection == {"group": ENTRY_POINT_GROUP}
        return [importlib.metadata.EntryPoint(name="hardest_first", value=PLUGIN, group=ENTRY_POINT_GROUP)]

    monkeypatch.setattr(importlib.metadata, "entry_points", fake_entry_points)


def test_builtin_names() -> None:
    assert SCHEDULERS == {"league": LeagueScheduler, "psro": PSROScheduler, "self_play": SelfPlayScheduler}
    for name, cls in SCHEDULERS.items():
        assert resolve_scheduler(name) is cls
        assert cls.name == name


def test_module_class_plugin_resolves_and_runs() -> None:
    cls = resolve_scheduler(PLUGIN)
    assert cls.__name__ == "HardestFirstScheduler"
    scheduler = build_scheduler(PLUGIN, {"steps_per_generation": 7}, seed=0)
    (setup,) = scheduler.learners()
    league = FakeLeague(
        {setup.learner_id: setup.role},
        population=[member(k, AgentType.BASELINE) for k in ("easy", "hard", "also_hard")],
    )
    league.set_win_rates(setup.learner_id, {"easy": 0.9, "hard": 0.2, "also_hard": 0.2})
    (task,) = scheduler.next_tasks(league)
    assert (task.opponents, task.env_steps) == ({"hard": 1.0}, 7)
    assert scheduler.after_training(league).snapshot == [setup.learner_id]


def test_entry_point_plugin(one_entry_point: None) -> None:
    assert resolve_scheduler("hardest_first") is resolve_scheduler(PLUGIN)


def test_unknown_name_lists_valid_ones_with_did_you_mean(one_entry_point: None) -> None:
    with pytest.raises(ConfigError) as excinfo:
        resolve_scheduler("leage")
    message = str(excinfo.value)
    assert "unknown scheduler 'leage'; did you mean league?" in message
    assert "valid: hardest_first, league, psro, self_play" in message
    assert "\n" not in message


@pytest.mark.parametrize(
    ("name", "fragment"),
    [
        ("collections:OrderedDict", "not a subclass of light_league.scheduling.TaskScheduler"),
        ("light_league.scheduling.task_scheduler:TaskScheduler", "is abstract: implement after_training"),
        ("no_such_plugin_pkg.mod:Thing", "cannot import module 'no_such_plugin_pkg.mod'"),
        ("examples.my_scheduler:HardestFirst", "did you mean HardestFirstScheduler?"),
        ("a:b:c", "must look like 'package.module:ClassName'"),
    ],
)
def test_bad_plugin_names_fail_with_one_line(name: str, fragment: str) -> None:
    with pytest.raises(ConfigError) as excinfo:
        resolve_scheduler(name)
    assert fragment in str(excinfo.value)
    assert "\n" not in str(excinfo.value)


@pytest.mark.parametrize(
    ("options", "fragment"),
    [
        (
            {"stepz_per_generation": 1},
            "scheduler.stepz_per_generation: unknown key; did you mean steps_per_generation?",
        ),
        (
            {"main_agent": {"weigthing": "nash"}},
            "scheduler.main_agent.weigthing: unknown key; did you mean weighting?",
        ),
        (
            {"zzz": 1},
            "scheduler.zzz: unknown key; valid keys: league_exploiter, league_exploiters, main_agent,",
        ),
        ({"main_agents": "two"}, "scheduler.main_agents: 'two' is invalid: Input should be a valid integer"),
        (
            {"league_exploiter": {"weighting": "elo"}},
            "scheduler.league_exploiter.weighting: 'elo' is invalid: Input should be",
        ),
        (
            {"main_exploiter": {"checkpoint_min_steps": 10, "checkpoint_max_steps": 5}},
            "scheduler.main_exploiter: {...} is invalid: checkpoint_max_steps (5) must be >= checkpoint_min_steps (10)",
        ),
    ],
)
def test_bad_options_name_the_dotted_path(options: dict[str, Any], fragment: str) -> None:
    with pytest.raises(ConfigError) as excinfo:
        build_scheduler("league", options, seed=0)
    assert fragment in str(excinfo.value)


def test_options_must_be_a_mapping() -> None:
    with pytest.raises(ConfigError, match="scheduler options must be a mapping"):
        build_scheduler("psro", ["players", 2], seed=0)  # type: ignore[arg-type]


def test_build_scheduler_applies_options_and_seed() -> None:
    scheduler = build_scheduler("psro", {"players": 2}, seed=3)
    assert [s.learner_id for s in scheduler.learners()] == ["br_0", "br_1"]
    again = build_scheduler("psro", {"players": 2}, seed=3)
    assert scheduler.rng.random() == again.rng.random()
