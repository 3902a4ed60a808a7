"""The episode loop's bookkeeping on a tiny game whose trajectories can be checked by hand."""

from __future__ import annotations

import numpy as np
import pytest

from light_league.envs.base import BatchedEnv, BatchStep, EnvSpec
from light_league.rollout.episode import EpisodeLoop, sample_actions

SPEC = EnvSpec(
    name="alternate",
    agents=("p0", "p1"),
    seats=((0,), (1,)),
    obs_dim=3,
    state_dim=3,
    num_actions=2,
    symmetric=False,
    turn_based=True,
    score_range=(-1.0, 1.0),
    max_steps=4,
    win_loss=True,
)


class Alternate(BatchedEnv):
    """Players alternate for ``length`` decisions; seat 0 wins if the action sum is even.

    A +0.5 shaping reward goes to the player who just acted with action 1 (to test the
    reward-to-previous-decision bookkeeping).
    """

    def __init__(self, num_envs: int, length: int = 3) -> None:
        self.spec = SPEC
        self.num_envs = num_envs
        self.length = length

    def _obs(self) -> BatchStep:
        b = self.num_envs
        player = self.t % 2
        active = np.zeros((b, 2), dtype=bool)
        active[np.arange(b), player] = True
        obs = np.zeros((b, 2, 3), dtype=np.float32)
        obs[:, :, 0] = self.t[:, None]
        obs[:, :, 1] = self.total[:, None]
        obs[:, 1, 2] = 1.0
        return BatchStep(
            obs=obs,
            state=obs.copy(),
            action_mask=np.ones((b, 2, 2), dtype=bool),
            active=active,
            reward=np.zeros((b, 2), dtype=np.float32),
            done=np.zeros(b, dtype=bool),
            truncated=np.zeros(b, dtype=bool),
            seat_return=np.zeros((b, 2), dtype=np.float32),
            outcome=np.zeros(b, dtype=np.float32),
        )

    def reset(self, seed: int | None = None) -> BatchStep:
        self.t = np.zeros(self.num_envs, dtype=np.int64)
        self.total = np.zeros(self.num_envs, dtype=np.int64)
        self.ret = np.zeros((self.num_envs, 2), dtype=np.float32)
        return self._obs()

    def step(self, actions: np.ndarray) -> BatchStep:
        player = self.t % 2
        a = actions[np.arange(self.num_envs), player]
        self.total += a
        reward = np.zeros((self.num_envs, 2), dtype=np.float32)
        reward[np.arange(self.num_envs), player] = 0.5 * a
        self.t += 1
        done = self.t >= self.length
        win = (self.total % 2 == 0).astype(np.float32)
        reward[done, 0] += np.where(win[done] > 0, 1.0, -1.0)
        reward[done, 1] -= np.where(win[done] > 0, 1.0, -1.0)
        self.ret += reward
        seat_return = self.ret.copy()
        self.t[done] = 0
        self.total[done] = 0
        self.ret[done] = 0
        out = self._obs()
        out.reward, out.done, out.seat_return, out.outcome = reward, done, seat_return, win
        return out


class Uniform:
    def log_probs(self, obs: np.ndarray, mask: np.ndarray, agent_idx: np.ndarray) -> np.ndarray:
        return np.where(mask, np.log(1.0 / mask.sum(1, keepdims=True)), -np.inf).astype(np.float32)

    def evaluate(self, obs, state, mask, agent_idx):  # type: ignore[no-untyped-def]
        return self.log_probs(obs, mask, agent_idx), self.values(state, agent_idx)

    def values(self, state: np.ndarray, agent_idx: np.ndarray) -> np.ndarray:
        return state[:, 0].astype(np.float32) + 10.0


def test_gumbel_sampling_follows_probabilities_and_never_draws_illegal() -> None:
    rng = np.random.default_rng(0)
    logp = np.tile(np.array([[np.log(0.2), np.log(0.8), -np.inf]]), (200_000, 1))
    a = sample_actions(logp, rng)
    assert not (a == 2).any()
    assert abs((a == 1).mean() - 0.8) < 0.005


@pytest.mark.parametrize("seat", [0, 1])
def test_streams_hold_only_own_decisions_with_rewards_on_previous_decision(seat: int) -> None:
    env = Alternate(num_envs=4, length=3)
    loop = EpisodeLoop(env, seed=1)
    res = loop.collect(Uniform(), {"opp": Uniform()}, {"opp": 1.0}, num_steps=6, learner_seat=seat)
    batch = res.batch
    # 6 env steps = 2 full episodes of 3 decisions; seat 0 decides at t=0,2 ; seat 1 at t=1
    per_episode = 2 if seat == 0 else 1
    assert batch.valid.sum(0).tolist() == [2 * per_episode] * 4
    assert res.episodes == 8 and len(res.results) == 8
    # decisions carry the env time of the decision in obs[...,0]
    times = batch.obs[: 2 * per_episode, :, 0]
    expect = [0, 2, 0, 2] if seat == 0 else [1, 1]
    assert (times == np.array(expect)[:, None]).all()
    # the last decision of each episode is marked done; its reward includes the terminal reward
    dones = batch.dones[: 2 * per_episode]
    assert dones.sum() == 8
    # every stream ended exactly at an episode end: bootstrap 0
    assert (batch.bootstrap_values == 0).all()
    # the recorded stream returns equal the env's seat returns, episode by episode
    total_batch = float(batch.rewards[batch.valid].sum())
    total_env = float(sum(r.player_return for r in res.results))
    assert total_batch == pytest.approx(total_env)


def test_unfinished_streams_bootstrap_from_critic_and_continue_next_call() -> None:
    env = Alternate(num_envs=2, length=3)
    loop = EpisodeLoop(env, seed=3)
    res = loop.collect(Uniform(), {"opp": Uniform()}, {"opp": 1.0}, num_steps=2, learner_seat=0)
    # seat 0 acted at t=0 only; after 2 steps the game is at t=2 (seat 0 to act): V = 2 + 10
    assert res.batch.valid.sum() == 2
    assert not res.batch.dones.any()
    assert res.batch.bootstrap_values.tolist() == [12.0, 12.0]
    res2 = loop.collect(Uniform(), {"opp": Uniform()}, {"opp": 1.0}, num_steps=1, learner_seat=0)
    # same task: the games continue (t=2 decision) and end
    assert res2.batch.obs[0, :, 0].tolist() == [2.0, 2.0]
    assert res2.batch.dones[0].all() and len(res2.results) == 2


def test_outcomes_are_from_the_learner_side_and_opponents_follow_probabilities() -> None:
    env = Alternate(num_envs=64, length=1)
    loop = EpisodeLoop(env, seed=0)
    res = loop.collect(Uniform(), {"a": Uniform(), "b": Uniform()}, {"a": 0.25, "b": 0.75}, num_steps=50)
    share_b = np.mean([r.opponent_id == "b" for r in res.results])
    assert abs(share_b - 0.75) < 0.03
    for r in res.results:
        assert r.outcome in (0.0, 1.0)
        assert (r.player_return > 0) == (r.outcome == 1.0)


def test_evaluate_plays_each_pairing_exactly_its_quota() -> None:
    env = Alternate(num_envs=5, length=3)
    loop = EpisodeLoop(env, seed=0)
    pols = {"x": Uniform(), "y": Uniform(), "z": Uniform()}
    out = loop.evaluate(pols, [("x", "y", 7), ("y", "x", 3), ("x", "z", 0), ("z", "y", 11)])
    counts: dict[tuple[str, str], int] = {}
    for r in out.results:
        counts[(r.player_id, r.opponent_id)] = counts.get((r.player_id, r.opponent_id), 0) + 1
    assert counts == {("x", "y"): 7, ("y", "x"): 3, ("z", "y"): 11}
    assert out.env_steps == 21 * 3


def test_loop_is_deterministic_under_a_seed() -> None:
    def run() -> np.ndarray:
        loop = EpisodeLoop(Alternate(num_envs=8), seed=42)
        return loop.collect(Uniform(), {"o": Uniform()}, {"o": 1.0}, num_steps=30).batch.actions

    assert (run() == run()).all()


def test_games_in_progress_keep_their_opponent_and_seat_when_the_distribution_changes() -> None:
    env = Alternate(num_envs=6, length=3)
    loop = EpisodeLoop(env, seed=5)
    learner, a, b = Uniform(), Uniform(), Uniform()
    first = loop.collect(learner, {"a": a}, {"a": 1.0}, num_steps=2, generation=0)
    assert first.results == [] and loop.opponents_in_use() == ["a"]
    seats = loop._learner_seat.copy()
    # the new distribution has only "b"; the games in progress still need "a"'s policy
    with pytest.raises(ValueError, match="opponent of games in progress"):
        loop.collect(learner, {"b": b}, {"b": 1.0}, num_steps=1, generation=1)
    second = loop.collect(learner, {"a": a, "b": b}, {"b": 1.0}, num_steps=4, generation=1)
    ended_first = second.results[:6]
    assert [(r.opponent_id, r.drawn_generation) for r in ended_first] == [("a", 0)] * 6
    assert [r.player_seat for r in ended_first] == seats.tolist()
    # games started in this call draw from the new distribution and carry its generation
    assert loop.opponents_in_use() == ["b"]
    assert (loop._drawn == 1).all()
    # the learner's streams went on across the calls: a seat-0 learner's first decision in the
    # second call is the t=2 decision of the game it started in the first
    seat0 = np.flatnonzero(seats == 0)
    assert seat0.size > 0 and (second.batch.obs[0, seat0, 0] == 2.0).all()


def test_a_loop_restarts_its_games_for_another_learner() -> None:
    loop = EpisodeLoop(Alternate(num_envs=3, length=3), seed=0)
    loop.collect(Uniform(), {"a": Uniform()}, {"a": 1.0}, num_steps=1, learner_id="x")
    res = loop.collect(Uniform(), {"b": Uniform()}, {"b": 1.0}, num_steps=3, learner_id="y")
    assert {r.opponent_id for r in res.results} == {"b"} and len(res.results) == 3
