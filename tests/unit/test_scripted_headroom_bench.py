"""bench/scripted_headroom.py: its rule family is level 5 at the defaults, and a tiny real run."""

from __future__ import annotations

import numpy as np
import pytest
import scripted_headroom as bench  # bench/ is on pytest's pythonpath

from light_league import envs


def test_the_rule_family_at_its_defaults_is_scripted_l5() -> None:
    bench.check_rule_family_is_level_5(seed=3)  # raises if any live unit's action differs


def test_a_changed_rule_plays_differently() -> None:
    env = envs.make_batched("battalion", num_envs=64, team_size=2)
    step = env.reset(seed=1)
    obs = step.obs.reshape(-1, step.obs.shape[-1]).astype(np.float64)
    mask = step.action_mask.reshape(-1, step.action_mask.shape[-1])
    # at the start a focus target is in the arc but off the line: level 5 turns, while fire_any=0
    # fires at whatever its shot hits
    assert not np.array_equal(
        bench.RulePolicy().actions(obs, mask), bench.RulePolicy(fire_any=0.0).actions(obs, mask)
    )


@pytest.mark.parametrize("policy", [bench.RushPolicy(0.1), bench.ShieldPolicy(0.015)], ids=["rush", "shield"])
def test_the_openings_choose_legal_actions_only(policy: object) -> None:
    env = envs.make_batched("battalion", num_envs=16, team_size=2)
    step = env.reset(seed=2)
    for _ in range(40):
        obs = step.obs.reshape(-1, step.obs.shape[-1])
        mask = step.action_mask.reshape(-1, step.action_mask.shape[-1])
        logp = policy.log_probs(obs, mask, np.tile(np.arange(2), len(obs) // 2))  # type: ignore[attr-defined]
        assert np.isclose(np.exp(logp).sum(1), 1.0).all()
        action = logp.argmax(1)
        assert mask[np.arange(len(obs)), action].all()
        step = env.step(action.reshape(step.obs.shape[:2]))


@pytest.mark.integration  # plays the bench's search (seconds)
def test_a_tiny_run_prints_every_candidate_and_the_search(capsys: pytest.CaptureFixture[str]) -> None:
    bench.main(["--games", "16", "--search", "3", "--search-games", "8", "--top", "2"])
    out = capsys.readouterr().out
    for name in ("scripted_l4", "scripted_l5 (itself)", *bench.NAMED, "rush to 0.1", "shield, within 0.03"):
        assert f"  {name} " in out
    assert out.count("  search ") == 2
    assert "median search reading" in out


@pytest.mark.integration
def test_another_level_as_the_opponent(capsys: pytest.CaptureFixture[str]) -> None:
    bench.main(
        ["--games", "16", "--search", "2", "--search-games", "8", "--top", "1", "--opponent", "scripted_l4"]
    )
    out = capsys.readouterr().out
    assert out.startswith("Against scripted_l4, ")
    for name in ("scripted_l3", "scripted_l4 (itself)", "scripted_l5"):
        assert f"  {name} " in out
    assert "scripted_l5 (itself)" not in out


def test_an_unknown_opponent_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        bench.main(["--opponent", "scripted_l9"])
    assert "scripted_l9" in capsys.readouterr().err
