"""Acting and learning overlapped (``execution.overlap``): the next round plays while the learners
update on the last one, one version of policy lag, the same budgets and rounds.

Every component is real (PolicyServer, EpisodeServer, LearnerRunner with MAPPO, RolloutWorker,
RolloutManager, TrainingManager) on a small battalion, local backend; the last test runs the same
on a real Ray instance, where the workers do play while the learner updates.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
import torch

from light_league import envs
from light_league.algorithms.mappo import MAPPOConfig, MAPPOLearner
from light_league.data_buffer.episode import SampleBatch
from light_league.data_buffer.episode_server import EpisodeServer
from light_league.data_buffer.policy_server import PolicyServer
from light_league.execution.base import Executor
from light_league.execution.local_executor import LocalExecutor
from light_league.rollout.rollout_manager import RolloutManager
from light_league.rollout.rollout_worker import RolloutWorker
from light_league.training import training_manager
from light_league.training.learner_runner import LearnerRunner
from light_league.training.training_manager import TrainingManager
from light_league.types import AgentType, TrainingTask

ENV, OPTIONS = "battalion", {"team_size": 1, "max_steps": 20}
WORKERS, ENVS, STEPS = 2, 4, 10  # 80 env steps per round per learner
LEARNERS = ("a", "b")


class RecordingEpisodeServer(EpisodeServer):
    """The real server, recording each pull: the learner version asked for and the batch's."""

    def __init__(self) -> None:
        super().__init__()
        self.pulls: list[tuple[str, int, int | None]] = []

    def pull(self, learner_id: str, min_version: int, limit: int | None = None) -> SampleBatch | None:
        batch = super().pull(learner_id, min_version, limit)
        self.pulls.append((learner_id, min_version, None if batch is None else batch.policy_version))
        return batch


def build(executor: Executor, *, overlap: bool) -> tuple[TrainingManager, Any]:
    ps = executor.create(PolicyServer, name="policy_server")
    es = executor.create(RecordingEpisodeServer if executor.name == "local" else EpisodeServer, name="es")
    ps_client, es_client = executor.client(ps), executor.client(es)
    for name in ("random", "scripted_l3"):
        executor.invoke(ps, PolicyServer.add_fixed, name, "fixed", {"name": name, "env": ENV})
    config = MAPPOConfig(hidden_size=8, ppo_epoch=1)
    learners = {
        lid: executor.create(
            LearnerRunner,
            lid,
            ENV,
            envs.make_spec(ENV, **OPTIONS),
            MAPPOLearner,
            config,
            name=f"learner_{lid}",
            seed=i,
            policy_server=ps_client,
            episode_server=es_client,
        )
        for i, lid in enumerate(LEARNERS)
    }
    workers = [
        executor.create(
            RolloutWorker,
            ENV,
            OPTIONS,
            name=f"worker_{i}",
            restartable=True,
            num_envs=ENVS,
            seed=i,
            policy_server=ps_client,
            episode_server=es_client,
        )
        for i in range(WORKERS)
    ]
    rollout = RolloutManager(executor, workers, max_restarts=0)
    manager = TrainingManager(executor, rollout, learners, steps_per_call=STEPS, overlap=overlap)
    return manager, executor.client(es)


def tasks(rounds_a: int, rounds_b: int) -> list[TrainingTask]:
    per_round = WORKERS * ENVS * STEPS
    return [
        TrainingTask("a", AgentType.MAIN_AGENT, {"scripted_l3": 1.0}, rounds_a * per_round),
        TrainingTask("b", AgentType.MAIN_EXPLOITER, {"random": 1.0}, rounds_b * per_round),
    ]


@pytest.mark.parametrize("overlap", [False, True])
def test_the_same_budgets_and_rounds_with_one_version_of_lag(overlap: bool) -> None:
    manager, server = build(LocalExecutor(), overlap=overlap)
    out = manager.run(tasks(4, 2))
    per_round = WORKERS * ENVS * STEPS
    assert out.env_steps == {"a": 4 * per_round, "b": 2 * per_round}
    assert out.updates == {"a": 4, "b": 2}
    assert manager.versions == {"a": 5, "b": 3}  # one publication at the start, one per update
    # every update trained on exactly its own round's trajectories: nothing left over, none dropped
    assert all(server.size(lid) == 0 and server.dropped[lid] == 0 for lid in LEARNERS)
    lags = [asked + (1 if overlap else 0) - played for _, asked, played in server.pulls]
    if overlap:
        # the first update of a generation trains on its own version, the others on the one before
        assert out.metrics["a"]["policy_lag"] == pytest.approx(3 / 4)
        assert out.metrics["b"]["policy_lag"] == pytest.approx(1 / 2)
        assert [p[2] for p in server.pulls if p[0] == "a"] == [1, 1, 2, 3]
    else:
        assert out.metrics["a"]["policy_lag"] == 0.0 and out.metrics["b"]["policy_lag"] == 0.0
        assert [p[2] for p in server.pulls if p[0] == "a"] == [1, 2, 3, 4]
    assert all(lag in (0, 1) for lag in lags)


class Clock:
    """A clock that only the calls given to ``costing`` move, each by its cost: timings read from
    it are the same on any machine."""

    def __init__(self) -> None:
        self.now = 0.0
        self.calls: dict[str, int] = {}

    def perf_counter(self) -> float:
        return self.now

    def costing(self, method: Callable[..., Any], seconds: float) -> Callable[..., Any]:
        @functools.wraps(method)
        def timed(*args: Any, **kwargs: Any) -> Any:
            self.calls[method.__name__] = self.calls.get(method.__name__, 0) + 1
            self.now += seconds
            return method(*args, **kwargs)

        return timed


@pytest.mark.parametrize("overlap", [False, True])
def test_the_train_split_counts_rollouts_played_when_sent(
    overlap: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A local executor plays a round when it is sent: that time is rollout time (the record's
    env_steps_per_s divides by it), not lost between the split's two parts. The split is read on a
    clock that a worker's round moves by 1 s and a learner's update by 1 ms."""
    clock = Clock()
    monkeypatch.setattr(training_manager, "time", clock)
    monkeypatch.setattr(RolloutWorker, "run", clock.costing(RolloutWorker.run, 1.0))
    monkeypatch.setattr(LearnerRunner, "train_step", clock.costing(LearnerRunner.train_step, 0.001))
    manager, _ = build(LocalExecutor(), overlap=overlap)
    out = manager.run(tasks(4, 2))
    assert clock.calls == {"run": 4 * WORKERS, "train_step": 4 + 2}
    assert out.rollout_s == pytest.approx(4 * WORKERS * 1.0)
    assert out.update_s == pytest.approx((4 + 2) * 0.001)


def test_a_lagged_batch_is_weighed_against_the_policy_that_played_it() -> None:
    """The PPO ratio of a batch one version old starts away from 1 (its log-probabilities are
    the behaviour policy's, not the updated learner's) and is clipped where it moved too far."""
    manager, server = build(LocalExecutor(), overlap=True)
    learner = manager.learners["a"].target.learner
    played: list[np.ndarray] = []
    original = learner.update

    def update(batch: SampleBatch) -> dict[str, float]:
        played.append(batch.logp[batch.valid].copy())
        data, _ = learner._prepare(batch)
        with torch.no_grad():
            logits = learner.policy.masked_logits(data["obs"], data["mask"], data["agent_idx"])
        played.append(logits.log_softmax(-1).gather(1, data["actions"][:, None]).squeeze(1).numpy())
        return original(batch)

    learner.update = update  # type: ignore[method-assign]
    manager.run(tasks(3, 1))
    behaviour_0, current_0, behaviour_1, current_1 = played[:4]
    np.testing.assert_allclose(behaviour_0, current_0, atol=1e-5)  # first update: its own version
    assert np.abs(behaviour_1 - current_1).max() > 1e-3  # second: the policy moved since it played


@pytest.mark.integration
@pytest.mark.ray
def test_on_ray_the_workers_play_while_the_learners_update(ray_session: None) -> None:
    from light_league.execution.ray_executor import RayExecutor

    executor = RayExecutor()
    try:
        manager, _ = build(executor, overlap=True)
        out = manager.run(tasks(4, 3))
    finally:
        executor.shutdown()  # its actors only: the session's Ray instance stays
    per_round = WORKERS * ENVS * STEPS
    assert out.env_steps == {"a": 4 * per_round, "b": 3 * per_round}
    assert out.updates == {"a": 4, "b": 3}
    assert manager.versions == {"a": 5, "b": 4}
    assert 0.0 <= out.metrics["a"]["policy_lag"] <= 1.0
