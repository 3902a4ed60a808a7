"""Scheduler registry: built-ins, module:Class plugins, entry points, and one-line errors."""

from __future__ import annotations

import importlib.metadata
import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from fake_league import FakeLeague, member

from light_league.cli import _print_config
from light_league.config import load_config
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
PLUGIN = "light_league.examples.my_scheduler:HardestFirstScheduler"


@pytest.fixture(autouse=True)
def repo_on_path(monkeypatch: pytest.MonkeyPatch) -> None:
    """This checkout's light_league (and its examples) first on the path."""
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


def test_the_examples_old_module_path_resolves_to_the_installed_example(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """A run directory written before the examples moved into light_league names
    ``examples.my_scheduler:...``: with no top-level ``examples`` providing it, it is the package's
    (also beside an ``examples/`` folder that a checkout from before the move kept for its
    __pycache__); a module that is not one of the examples still fails, naming the name given."""
    import sys

    from light_league.examples.my_scheduler import HardestFirstScheduler

    monkeypatch.delitem(sys.modules, "examples", raising=False)
    assert resolve_scheduler("examples.my_scheduler:HardestFirstScheduler") is HardestFirstScheduler
    (tmp_path / "examples" / "__pycache__").mkdir(parents=True)
    monkeypatch.syspath_prepend(str(tmp_path))
    assert resolve_scheduler("examples.my_scheduler:HardestFirstScheduler") is HardestFirstScheduler
    sys.modules.pop("examples", None)  # the namespace package of that folder, gone with the test
    with pytest.raises(ConfigError, match="cannot import module 'examples.no_such_example'"):
        resolve_scheduler("examples.no_such_example:Thing")


@pytest.mark.parametrize(
    ("name", "fragment"),
    [
        ("collections:OrderedDict", "not a subclass of light_league.scheduling.TaskScheduler"),
        ("light_league.scheduling.task_scheduler:TaskScheduler", "is abstract: implement after_training"),
        ("no_such_plugin_pkg.mod:Thing", "cannot import module 'no_such_plugin_pkg.mod'"),
        ("light_league.examples.my_scheduler:HardestFirst", "did you mean HardestFirstScheduler?"),
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


def test_a_misspelt_scheduler_option_is_refused_when_the_config_is_loaded() -> None:
    """One line with a did-you-mean from ``load_config``, before a runner (torch, Ray) is imported."""
    override = "scheduler.main_agent.steps_per_generaton=5"
    with pytest.raises(ConfigError) as excinfo:
        load_config(REPO_ROOT / "expr_configs" / "league.yaml", [override])
    assert str(excinfo.value) == (
        f"command-line override {override!r}: scheduler.main_agent.steps_per_generaton: unknown key; "
        "did you mean steps_per_generation?"
    )
    with pytest.raises(ConfigError, match="unknown scheduler 'leage'; did you mean league?"):
        load_config(REPO_ROOT / "expr_configs" / "league.yaml", ["scheduler.name=leage"])


@pytest.mark.parametrize("name", sorted(SCHEDULERS))
def test_the_loaded_config_holds_every_scheduler_option_with_its_default(
    name: str, capsys: pytest.CaptureFixture[str]
) -> None:
    config = load_config(None, [f"scheduler.name={name}"])
    defaults = SCHEDULERS[name].Config().model_dump(mode="json")
    assert config.to_dict()["scheduler"] == {"name": name, **defaults}
    assert load_config(None, [f"scheduler.name={name}", *_overrides(defaults)]).scheduler == config.scheduler
    _print_config(config)
    assert yaml.safe_load(capsys.readouterr().out)["scheduler"] == {"name": name, **defaults}


def test_print_config_shows_the_file_s_scheduler_options_and_the_defaults_it_leaves_out(
    capsys: pytest.CaptureFixture[str],
) -> None:
    _print_config(load_config(REPO_ROOT / "expr_configs" / "league.yaml"))
    scheduler = yaml.safe_load(capsys.readouterr().out)["scheduler"]
    assert scheduler["steps_per_generation"] == 48000  # the file's
    assert scheduler["main_agent"]["pfsp_probability"] == 0.5  # defaults
    assert scheduler["main_exploiter"]["curriculum_probability"] == 1.0
    assert scheduler["league_exploiter"]["reset_probability"] == 0.25


def _overrides(options: dict[str, Any], prefix: str = "scheduler") -> list[str]:
    """``options`` as ``key.path=value`` overrides (a mapping's leaves; an empty mapping whole)."""
    out = []
    for key, value in options.items():
        if isinstance(value, dict) and value:
            out += _overrides(value, f"{prefix}.{key}")
        else:
            out.append(f"{prefix}.{key}={json.dumps(value)}")
    return out
