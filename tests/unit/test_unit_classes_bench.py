"""bench/unit_classes.py: its two-class teams choose their classes and play level 5; a tiny real run."""

from __future__ import annotations

import numpy as np
import pytest
import unit_classes as bench  # bench/ is on pytest's pythonpath

from light_league import envs
from light_league.envs import battalion_classes as bc


def test_a_two_class_team_chooses_its_classes_then_plays_level_5() -> None:
    env = envs.make_batched("battalion", 8, **bench.OPTIONS)
    spec = env.spec
    team = bench.TeamPolicy(spec, (bc.CAVALRY, bc.ARCHERS))
    level5 = envs.make_fixed_policy("battalion", "scripted_l5", **bench.OPTIONS)
    step = env.reset(seed=0)
    idx = np.tile(spec.index_in_team(), 8)
    for t in range(30):
        obs, mask = step.obs.reshape(-1, spec.obs_dim), step.action_mask.reshape(-1, spec.num_actions)
        logp = team.log_probs(obs, mask, idx)
        assert np.isclose(np.exp(logp).sum(1), 1.0).all() and mask[np.arange(len(obs)), logp.argmax(1)].all()
        if t > 0:
            np.testing.assert_array_equal(logp, level5.log_probs(obs, mask, idx))
        step = env.step(logp.argmax(1).reshape(8, -1))
        if t == 0:
            assert env.cls.tolist() == [[bc.CAVALRY, bc.ARCHERS, bc.CAVALRY, bc.ARCHERS]] * 8


@pytest.mark.integration  # plays 21 pairs (seconds)
def test_a_tiny_run_prints_the_table_and_the_mixture(capsys: pytest.CaptureFixture[str]) -> None:
    bench.main(["--games", "8"])
    out = capsys.readouterr().out
    for name in ("scripted_l5", *bench.COMMITTED, "l5 as infantry + cavalry"):
        assert f"\n{name} " in out
    assert "the Nash mixture of the table:" in out
