"""Battalion: batched == single-game semantics, win/draw/loss rules, scripted opponent ladder."""

from __future__ import annotations

import copy

import numpy as np
import pytest

from light_league.envs import _rng, battalion
from light_league.envs.battalion import FIRE, HOLD, BattalionBatchedEnv, BattalionParallelEnv
from light_league.envs.battalion_scripted import ScriptedBattalionPolicy
from light_league.envs.parallel import UniformRandomPolicy


def test_counter_rng_numpy_matches_python() -> None:
    seeds = np.array([0, 1, 2**40 + 7, 2**63 - 1], dtype=np.uint64)
    for episode, step, stream in [(0, 0, 0), (3, 17, 5), (2**31, 2**20, 1 << 20)]:
        got = _rng.uniform_np(seeds, np.full(4, episode), step, stream)
        want = [_rng.uniform(int(s), episode, step, stream) for s in seeds]
        assert got.tolist() == want
    assert _rng.splitmix64(0) == 0xE220A8397B1DCDAF  # published first output for state 0


def _random_legal(rng: np.random.Generator, mask: np.ndarray) -> np.ndarray:
    scores = np.where(mask, rng.random(mask.shape) + 0.5 * (np.arange(mask.shape[-1]) == FIRE), -1.0)
    return scores.argmax(-1)


@pytest.mark.parametrize("team_size", [1, 2, 3])
def test_batched_game_b_replays_single_game_seeded_s_plus_b(team_size: int) -> None:
    num, seed, max_steps = 6, 40, 40
    env = battalion.make_batched(num, team_size=team_size, max_steps=max_steps)
    step = env.reset(seed=seed)
    singles = [BattalionParallelEnv(team_size=team_size, max_steps=max_steps) for _ in range(num)]
    for b, single in enumerate(singles):
        obs, _ = single.reset(seed=seed + b)
        np.testing.assert_array_equal(np.stack(list(obs.values())), step.obs[b])
    rng = np.random.default_rng(0)
    finished = 0
    for _ in range(150):
        actions = _random_legal(rng, step.action_mask)
        step = env.step(actions)
        for b, single in enumerate(singles):
            finished += _compare_one(single, actions[b], step, b)
    assert finished >= num  # every game went through at least one auto-reset


def _compare_one(single: BattalionParallelEnv, actions: np.ndarray, step: battalion.BatchStep, b: int) -> int:
    agents = single.possible_agents
    live = list(single.agents)
    obs, rew, term, trunc, infos = single.step(
        {a: int(actions[k]) for k, a in enumerate(agents) if a in live}
    )
    for k, agent in enumerate(agents):
        if agent in live:
            assert rew[agent] == pytest.approx(float(step.reward[b, k]), abs=1e-6)
            if not step.done[b]:
                np.testing.assert_array_equal(obs[agent], step.obs[b, k])
                np.testing.assert_array_equal(single._game.observe(k)[1], step.state[b, k])  # critic
                assert infos[agent]["action_mask"].astype(bool).tolist() == step.action_mask[b, k].tolist()
    assert (not single.agents) == bool(step.done[b])
    if not step.done[b]:
        return 0
    first = agents[0] if agents[0] in infos else next(a for a in infos if a.startswith("blue"))
    assert infos[first]["outcome"] == step.outcome[b]
    assert any(trunc.values()) == bool(step.truncated[b])
    obs, _ = single.reset()
    np.testing.assert_array_equal(np.stack(list(obs.values())), step.obs[b])
    return 1


def _play(
    blue: object, red: object, games: int, seed: int, team_size: int = 2, **options: object
) -> np.ndarray:
    """Outcomes (seat 0) of ``games`` batched games (battalion's ``options``), one per slot,
    policies sampled."""
    env = battalion.make_batched(games, team_size=team_size, **options)
    spec = env.spec
    step = env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    outcome = np.full(games, np.nan)
    while np.isnan(outcome).any():
        actions = np.zeros((games, spec.n_agents), dtype=np.int64)
        for seat, policy in enumerate((blue, red)):
            idx = list(spec.seats[seat])
            logp = policy.log_probs(  # type: ignore[attr-defined]
                step.obs[:, idx].reshape(-1, spec.obs_dim),
                step.action_mask[:, idx].reshape(-1, spec.num_actions),
                np.tile(spec.index_in_team()[idx], games),
            )
            cdf = np.exp(logp).cumsum(1)
            draw = (cdf < rng.random((len(cdf), 1)) * cdf[:, -1:]).sum(1)
            actions[:, idx] = np.minimum(draw, spec.num_actions - 1).reshape(games, len(idx))
        step = env.step(actions)
        new = step.done & np.isnan(outcome)
        outcome[new] = step.outcome[new]
    return outcome


def test_scripted_ladder() -> None:
    spec = battalion.make_spec(2, battalion.DEFAULT_MAX_STEPS)
    l1, l5 = ScriptedBattalionPolicy(spec, 1), ScriptedBattalionPolicy(spec, 5)
    rand = UniformRandomPolicy(spec)
    assert (_play(l5, l1, 200, seed=1) == 1.0).mean() >= 0.8
    assert (_play(l1, rand, 200, seed=2) == 1.0).mean() > 0.5
    assert (_play(l5, rand, 200, seed=3) == 1.0).mean() > 0.5
    assert (_play(rand, l5, 200, seed=4) == 0.0).mean() > 0.5  # from the red seat too


def _finish(env: BattalionParallelEnv, seed: int, blue: object, red: object) -> tuple[dict, dict]:
    """Play one game to the end; return the last infos and rewards."""
    obs, infos = env.reset(seed=seed)
    spec = env.spec_
    while True:
        acts = {}
        for k, agent in enumerate(env.possible_agents):
            if agent in env.agents:
                policy = blue if k in spec.seats[0] else red
                mask = infos[agent]["action_mask"][None].astype(bool)
                acts[agent] = int(policy.log_probs(obs[agent][None], mask, np.zeros(1)).argmax())  # type: ignore[attr-defined]
        obs, rew, term, trunc, infos = env.step(acts)
        if not env.agents:
            return infos, rew


class _Hold:
    def log_probs(self, obs: np.ndarray, mask: np.ndarray, agent_idx: np.ndarray) -> np.ndarray:
        out = np.full(mask.shape, -np.inf, dtype=np.float32)
        out[:, HOLD] = 0.0
        return out


def test_every_outcome_occurs_and_is_classified_by_the_rules() -> None:
    env = BattalionParallelEnv(team_size=2, max_steps=200)
    spec = env.spec_
    l3 = ScriptedBattalionPolicy(spec, 3)
    seen = set()
    for seed in range(60):
        infos, rew = _finish(env, seed, l3, l3 if seed % 3 else _Hold())
        game = env._game
        out = [not any(game.active[u] for u in spec.seats[s]) for s in (0, 1)]
        want = 0.5 if out[0] == out[1] else (1.0 if out[1] else 0.0)
        blue = [a for a in infos if a.startswith("blue")]
        outcome = infos[blue[0]]["outcome"] if blue else 1.0 - infos[next(iter(infos))]["outcome"]
        assert outcome == want
        kind = "timeout" if not (out[0] or out[1]) else ("both" if out[0] and out[1] else "decided")
        seen.add((kind, want))
    assert {("decided", 1.0), ("decided", 0.0), ("both", 0.5)} <= seen
    infos, rew = _finish(env, 0, _Hold(), _Hold())
    assert env._game.t == 200 and all(i["outcome"] == 0.5 for i in infos.values())


def test_reward_is_zero_sum_and_sums_its_components() -> None:
    env = BattalionParallelEnv(team_size=2)
    obs, infos = env.reset(seed=5)
    rng = np.random.default_rng(5)
    total = 0.0
    while env.agents:
        acts = {a: int(_random_legal(rng, infos[a]["action_mask"][None].astype(bool))[0]) for a in env.agents}
        obs, rew, term, trunc, infos = env.step(acts)
        for agent, r in rew.items():
            c = infos[agent]["reward_components"]
            assert r == pytest.approx(c["damage_dealt"] - c["damage_taken"] + c["outcome_bonus"])
        if "blue_0" in rew and "red_0" in rew:
            assert rew["blue_0"] == pytest.approx(-rew["red_0"])
            total += rew["blue_0"]
    assert -2.0 <= total <= 2.0


def test_seats_see_the_same_picture_from_either_side() -> None:
    env = battalion.make_batched(64, team_size=2)
    step = env.reset(seed=9)
    # starting features that do not depend on the jitter are identical for blue_k and red_k
    for k in range(2):
        np.testing.assert_allclose(step.obs[:, k, 1].mean(), step.obs[:, 2 + k, 1].mean(), atol=0.01)
        assert np.allclose(step.obs[:, k, 4:7], step.obs[:, 2 + k, 4:7])
    assert step.positions is not None
    assert (step.positions >= 0).all() and (step.positions <= 1).all()
    assert np.allclose(step.positions[:, :, 1].mean(0), battalion.START_Y, atol=0.01)


def test_fire_only_legal_with_a_target_and_bad_arguments_fail() -> None:
    env = battalion.make_batched(32, team_size=1)
    step = env.reset(seed=0)
    assert step.action_mask[:, :, HOLD].all()
    assert (step.action_mask[:, :, FIRE] == (env._tgt >= 0)).all()
    with pytest.raises(ValueError, match="team_size"):
        battalion.make_batched(2, team_size=0)
    with pytest.raises(ValueError, match="actions must have shape"):
        env.step(np.zeros((3, 2), dtype=np.int64))
    with pytest.raises(ValueError, match="seed"):
        env.reset(seed=-1)


def _other_rows(obs: np.ndarray, team_size: int) -> np.ndarray:
    """``(..., 2n - 1, OTHER_FEATURES)`` rows of the other battalions (allies, then enemies)."""
    rows = obs[..., battalion.OWN_FEATURES : -1]
    return rows.reshape(*obs.shape[:-1], 2 * team_size - 1, battalion.OTHER_FEATURES)


AIMED, AIMING, ALLIES_AIMED = 10, 11, 12


@pytest.mark.parametrize("team_size", [2, 3])
def test_aimed_is_the_enemy_that_fire_hits(team_size: int) -> None:
    """Each unit's ``aimed`` enemy is the one whose strength falls when that unit alone fires; the
    enemy sees it as ``aiming``; a team-mate's ``allies_aimed`` counts it."""
    num, n_units = 32, 2 * team_size
    env = battalion.make_batched(num, team_size=team_size)
    step, rng = env.reset(seed=3), np.random.default_rng(3)
    others = battalion._orders(team_size)[0]  # (U, U - 1): unit index of each observer's rows
    checked = 0
    for _ in range(30):
        rows = _other_rows(step.obs, team_size)  # (B, U, U - 1, F)
        for u in range(n_units):
            aimed = rows[:, u, :, AIMED]
            assert aimed.sum(1).max() <= 1.0
            has = aimed.sum(1) == 1.0
            assert (has == (step.active[:, u] & step.action_mask[:, u, FIRE])).all()
            for g in np.flatnonzero(has):
                target = others[u, int(np.argmax(aimed[g]))]
                # the target sees u aiming at it
                assert rows[g, target, list(others[target]).index(u), AIMING] == 1.0
                # every team-mate in play counts u's aim
                mates = [m for m in range(n_units) if m != u and (m < team_size) == (u < team_size)]
                live = [m for m in mates if step.active[g, m]]
                for m in live:  # m's team-mates in play: u and the rest of ``live``
                    share = rows[g, m, list(others[m]).index(target), ALLIES_AIMED]
                    aiming = 1 + sum(rows[g, k, list(others[k]).index(target), AIMED] for k in live if k != m)
                    assert share == pytest.approx(aiming / len(live))
        # u = 0 alone fires in every game: only its aimed enemy loses strength
        fire = np.full((num, n_units), HOLD)
        fire[:, 0] = FIRE
        before = env.s.copy()
        hit = _other_rows(step.obs, team_size)[:, 0, :, AIMED].argmax(1)
        shooting = step.active[:, 0] & step.action_mask[:, 0, FIRE]
        probe = copy.deepcopy(env)
        probe.step(fire)
        lost = before - probe.s
        for g in np.flatnonzero(shooting & (probe.t > env.t)):
            if probe.t[g] == 0:  # the game ended and restarted
                continue
            assert np.flatnonzero(lost[g] > 0).tolist() == [others[0, hit[g]]]
            checked += 1
        step = env.step(_random_legal(rng, step.action_mask))
    assert checked > 50


def test_a_text_frame_shows_the_field_and_every_battalion() -> None:
    env = BattalionBatchedEnv(1, team_size=2)
    env.reset(seed=4)
    frame = env.render_text(0).splitlines()
    assert frame[0] == "step 0 of 200" and frame[1] == "+" + "-" * 41 + "+"
    field = "".join(frame[2:23])
    assert all(letter in field for letter in "ABab")  # blue upper case, red lower case
    rows = [line for line in frame if line.startswith(("A blue_0", "a red_0"))]
    assert rows[0].split()[2:6] == ["at", f"({env.x[0, 0]:.2f},", f"{env.y[0, 0]:.2f})", "facing"]
    assert "facing N" in frame[-4] and "facing S" in frame[-2]  # blue starts north-bound, red south-bound
