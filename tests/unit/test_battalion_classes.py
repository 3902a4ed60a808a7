"""Battalion's ``unit_classes`` option: off it is today's game bit for bit; on, the choice step,
fixed shapes, classes both teams see, the damage triangle, and the cycle of the committed scripts."""

from __future__ import annotations

import copy
import hashlib
from pathlib import Path

import numpy as np
import pytest

from light_league import envs
from light_league.envs import battalion
from light_league.envs import battalion_classes as bc
from light_league.envs.battalion import FIRE, HOLD, NUM_ACTIONS, BattalionParallelEnv
from light_league.envs.battalion_scripted import ScriptedBattalionPolicy
from tests.unit.test_battalion import _play as play

CHOOSE = NUM_ACTIONS  # the first class action: choose_infantry

#: sha256 of every field of 300 batched steps of random legal play (``_digest``), computed with
#: the code before the option existed (commit b4e44b1); the option off must give the same bytes
CLASSIC_DIGESTS = {
    (2, 60): "74451b17cee1dca307bc25e813dd6833c4ea07a68a3b28e4f4b96bfc25644ec9",
    (3, 200): "ecea9385547cb05cf3d4afdeaf9a2d5571e0e69a35402bf99166a9a7619a14d7",
}
#: the same for the single-game face (``_single_digest``, 2v2, max_steps 60)
CLASSIC_SINGLE_DIGEST = "9ea72956b75f7149b7edb6387a5fc888eb48d0918b70ae3a0fb09caa42700e99"


def _random_legal(rng: np.random.Generator, mask: np.ndarray) -> np.ndarray:
    scores = np.where(mask, rng.random(mask.shape) + 0.5 * (np.arange(mask.shape[-1]) == FIRE), -1.0)
    return scores.argmax(-1)


def _digest(env: battalion.BattalionBatchedEnv, seed: int, steps: int = 300) -> str:
    step = env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    out = hashlib.sha256()
    for _ in range(steps):
        assert step.positions is not None
        fields = (step.obs, step.state, step.action_mask, step.active, step.reward, step.done, step.truncated)
        for field in (*fields, step.seat_return, step.outcome, step.positions):
            out.update(np.ascontiguousarray(field).tobytes())
        step = env.step(_random_legal(rng, step.action_mask))
    return out.hexdigest()


def _single_digest(env: BattalionParallelEnv, seed: int, steps: int = 300) -> str:
    obs, infos = env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    out = hashlib.sha256()
    for _ in range(steps):
        for agent in sorted(obs):
            out.update(agent.encode() + obs[agent].tobytes() + infos[agent]["action_mask"].tobytes())
        acts = {a: int(_random_legal(rng, infos[a]["action_mask"][None].astype(bool))[0]) for a in env.agents}
        obs, rew, term, trunc, infos = env.step(acts)
        for agent in sorted(rew):
            parts = infos[agent]["reward_components"]
            numbers = [
                rew[agent],
                *parts.values(),
                infos[agent].get("outcome", -1.0),
                term[agent],
                trunc[agent],
            ]
            out.update(agent.encode() + np.array(numbers, dtype=np.float64).tobytes())
        if not env.agents:
            obs, infos = env.reset()
    return out.hexdigest()


@pytest.mark.parametrize(("team_size", "max_steps"), sorted(CLASSIC_DIGESTS))
def test_the_option_off_is_todays_game_bit_for_bit(team_size: int, max_steps: int) -> None:
    """2v2 built without the option, 3v3 with ``unit_classes=False``: both are today's bytes."""
    options = {} if team_size == 2 else {"unit_classes": False}
    env = battalion.make_batched(8, team_size=team_size, max_steps=max_steps, **options)
    assert _digest(env, seed=7) == CLASSIC_DIGESTS[(team_size, max_steps)]
    assert envs.make_spec("battalion", team_size=team_size) == envs.make_spec(
        "battalion", team_size=team_size, unit_classes=False
    )


def test_the_single_game_face_with_the_option_off_is_todays_bit_for_bit() -> None:
    assert _single_digest(BattalionParallelEnv(team_size=2, max_steps=60), seed=7) == CLASSIC_SINGLE_DIGEST


@pytest.mark.parametrize("team_size", [1, 2, 3])
def test_shapes_are_fixed_with_classes(team_size: int) -> None:
    env = battalion.make_batched(6, team_size=team_size, max_steps=30, unit_classes=True)
    spec = env.spec
    assert spec.obs_dim == 34 * team_size - 6 == battalion.obs_dim(team_size, True)
    assert spec.state_dim == spec.obs_dim + battalion.UNIT_STATE_FEATURES * 2 * team_size
    assert spec.num_actions == NUM_ACTIONS + 3
    assert envs.action_names("battalion", {"unit_classes": True}) == battalion.ACTION_NAMES + bc.CHOICE_NAMES
    assert envs.action_names("battalion") == battalion.ACTION_NAMES
    step, rng = env.reset(seed=1), np.random.default_rng(1)
    for _ in range(70):  # through auto-resets, so through choice steps of later games too
        assert step.obs.shape == (6, 2 * team_size, spec.obs_dim)
        assert step.state.shape == (6, 2 * team_size, spec.state_dim)
        assert step.action_mask.shape == (6, 2 * team_size, spec.num_actions)
        step = env.step(_random_legal(rng, step.action_mask))


def test_the_choice_step_allows_the_choices_only_and_moves_nothing() -> None:
    env = battalion.make_batched(4, team_size=2, unit_classes=True)
    step = env.reset(seed=3)
    assert step.action_mask[..., :NUM_ACTIONS].sum() == 0 and step.action_mask[..., CHOOSE:].all()
    assert (step.obs[..., battalion.obs_dim(2) :] == 0).all()  # no class yet
    x, y, h = env.x.copy(), env.y.copy(), env.h.copy()
    step = env.step(np.array([[CHOOSE, CHOOSE + 1, CHOOSE + 2, FIRE]] * 4))  # red_1 sends no choice: infantry
    assert env.cls.tolist() == [[0, 1, 2, 0]] * 4
    assert (env.x == x).all() and (env.y == y).all() and (env.h == h).all() and (env.t == 1).all()
    assert (step.reward == 0).all() and not step.done.any()
    assert not step.action_mask[..., CHOOSE:].any() and step.action_mask[..., HOLD].all()


def _class_rows(obs: np.ndarray, team_size: int) -> tuple[np.ndarray, np.ndarray]:
    """The observer's class one-hot and the ``(2n - 1, 4)`` rows of the others."""
    tail = obs[..., battalion.obs_dim(team_size) :]
    return tail[..., :3], tail[..., 3:].reshape(*obs.shape[:-1], 2 * team_size - 1, 4)


def test_each_class_is_visible_to_the_opponent_with_its_edge() -> None:
    env = battalion.make_batched(2, team_size=2, unit_classes=True)
    env.reset(seed=5)
    step = env.step(CHOOSE + np.array([[0, 2, 1, 2], [1, 1, 0, 0]]))
    others = battalion._orders(2)[0]
    for g in range(2):
        cls = env.cls[g]
        for i in range(4):
            own, rows = _class_rows(step.obs[g, i], 2)
            assert own.tolist() == bc.one_hot(int(cls[i]))
            for r, j in enumerate(others[i]):
                assert rows[r, :3].tolist() == bc.one_hot(int(cls[j]))
                enemy = (i < 2) != (j < 2)
                assert rows[r, 3] == (bc.EDGE[cls[i], cls[j]] if enemy else 0)
    # red_0 (unit 2) of game 0 is cavalry; blue_0 sees it as an enemy row it beats (infantry -> cavalry)
    assert _class_rows(step.obs[0, 0], 2)[1][1].tolist() == [0.0, 1.0, 0.0, 1.0]


def test_fire_follows_the_counter_triangle() -> None:
    """The same shot, with every pair of classes: the strength lost is the classic damage times
    ``DAMAGE[shooter, target]``."""
    env = battalion.make_batched(64, team_size=1, unit_classes=True)
    env.reset(seed=2)
    step = env.step(np.full((64, 2), CHOOSE))
    for _ in range(40):  # close in until most games have a shot
        step = env.step(np.where(step.action_mask[..., FIRE], HOLD, _toward(step)))
    shot = step.action_mask[:, 0, FIRE] & step.active[:, 1]
    assert shot.sum() > 10
    fire = np.array([[FIRE, HOLD]] * 64)
    lost = {}
    for a in range(3):
        for b in range(3):
            probe = copy.deepcopy(env)
            probe.cls[:] = [a, b]
            before = probe.s[:, 1].copy()
            probe.step(fire)
            lost[a, b] = (before - probe.s[:, 1])[shot]
    for (a, b), got in lost.items():
        np.testing.assert_allclose(got, lost[0, 0] * bc.DAMAGE[a, b], rtol=1e-12)
    assert bc.DAMAGE[bc.INFANTRY, bc.CAVALRY] == bc.DAMAGE[bc.CAVALRY, bc.ARCHERS] == bc.STRONG
    assert bc.DAMAGE[bc.ARCHERS, bc.INFANTRY] == bc.STRONG and bc.DAMAGE[bc.CAVALRY, bc.INFANTRY] == bc.WEAK


def _toward(step: battalion.BatchStep) -> np.ndarray:
    """Advance, turning towards the enemy row first (team_size 1: one ally-free enemy row)."""
    rows = step.obs[..., battalion.OWN_FEATURES : battalion.OWN_FEATURES + battalion.OTHER_FEATURES]
    bearing = np.arctan2(rows[..., 2], rows[..., 1])
    turn = np.where(bearing > 0, battalion.TURN_LEFT, battalion.TURN_RIGHT)
    return np.where(np.abs(bearing) > 0.2, turn, battalion.ADVANCE)


@pytest.mark.parametrize("team_size", [1, 2])
def test_game_b_of_a_batch_replays_the_single_game_with_classes(team_size: int) -> None:
    num, seed = 4, 21
    env = battalion.make_batched(num, team_size=team_size, max_steps=40, unit_classes=True)
    singles = [BattalionParallelEnv(team_size=team_size, max_steps=40, unit_classes=True) for _ in range(num)]
    step = env.reset(seed=seed)
    for b, single in enumerate(singles):
        obs, _ = single.reset(seed=seed + b)
        np.testing.assert_array_equal(np.stack(list(obs.values())), step.obs[b])
    rng, finished = np.random.default_rng(4), 0
    for _ in range(100):
        actions = _random_legal(rng, step.action_mask)
        step = env.step(actions)
        for b, single in enumerate(singles):
            live = list(single.agents)
            obs, rew, _, _, infos = single.step(
                {a: int(actions[b, k]) for k, a in enumerate(single.possible_agents) if a in live}
            )
            assert (not single.agents) == bool(step.done[b])
            if step.done[b]:
                finished += 1
                obs, infos = single.reset()
            for k, agent in enumerate(single.possible_agents):
                if agent in obs and (step.done[b] or agent in rew):
                    np.testing.assert_array_equal(obs[agent], step.obs[b, k])
                    assert (
                        infos[agent]["action_mask"].astype(bool).tolist() == step.action_mask[b, k].tolist()
                    )
                if agent in rew:
                    assert rew[agent] == pytest.approx(float(step.reward[b, k]), abs=1e-6)
    assert finished >= num


def _play(blue: object, red: object, games: int, seed: int, team_size: int = 2) -> np.ndarray:
    """Outcomes (seat 0) of ``games`` class games, one per slot, policies sampled."""
    return play(blue, red, games, seed, team_size, unit_classes=True)


def _win_rate(a: object, b: object, games: int, seed: int) -> float:
    """``a``'s wins (a draw counts half) over ``games`` games, half from each seat."""
    first = _play(a, b, games // 2, seed)
    second = 1.0 - _play(b, a, games // 2, seed + 1)
    return float(np.concatenate([first, second]).mean())


def test_the_committed_scripts_form_a_cycle() -> None:
    """Infantry beats cavalry, cavalry beats archers, archers beat infantry: level 5's play
    committed to each class, 200 games a pair (100 from each seat)."""
    options = {"team_size": 2, "unit_classes": True}
    infantry, cavalry, archers = (
        envs.make_fixed_policy("battalion", f"scripted_l5_{name}", **options) for name in bc.CLASS_NAMES
    )
    assert _win_rate(infantry, cavalry, 200, seed=10) > 0.8
    assert _win_rate(cavalry, archers, 200, seed=20) > 0.8
    assert _win_rate(archers, infantry, 200, seed=30) > 0.8


def test_the_ladder_keeps_its_names_and_order_with_classes() -> None:
    spec = battalion.make_spec(2, battalion.DEFAULT_MAX_STEPS, unit_classes=True)
    l1, l5 = ScriptedBattalionPolicy(spec, 1), ScriptedBattalionPolicy(spec, 5)
    assert (_play(l5, l1, 200, seed=1) == 1.0).mean() >= 0.8
    names = envs.fixed_policy_names("battalion", {"unit_classes": True})
    assert names == sorted(
        [*envs.fixed_policy_names("battalion"), *(f"scripted_l5_{c}" for c in bc.CLASS_NAMES)]
    )
    ratings = envs.fixed_policy_ratings("battalion", {"unit_classes": True})
    assert sorted(ratings) == names and ratings["scripted_l5_archers"] == ratings["scripted_l5"]


def test_the_committed_scripts_need_the_option() -> None:
    assert not any(name.startswith("scripted_l5_") for name in envs.fixed_policy_names("battalion"))
    with pytest.raises(KeyError, match="scripted_l5_archers'.*; it needs env.options.unit_classes: true"):
        envs.make_fixed_policy("battalion", "scripted_l5_archers", team_size=2)
    assert envs.fixed_policy_needs("battalion", "scripted_l5") == ""
    with pytest.raises(ValueError, match="unit_classes: true"):
        ScriptedBattalionPolicy(battalion.make_spec(2, 200), 5, commit=bc.ARCHERS)


@pytest.mark.parametrize("value", ["yes", 1, None])
def test_a_bad_option_value_is_one_line_naming_it_and_the_fix(value: object) -> None:
    with pytest.raises(ValueError) as err:
        battalion.make_batched(2, unit_classes=value)  # type: ignore[arg-type]
    message = str(err.value)
    assert "\n" not in message and repr(value) in message and "unit_classes: true" in message
    with pytest.raises(ValueError, match="unit_classes"):
        battalion.make_parallel(unit_classes=value)  # type: ignore[arg-type]


def test_a_bad_option_in_a_config_is_a_config_error() -> None:
    from light_league.build import make_env_spec, validate
    from light_league.config import load_config
    from light_league.errors import ConfigError

    league = Path(__file__).resolve().parents[2] / "expr_configs" / "league.yaml"
    config = load_config(league, ["env.options.unit_classes=maybe"])
    with pytest.raises(ConfigError, match=r"^env: battalion unit_classes must be true or false, got 'maybe'"):
        make_env_spec(config)
    on = load_config(league, ["env.options.unit_classes=true"])
    assert make_env_spec(on).num_actions == NUM_ACTIONS + 3
    off = load_config(league, ["evaluation.baselines=[random,scripted_l5_cavalry]"])
    with pytest.raises(
        ConfigError, match=r"'scripted_l5_cavalry'.*; it needs env.options.unit_classes: true$"
    ):
        validate(off)
