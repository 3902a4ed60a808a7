"""A RolloutWorker keeps games in progress across requests, pulling the policies they still need."""

from __future__ import annotations

from light_league import envs
from light_league.algorithms.mappo.policy import MAPPOPolicy
from light_league.data_buffer.episode_server import EpisodeServer
from light_league.data_buffer.policy_server import PolicyServer
from light_league.rollout.policy_bank import BankedPolicy
from light_league.rollout.rollout_worker import RolloutRequest, RolloutWorker

ENV = "battalion"
OPTIONS = {"team_size": 1, "max_steps": 12}


def publish(server: PolicyServer, pid: str, seed: int) -> None:
    spec = envs.make_batched(ENV, 1, **OPTIONS).spec
    policy = MAPPOPolicy(
        obs_dim=spec.obs_dim,
        state_dim=spec.state_dim,
        num_actions=spec.num_actions,
        team_size=spec.team_size,
        hidden_size=8,
        seed=seed,
    )
    meta = {
        "obs_dim": spec.obs_dim,
        "state_dim": spec.state_dim,
        "num_actions": spec.num_actions,
        "team_size": spec.team_size,
        "architecture": dict(policy.arch),
    }
    server.publish(pid, "mappo", meta, policy.get_weights())


def test_games_in_progress_keep_their_frozen_opponent_across_requests() -> None:
    server = PolicyServer()
    for i, pid in enumerate(["learner", "a", "b", "c"]):
        publish(server, pid, i)
    for pid in ("a", "b", "c"):
        server.freeze(pid, f"{pid}-v0")
    worker = RolloutWorker(
        ENV, OPTIONS, num_envs=8, seed=0, policy_server=server, episode_server=EpisodeServer(), cache_size=1
    )
    first = worker.run([RolloutRequest("learner", 1, {"a-v0": 1.0}, 4, generation=0)])[0]
    assert first.results == []  # 12-step games, 4 steps played
    # the next generation draws only b-v0 and c-v0; the games against a-v0 go on against it
    second = worker.run([RolloutRequest("learner", 1, {"b-v0": 0.5, "c-v0": 0.5}, 20, generation=1)])[0]
    drawn = {(r.opponent_id, r.drawn_generation) for r in second.results}
    assert ("a-v0", 0) in drawn
    assert {r.opponent_id for r in second.results if r.drawn_generation == 1} <= {"b-v0", "c-v0"}
    assert sum(r.opponent_id == "a-v0" for r in second.results) == 8  # every first game ended
    # the frozen opponents ran as members of one bank; the cache held all a round needed
    cached = worker._policies({"a-v0": 0, "b-v0": 0, "c-v0": 0})
    assert all(isinstance(p, BankedPolicy) for p in cached.values())
    assert len({id(p.bank) for p in cached.values() if isinstance(p, BankedPolicy)}) == 1


def test_reports_cross_processes_as_columns_and_come_back_equal() -> None:
    """A report's games are pickled as a few columns (a thousand dataclasses would cost
    milliseconds per Ray message) and unpickle to the same games, field by field and type."""
    import pickle

    from light_league.rollout.episode import EvaluationResult
    from light_league.rollout.rollout_worker import RolloutReport
    from light_league.types import MatchResult, pack_results

    games = [
        MatchResult("learner", "scripted_l1", 0, 1.0, 2.5, 3),
        MatchResult("learner", "main_agent_0-v4", 1, 0.5, -0.25, 4),
        MatchResult("learner", "scripted_l1", 1, 0.0, -1.0, 4),
    ]
    report = RolloutReport("learner", games, env_steps=30, samples=20, seconds=0.1)
    back = pickle.loads(pickle.dumps(report))
    assert back.results == games and back.env_steps == 30 and back.samples == 20
    assert [type(v) for v in vars(back.results[1]).values()] == [str, str, int, float, float, int]
    assert pack_results(games)["names"] == ("learner", "scripted_l1", "main_agent_0-v4")
    evaluation = pickle.loads(pickle.dumps(EvaluationResult(games, 30, {})))
    assert evaluation.results == games and evaluation.env_steps == 30
    assert pickle.loads(pickle.dumps(RolloutReport("x"))).results == []
