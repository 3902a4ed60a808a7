"""The learner table: each kind's row, a plugin's row, per-role settings for any learner, and no
learner-kind name outside the table and the config schema.

* ``mappo`` and ``exact_br`` declare their component, learner class, settings and device use;
  ``exact_br``'s probe trains MAPPO;
* a plugin learner (``light_league.examples.my_learner``) gets a row of its own: ``LearnerRunner``, its class,
  its ``Config`` from ``learner.options`` with ``learner.by_role`` applied, the device when its
  constructor takes one; a bad per-role option is one line naming its path;
* ``validate`` resolves the kind once and hands the row on (``Validated.learner``);
* the strings ``"mappo"`` and ``"exact_br"`` as learner kinds appear only in the table and the
  config schema (``"mappo"`` is also a policy kind: the MAPPO policy's meta and its loader).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from light_league.algorithms.mappo import MAPPOConfig, MAPPOLearner
from light_league.build import validate
from light_league.config import load_config
from light_league.errors import ConfigError
from light_league.examples.my_learner import AnnealedEntropyConfig, AnnealedEntropyLearner
from light_league.learner_kinds import LEARNER_KINDS, learner_kind
from light_league.training.exact_br import ExactBRRunner
from light_league.training.learner_runner import LearnerRunner

ROOT = Path(__file__).resolve().parents[2]
PLUGIN = "light_league.examples.my_learner:AnnealedEntropyLearner"
#: where a learner-kind name may be written: the table and the config schema; and where "mappo"
#: names the MAPPO policy's kind (its meta, its loader), a different table
ALLOWED = {"light_league/learner_kinds.py", "light_league/learner_config.py"}
POLICY_KIND = {"light_league/algorithms/mappo/learner.py", "light_league/algorithms/registry.py"}


def test_the_built_in_rows() -> None:
    mappo, exact = LEARNER_KINDS["mappo"], LEARNER_KINDS["exact_br"]
    assert (mappo.component, mappo.learner, mappo.uses_device, mappo.exact_game) == (
        LearnerRunner,
        MAPPOLearner,
        True,
        False,
    )
    assert (exact.component, exact.learner, exact.uses_device, exact.exact_game) == (
        ExactBRRunner,
        None,
        False,
        True,
    )
    assert exact.probe_kind() is mappo and mappo.probe_kind() is mappo
    section = load_config(None, ["learner.by_role={main_exploiter: {clip_param: 0.3}}"]).learner
    assert isinstance(mappo.settings(section, "main_exploiter"), MAPPOConfig)
    assert mappo.settings(section, "main_exploiter").clip_param == 0.3  # type: ignore[union-attr]
    assert exact.settings(section, "main_agent") is None


def test_a_plugin_learner_has_a_row_and_per_role_options() -> None:
    section = load_config(
        None,
        [
            f"learner.kind={PLUGIN}",
            "learner.options={entropy_decay: 0.99}",
            "learner.by_role={main_exploiter: {entropy_decay: 0.5}}",
        ],
    ).learner
    kind = learner_kind(section)
    assert (kind.name, kind.component, kind.learner, kind.uses_device) == (
        PLUGIN,
        LearnerRunner,
        AnnealedEntropyLearner,
        True,
    )
    main, exploiter = kind.settings(section, "main_agent"), kind.settings(section, "main_exploiter")
    assert isinstance(main, AnnealedEntropyConfig) and isinstance(exploiter, AnnealedEntropyConfig)
    assert (main.entropy_decay, exploiter.entropy_decay) == (0.99, 0.5)
    bad = load_config(None, [f"learner.kind={PLUGIN}", "learner.by_role={main_agent: {entropy_decy: 0.5}}"])
    with pytest.raises(
        ConfigError, match=r"learner\.by_role\.main_agent\.entropy_decy.*did you mean entropy_decay"
    ):
        validate(bad)


def test_validate_resolves_the_kind_once_and_hands_the_row_on() -> None:
    checked = validate(load_config(ROOT / "expr_configs" / "rps_tiny.yaml", [f"learner.kind={PLUGIN}"]))
    assert checked.learner.learner is AnnealedEntropyLearner
    assert (
        validate(load_config(ROOT / "expr_configs" / "rps_tiny.yaml", [])).learner is LEARNER_KINDS["mappo"]
    )


def test_no_learner_kind_name_outside_the_table_and_the_config_schema() -> None:
    found = []
    for path in sorted((ROOT / "light_league").rglob("*.py")):
        name = path.relative_to(ROOT).as_posix()
        if name in ALLOWED:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Constant) and node.value in ("mappo", "exact_br"):
                if not (node.value == "mappo" and name in POLICY_KIND):
                    found.append(f"{name}:{node.lineno} {node.value!r}")
    assert found == []
