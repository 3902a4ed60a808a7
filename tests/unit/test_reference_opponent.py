"""The run's reference opponent: every "vs baseline" figure is against it, the same in every
generation (``evaluation.reference``, else the one the env declares, else its highest-rated
baseline); a reference that is not a baseline is a one-line error; it cannot change on resume."""

from __future__ import annotations

from pathlib import Path

import pytest

from light_league.build import validate
from light_league.config import ExperimentConfig, load_config, reference_opponent
from light_league.errors import ConfigError
from light_league.resume_rules import check_resume_changes
from light_league.runner import _run_reference

LEAGUE = str(Path(__file__).resolve().parents[2] / "expr_configs" / "league.yaml")


def league(*overrides: str) -> ExperimentConfig:
    return load_config(LEAGUE, list(overrides))


def test_battalion_declares_its_strongest_scripted_level() -> None:
    assert reference_opponent(league()) == "scripted_l5"


def test_without_the_declared_one_the_baseline_the_env_rates_highest() -> None:
    config = league("evaluation.baselines=[random,scripted_l1,scripted_l3]", "league.pool_max_size=64")
    assert reference_opponent(config) == "scripted_l3"
    assert reference_opponent(league("evaluation.baselines=[]")) is None


def test_a_reference_that_is_not_a_baseline_is_one_line_naming_it_and_the_fix() -> None:
    config = league("evaluation.baselines=[random,scripted_l4]", "evaluation.reference=scripted_l5")
    with pytest.raises(ConfigError) as caught:
        validate(config)
    message = str(caught.value)
    assert "\n" not in message
    assert message.startswith("evaluation.reference: 'scripted_l5' is not a baseline of the run")
    assert "add it to evaluation.baselines" in message
    assert reference_opponent(league("evaluation.reference=scripted_l3")) == "scripted_l3"


def test_the_reference_cannot_change_on_resume() -> None:
    with pytest.raises(ConfigError, match="evaluation.reference cannot change on resume"):
        check_resume_changes(league(), league("evaluation.reference=scripted_l4"))


def test_a_resumed_run_keeps_the_reference_its_records_name() -> None:
    lines = [{"generation": 0, "reference": "scripted_l4"}, {"generation": 1, "reference": "scripted_l4"}]
    assert _run_reference(league(), lines) == "scripted_l4"  # though scripted_l5 is a baseline now
    assert _run_reference(league(), [{"generation": 0}]) == "scripted_l5"  # written before it: the config's
