"""Commands printed in the docs are accepted as printed."""

from __future__ import annotations

import shlex
from pathlib import Path

import numpy as np
import pytest

from light_league.build import validate
from light_league.config import load_config
from light_league.game_theory.nash import compute_nash_distribution

ROOT = Path(__file__).resolve().parents[2]


def _commands(doc: str, prefix: str) -> list[list[str]]:
    lines = (ROOT / "docs" / doc).read_text(encoding="utf-8").splitlines()
    return [shlex.split(line)[2:] for line in lines if line.startswith(prefix)]


@pytest.mark.parametrize("argv", _commands("plugins.md", "python main.py --config"))
def test_the_scheduler_switch_commands_of_plugins_md_validate(argv: list[str]) -> None:
    assert argv[0] == "--config"
    config = load_config(ROOT / argv[1], argv[2:])
    scheduler = validate(config).scheduler
    assert type(scheduler).__name__ == "HardestFirstScheduler"


def test_switching_the_scheduler_keeps_the_new_schedulers_own_overrides() -> None:
    config = load_config(
        ROOT / "expr_configs" / "league.yaml",
        [
            "scheduler.name=light_league.examples.my_scheduler:HardestFirstScheduler",
            "scheduler.steps_per_generation=4000",
        ],
    )
    assert config.to_dict()["scheduler"] == {
        "name": "light_league.examples.my_scheduler:HardestFirstScheduler",
        "steps_per_generation": 4000,
    }
    same = load_config(ROOT / "expr_configs" / "league.yaml", ["scheduler.name=league"])
    assert (
        same.to_dict()["scheduler"]
        == load_config(ROOT / "expr_configs" / "league.yaml").to_dict()["scheduler"]
    )


def test_nash_returns_the_documented_equilibrium() -> None:
    """docs/metrics.md, "Which Nash mixture": one extreme point, the earliest of equal members."""
    np.testing.assert_allclose(compute_nash_distribution(np.full((3, 3), 0.5)), [1.0, 0.0, 0.0])
    twins = np.array([[0.5, 0.5, 0.8], [0.5, 0.5, 0.8], [0.2, 0.2, 0.5]])
    np.testing.assert_allclose(compute_nash_distribution(twins), [1.0, 0.0, 0.0])
    cycle = np.array(
        [[0.5, 1, 0, 1, 0], [0, 0.5, 1, 0, 1], [1, 0, 0.5, 1, 0], [0, 1, 0, 0.5, 1], [1, 0, 1, 0, 0.5]]
    )
    np.testing.assert_allclose(compute_nash_distribution(cycle), np.full(5, 0.2), atol=1e-9)
