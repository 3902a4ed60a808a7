"""Adapters: PettingZoo (Parallel and turn-based AEC) and OpenSpiel envs behind our API; registry errors."""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

import gymnasium
import numpy as np
import pytest
from pettingzoo import AECEnv
from pettingzoo.utils import AgentSelector

from light_league import envs
from light_league.envs.adapters import OpenSpielParallelEnv
from light_league.envs.matrix_games import payoff_matrix

NIM_STONES = 5


class NimAEC(AECEnv):
    """Turn-based Nim: take 1 or 2 of 5 stones; whoever takes the last stone wins (+1 / -1)."""

    metadata = {"name": "nim_v0", "render_modes": [], "is_parallelizable": False}

    def __init__(self) -> None:
        super().__init__()
        self.possible_agents = ["first", "second"]
        self.render_mode = None

    @functools.cache  # noqa: B019
    def observation_space(self, agent: str) -> gymnasium.spaces.Dict:
        return gymnasium.spaces.Dict(
            {
                "observation": gymnasium.spaces.Box(0.0, 1.0, shape=(NIM_STONES + 1,), dtype=np.float32),
                "action_mask": gymnasium.spaces.Box(0, 1, shape=(2,), dtype=np.int8),
            }
        )

    @functools.cache  # noqa: B019
    def action_space(self, agent: str) -> gymnasium.spaces.Discrete:
        return gymnasium.spaces.Discrete(2)

    def observe(self, agent: str) -> dict[str, np.ndarray]:
        obs = np.zeros(NIM_STONES + 1, dtype=np.float32)
        obs[self.stones] = 1.0
        mask = np.zeros(2, dtype=np.int8)
        if agent == self.agent_selection and self.stones > 0:
            mask[: min(2, self.stones)] = 1
        return {"observation": obs, "action_mask": mask}

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        self.agents = list(self.possible_agents)
        self.stones = NIM_STONES
        self.rewards = dict.fromkeys(self.agents, 0.0)
        self._cumulative_rewards = dict.fromkeys(self.agents, 0.0)
        self.terminations = dict.fromkeys(self.agents, False)
        self.truncations = dict.fromkeys(self.agents, False)
        self.infos: dict[str, dict[str, Any]] = {a: {} for a in self.agents}
        self._selector = AgentSelector(self.agents)
        self.agent_selection = self._selector.reset()

    def step(self, action: int | None) -> None:
        if self.terminations[self.agent_selection] or self.truncations[self.agent_selection]:
            self._was_dead_step(action)
            return
        mover = self.agent_selection
        self._cumulative_rewards[mover] = 0.0
        self.stones -= min(int(action) + 1, self.stones)  # type: ignore[arg-type]
        self.rewards = dict.fromkeys(self.agents, 0.0)
        if self.stones == 0:
            other = next(a for a in self.agents if a != mover)
            self.rewards[mover], self.rewards[other] = 1.0, -1.0
            self.terminations = dict.fromkeys(self.agents, True)
        self.agent_selection = self._selector.next()
        self._accumulate_rewards()


def nim_env() -> NimAEC:
    return NimAEC()


NIM = f"pettingzoo:{__name__}:nim_env"


def test_turn_based_aec_env_through_the_batched_adapter() -> None:
    env = envs.make_batched(NIM, 2)
    step = env.reset(seed=0)
    assert step.active.tolist() == [[True, False], [True, False]]
    # game 0 takes 2, 2, 1: the first player takes the last stone on move 3.
    # game 1 takes 1, 1, 1, 2: the second player takes the last stone on move 4.
    moves = [(1, 0), (1, 0), (0, 0), (0, 1)]
    results = []
    for m0, m1 in moves:
        step = env.step(np.array([[m0, m0], [m1, m1]]))
        results.append((step.done.tolist(), step.outcome.tolist(), step.seat_return.tolist()))
    assert results[2][0] == [True, False] and results[2][1][0] == 1.0 and results[2][2][0] == [1.0, -1.0]
    assert results[3][0] == [False, True] and results[3][1][1] == 0.0 and results[3][2][1] == [-1.0, 1.0]
    assert step.active.tolist() == [[False, True], [True, False]]  # game 1 restarted, game 0 mid-way


def test_pettingzoo_parallel_env_by_module_path_matches_native() -> None:
    name = "pettingzoo:light_league.envs.battalion:make_parallel"
    adapted = envs.make_batched(name, 3, team_size=1, max_steps=30, win_loss=True)
    native = envs.make_batched("battalion", 3, team_size=1, max_steps=30)
    a, b = adapted.reset(seed=7), native.reset(seed=7)
    np.testing.assert_array_equal(a.obs, b.obs)
    assert adapted.spec.seats == native.spec.seats
    rng = np.random.default_rng(0)
    decided = 0
    for _ in range(80):
        fire_first = rng.random(b.action_mask.shape) + (np.arange(8) == 7)
        actions = np.where(b.action_mask, fire_first, -1).argmax(-1)
        a, b = adapted.step(actions), native.step(actions)
        np.testing.assert_allclose(a.reward, b.reward, atol=1e-6)
        assert a.done.tolist() == b.done.tolist() and a.truncated.tolist() == b.truncated.tolist()
        # a decided game: the generic rule (compare seat returns) agrees with the native result;
        # at the step limit the adapter, not knowing the rules, scores by returns instead of a draw
        ended = b.done & ~b.truncated
        assert a.outcome[ended].tolist() == b.outcome[ended].tolist()
        decided += int(ended.sum())
    assert decided > 0


@pytest.mark.openspiel
def test_openspiel_kuhn_deal_is_fixed_by_the_seed_and_returns_match() -> None:
    first, second = OpenSpielParallelEnv("kuhn_poker"), OpenSpielParallelEnv("kuhn_poker")
    deals = set()
    for seed in range(12):
        o1, _ = first.reset(seed=seed)
        o2, _ = second.reset(seed=seed)
        np.testing.assert_array_equal(o1["player_0"]["observation"], o2["player_0"]["observation"])
        deals.add(tuple(o1["player_0"]["observation"]))
    assert len(deals) == 3  # player 0 holds J, Q or K
    first.reset(seed=0)
    _, rew, term, _, _ = first.step({"player_0": 0, "player_1": 0})  # check
    assert not any(term.values())
    _, rew, term, _, _ = first.step({"player_0": 0, "player_1": 0})  # check: showdown for the ante
    assert all(term.values()) and rew["player_0"] == -rew["player_1"] and abs(rew["player_0"]) == 1.0


@pytest.mark.openspiel
def test_openspiel_batched_outcome_maps_utilities() -> None:
    env = envs.make_batched("openspiel:matrix_rps", 3)
    env.reset(seed=0)
    step = env.step(np.array([[1, 0], [0, 0], [0, 1]]))  # paper/rock, rock/rock, rock/paper
    assert step.done.all() and step.outcome.tolist() == [1.0, 0.5, 0.0]
    with pytest.raises(ValueError, match="illegal"):
        kuhn = OpenSpielParallelEnv("kuhn_poker")
        kuhn.reset(seed=0)
        kuhn.step({"player_0": 5, "player_1": 0})


def test_bad_names_fail_with_the_fix() -> None:
    with pytest.raises(ValueError, match="did you mean battalion"):
        envs.make_batched("batallion", 1)
    with pytest.raises(ValueError, match="pettingzoo:<module>:<factory>"):
        envs.make_parallel("pettingzoo:only_module")
    with pytest.raises(ValueError, match="cannot import"):
        envs.make_parallel("pettingzoo:no_such_module_xyz:env")
    with pytest.raises(ValueError, match="players"):
        envs.make_parallel("openspiel:hanabi(players=3)")
    with pytest.raises(ValueError, match="unknown OpenSpiel game 'no_such_game'"):
        envs.make_parallel("openspiel:no_such_game")
    with pytest.raises(KeyError, match="did you mean scripted_l1"):
        envs.make_fixed_policy("battalion", "scripted_1")
    with pytest.raises(ValueError, match="bad kwargs"):
        envs.make_batched("battalion", 1, team=2)
    assert envs.fixed_policy_names(NIM) == ["random"]


def test_pettingzoo_games_are_scored_by_expected_return_unless_win_loss_is_asked() -> None:
    """Graded payoffs stay graded: outcome = seat 0's return mapped from score_range to [0, 1]."""
    name = "pettingzoo:light_league.envs.matrix_games:make_parallel"
    payoff = np.array(payoff_matrix("biased_rps"))
    lo, hi = float(payoff.min()), float(payoff.max())
    graded = envs.make_batched(name, 9, game="biased_rps", score_range=[lo, hi])
    signed = envs.make_batched(name, 9, game="biased_rps", score_range=[lo, hi], win_loss=True)
    mine, theirs = np.divmod(np.arange(9), 3)
    actions = np.stack([mine, theirs], axis=1)
    for env in (graded, signed):
        env.reset(seed=0)
    expected = (payoff[mine, theirs] - lo) / (hi - lo)
    np.testing.assert_allclose(graded.step(actions).outcome, expected, atol=1e-6)
    np.testing.assert_allclose(signed.step(actions).outcome, 0.5 + 0.5 * np.sign(payoff[mine, theirs]))


@pytest.mark.parametrize(
    "name",
    [
        "pettingzoo:os:system",
        "pettingzoo:subprocess:run",
        "pettingzoo:shutil:rmtree",
        "pettingzoo:builtins:exec",
    ],
)
def test_a_factory_that_is_no_env_constructor_is_never_called(name: str, tmp_path: Path) -> None:
    marker = tmp_path / "X"
    with pytest.raises(ValueError, match="not name a PettingZoo env constructor"):
        envs.make_parallel(name, command=f"touch {marker}", args=["touch", str(marker)], path=str(tmp_path))
    assert not marker.exists() and tmp_path.is_dir()


def test_env_classes_and_their_modules_factories_are_accepted() -> None:
    assert envs.make_parallel(NIM) is not None
    assert (
        envs.make_parallel("pettingzoo:light_league.envs.matrix_games:MatrixGameParallelEnv", game="rps")
        is not None
    )
    assert (
        envs.make_parallel("pettingzoo:light_league.envs.matrix_games:make_parallel", game="rps") is not None
    )


def test_the_documented_pettingzoo_example_runs_or_names_the_extra_to_install() -> None:
    """docs/plugins.md's ``pettingzoo.classic.rps_v2``: pettingzoo.classic imports pygame, which a
    ``.[dev]`` install lacks; the error says which extra brings it."""
    name = "pettingzoo:pettingzoo.classic.rps_v2:parallel_env"
    try:
        import pygame  # noqa: F401
    except ImportError:
        with pytest.raises(ValueError, match=r"needs 'pygame'.*pip install 'pettingzoo\[classic\]'"):
            envs.make_batched(name, 2, score_range=[-1, 1])
    else:
        env = envs.make_batched(name, 2, score_range=[-1, 1])
        assert env.spec.num_actions == 3
        env.close()


def test_the_envs_old_module_path_reads_as_their_place_in_the_package() -> None:
    """A run directory written before the envs moved into light_league names
    ``pettingzoo:envs.<module>:<factory>``: it builds this package's env, and the trust boundary
    treats it as this package's (another module under a top-level ``envs`` stays foreign)."""
    from types import SimpleNamespace

    from light_league.envs.adapters import current_module
    from light_league.plugins import imported_by

    assert current_module("envs.matrix_games") == "light_league.envs.matrix_games"
    assert current_module("envs.battalion_scripted") == "light_league.envs.battalion_scripted"
    for unchanged in ("envs.no_such_module", "envs", "my_envs.matrix_games", "pettingzoo.classic.rps_v2"):
        assert current_module(unchanged) == unchanged
    env = envs.make_parallel("pettingzoo:envs.matrix_games:make_parallel", game="rps")
    assert type(env).__module__ == "light_league.envs.matrix_games"

    def stored(env_name: str) -> SimpleNamespace:
        return SimpleNamespace(
            scheduler_name="league",
            learner=SimpleNamespace(kind="mappo"),
            league=SimpleNamespace(meta_solver={}),
            scheduler_options={},
            env=SimpleNamespace(name=env_name),
        )

    assert imported_by(stored("pettingzoo:envs.matrix_games:make_parallel")) == []
    assert imported_by(stored("pettingzoo:envs.evil:make")) == [
        ("env.name", "pettingzoo:envs.evil:make", "envs.evil")
    ]
