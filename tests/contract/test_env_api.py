"""Every env's faces obey their contracts: PettingZoo's API checkers on the Parallel face (and on
its AEC view), seed determinism, and the BatchedEnv conventions of ``light_league/envs/base.py``."""

from __future__ import annotations

import importlib.util
from typing import Any

import numpy as np
import pytest
from gymnasium.utils.env_checker import data_equivalence
from pettingzoo.test import api_test, parallel_api_test, parallel_seed_test
from pettingzoo.utils.conversions import parallel_to_aec

from light_league import envs
from light_league.envs.parallel import split_obs
from light_league.envs.registry import BUILTIN_ENVS

#: options worth checking beyond an env's defaults (every registered env is checked with its defaults)
OPTION_VARIANTS: list[tuple[str, dict[str, Any]]] = [
    ("battalion", {"team_size": 1}),
    ("battalion", {"team_size": 2}),
    ("battalion", {"team_size": 3, "max_steps": 60}),
    ("battalion", {"team_size": 2, "unit_classes": True}),
    ("recall", {"team_size": 2, "num_signals": 3, "delay": 2}),
]
#: every env the registry knows, with its default options, then the variants
NATIVE: list[tuple[str, dict[str, Any]]] = [(name, {}) for name in envs.env_names()] + OPTION_VARIANTS
ADAPTED: list[tuple[str, dict[str, Any]]] = [
    (
        "pettingzoo:light_league.envs.matrix_games:make_parallel",
        {"game": "biased_rps", "score_range": (-2.0, 2.0)},
    ),
    ("pettingzoo:pettingzoo.classic.rps_v2:env", {}),
    ("openspiel:kuhn_poker", {}),
    ("openspiel:matrix_rps", {}),
    ("openspiel:leduc_poker", {}),
]


def _needs(name: str) -> None:
    """Skip, with the reason, an env whose module cannot be imported here."""
    if name.startswith("openspiel:") and importlib.util.find_spec("pyspiel") is None:
        pytest.skip("open_spiel is not installed")
    entry = BUILTIN_ENVS.get(name)
    module = entry.module if entry is not None else None
    if name.startswith("pettingzoo:"):
        module = name.split(":")[1]
    if module is None:
        return
    try:
        importlib.import_module(module)
    except ImportError as exc:
        pytest.skip(f"{module} is not importable here: {exc}")


def _id(case: tuple[str, dict[str, Any]]) -> str:
    name, kwargs = case
    return name + "".join(f"-{k}={v}" for k, v in kwargs.items())


@pytest.mark.parametrize("case", NATIVE + ADAPTED, ids=_id)
def test_parallel_api(case: tuple[str, dict[str, Any]]) -> None:
    name, kwargs = case
    _needs(name)
    parallel_api_test(envs.make_parallel(name, **kwargs), num_cycles=300)


@pytest.mark.parametrize("case", NATIVE, ids=_id)
def test_aec_view_passes_api_test(case: tuple[str, dict[str, Any]]) -> None:
    name, kwargs = case
    _needs(name)
    api_test(parallel_to_aec(envs.make_parallel(name, **kwargs)), num_cycles=200)


@pytest.mark.parametrize("case", NATIVE, ids=_id)
def test_parallel_seed_determinism(case: tuple[str, dict[str, Any]]) -> None:
    name, kwargs = case
    _needs(name)
    parallel_seed_test(lambda: envs.make_parallel(name, **kwargs), num_cycles=100)


@pytest.mark.parametrize("case", NATIVE + ADAPTED, ids=_id)
def test_same_seed_same_game_with_legal_actions(case: tuple[str, dict[str, Any]]) -> None:
    """PettingZoo's seed test samples unmasked actions, which OpenSpiel rejects; this one masks."""
    name, kwargs = case
    _needs(name)
    first, second = envs.make_parallel(name, **kwargs), envs.make_parallel(name, **kwargs)
    rng = np.random.default_rng(0)
    for episode in range(3):
        seed = 5 if episode == 0 else None
        a, b = first.reset(seed=seed), second.reset(seed=seed)
        while True:
            assert data_equivalence(a, b)
            obs, infos = a
            actions = {}
            for agent in first.agents:
                _, mask = split_obs(obs[agent], infos.get(agent, {}), int(first.action_space(agent).n))
                actions[agent] = int(_random_actions(rng, mask[None])[0]) if mask.any() else 0
            out_a, out_b = first.step(actions), second.step(actions)
            assert data_equivalence(out_a, out_b)
            if not first.agents:
                break
            a, b = (out_a[0], out_a[4]), (out_b[0], out_b[4])


def _random_actions(rng: np.random.Generator, mask: np.ndarray) -> np.ndarray:
    return np.where(mask, rng.random(mask.shape), -1.0).argmax(-1)


@pytest.mark.parametrize("case", NATIVE + ADAPTED, ids=_id)
def test_batched_env_conventions(case: tuple[str, dict[str, Any]]) -> None:
    name, kwargs = case
    _needs(name)
    num = 8
    env = envs.make_batched(name, num, **kwargs)
    spec = env.spec
    assert len(spec.seats) == 2 and sorted(i for s in spec.seats for i in s) == list(range(spec.n_agents))
    step = env.reset(seed=3)
    rng = np.random.default_rng(0)
    since_reset = np.zeros(num, dtype=np.int64)
    finished = 0
    for _ in range(min(3 * spec.max_steps, 400)):
        _check_shapes(step, spec, num)
        step = env.step(_random_actions(rng, step.action_mask))
        since_reset += 1
        assert since_reset.max() <= spec.max_steps
        assert not (step.truncated & ~step.done).any()
        lo, hi = spec.score_range
        ret = step.seat_return[step.done]
        assert ((ret >= lo - 1e-5) & (ret <= hi + 1e-5)).all()
        out = step.outcome[step.done]
        assert ((out >= 0) & (out <= 1)).all()
        if spec.win_loss and not name.startswith("pettingzoo:"):
            assert set(out.tolist()) <= {0.0, 0.5, 1.0}
        finished += int(step.done.sum())
        since_reset[step.done] = 0
    assert finished > 0


def _check_shapes(step: Any, spec: envs.EnvSpec, num: int) -> None:
    n, a = spec.n_agents, spec.num_actions
    assert step.obs.shape == (num, n, spec.obs_dim) and step.obs.dtype == np.float32
    assert step.state.shape == (num, n, spec.state_dim) and step.state.dtype == np.float32
    assert step.action_mask.shape == (num, n, a) and step.action_mask.dtype == bool
    assert step.active.shape == (num, n) and step.active.dtype == bool
    assert step.reward.shape == (num, n) and step.reward.dtype == np.float32
    assert step.done.shape == (num,) and step.truncated.shape == (num,)
    assert step.seat_return.shape == (num, 2) and step.outcome.shape == (num,)
    assert step.action_mask[step.active].any(axis=-1).all(), "an active agent has no legal action"
    assert step.active.any(axis=1).all(), "a game with nobody to act"
    if spec.turn_based:
        assert (step.active.sum(axis=1) == 1).all()
    assert np.isfinite(step.obs).all() and np.isfinite(step.reward).all()
    if step.positions is not None:
        assert step.positions.shape == (num, n, 2)
        assert ((step.positions >= 0) & (step.positions <= 1)).all()


@pytest.mark.parametrize("case", NATIVE, ids=_id)
def test_game_b_of_a_batch_replays_the_single_game_seeded_s_plus_b(case: tuple[str, dict[str, Any]]) -> None:
    name, kwargs = case
    _needs(name)
    num, seed = 4, 11
    env = envs.make_batched(name, num, **kwargs)
    spec = env.spec
    step = env.reset(seed=seed)
    singles = [envs.make_parallel(name, **kwargs) for _ in range(num)]
    returns = np.zeros((num, 2))
    for b, single in enumerate(singles):
        obs, infos = single.reset(seed=seed + b)
        _same_obs(single, obs, infos, step, b)
    rng = np.random.default_rng(1)
    for _ in range(min(2 * spec.max_steps, 250)):
        actions = _random_actions(rng, step.action_mask)
        step = env.step(actions)
        for b, single in enumerate(singles):
            live = list(single.agents)
            obs, rew, term, trunc, infos = single.step(
                {a: int(actions[b, spec.agents.index(a)]) for a in live}
            )
            returns[b] += _team_reward(rew, spec)
            for k, agent in enumerate(spec.agents):
                if agent in rew:
                    assert rew[agent] == pytest.approx(float(step.reward[b, k]), abs=1e-5)
            assert (not single.agents) == bool(step.done[b])
            if step.done[b]:
                np.testing.assert_allclose(returns[b], step.seat_return[b], atol=1e-4)
                returns[b] = 0.0
                obs, infos = single.reset()
                _same_obs(single, obs, infos, step, b)
            else:
                _same_obs(single, obs, infos, step, b)


def _team_reward(rew: dict[str, float], spec: envs.EnvSpec) -> list[float]:
    """Each seat's reward this step: the (shared) reward of any of its agents still in play."""
    out = []
    for idx in spec.seats:
        got = [rew[spec.agents[i]] for i in idx if spec.agents[i] in rew]
        assert np.allclose(got, got[0]) if got else True
        out.append(got[0] if got else 0.0)
    return out


def _same_obs(single: Any, obs: dict[str, Any], infos: dict[str, Any], step: Any, b: int) -> None:
    for k, agent in enumerate(single.possible_agents):
        if agent in single.agents and agent in obs:
            vec, mask = split_obs(obs[agent], infos.get(agent, {}), step.action_mask.shape[-1])
            np.testing.assert_allclose(vec, step.obs[b, k], atol=1e-6)
            if step.active[b, k]:
                assert mask.tolist() == step.action_mask[b, k].tolist()


def test_registry_lists_every_env_and_its_fixed_policies() -> None:
    assert envs.env_names() == sorted(
        ["battalion", "kuhn_poker", "leduc_poker", "rps", "biased_rps", "disc", "recall"]
    )
    expected = {"random"} | {f"scripted_l{k}" for k in range(1, 6)}
    assert expected <= set(envs.fixed_policy_names("battalion"))
    for policy_name in envs.fixed_policy_names("battalion"):
        policy = envs.make_fixed_policy("battalion", policy_name, team_size=2)
        env = envs.make_batched("battalion", 4, team_size=2)
        step = env.reset(seed=0)
        obs, mask = step.obs.reshape(-1, env.spec.obs_dim), step.action_mask.reshape(-1, env.spec.num_actions)
        logp = policy.log_probs(obs, mask, np.tile(env.spec.index_in_team(), 4))
        assert logp.shape == mask.shape and logp.dtype == np.float32
        assert np.isneginf(logp[~mask]).all()
        np.testing.assert_allclose(np.exp(logp).sum(1), 1.0, atol=1e-5)


@pytest.mark.parametrize("name", envs.env_names())
def test_env_facts_are_declared_beside_the_env(name: str) -> None:
    """Every fixed opponent has a rating, and a declared OpenSpiel game is one OpenSpiel plays
    with the env's own information-state strings."""
    _needs(name)
    ratings = envs.fixed_policy_ratings(name)
    assert sorted(ratings) == envs.fixed_policy_names(name)
    assert all(isinstance(r, float) for r in ratings.values())
    exact = envs.exact_game(name)
    spec = envs.make_batched(name, 1).spec
    assert (exact is None) == (spec.openspiel_game is None)  # a declared game comes with infostate_string
    assert exact is None or exact[0] == spec.openspiel_game
    if exact is not None and importlib.util.find_spec("pyspiel") is not None:
        import pyspiel

        game_name, infostate_string = exact
        assert pyspiel.load_game(game_name).num_distinct_actions() == spec.num_actions
        assert callable(infostate_string)


def test_the_declared_facts_keep_their_former_values() -> None:
    """Battalion's anchors are the ones game_theory/elo.py used to hold; the poker envs are the
    exactly solvable ones."""
    from light_league.game_theory.elo import DEFAULT_BASELINES

    assert envs.fixed_policy_ratings("battalion") == DEFAULT_BASELINES
    assert envs.fixed_policy_ratings("rps") == {"nash": 1000.0, "random": 800.0}
    assert envs.exact_games() == ["kuhn_poker", "leduc_poker"]
