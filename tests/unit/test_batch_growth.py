"""A batch that grows along the schedule (``learner.mappo.batch_growth``): an update waits for
more rollout rounds of its own trajectories as the schedule runs, and the last round of a task
always updates, so no trajectory is left when a generation ends.

The servers, the learner runner, the rollout workers and the training manager are the real ones
(local backend, a small battalion, as in ``test_overlap.py``).
"""

from __future__ import annotations

import pytest

import envs
from light_league.algorithms.mappo import MAPPOConfig, MAPPOLearner
from light_league.build import validate
from light_league.config import load_config
from light_league.data_buffer.episode_server import EpisodeServer
from light_league.data_buffer.policy_server import PolicyServer
from light_league.errors import ConfigError
from light_league.execution.local_executor import LocalExecutor
from light_league.rollout.rollout_manager import RolloutManager
from light_league.rollout.rollout_worker import RolloutWorker
from light_league.training.learner_runner import LearnerRunner
from light_league.training.training_manager import TrainingManager
from light_league.types import AgentType, TrainingTask

ENV, OPTIONS = "battalion", {"team_size": 1, "max_steps": 20}
ENVS, STEPS = 4, 10  # one worker: 40 env steps a round


def build(config: MAPPOConfig) -> tuple[TrainingManager, EpisodeServer, LearnerRunner]:
    executor = LocalExecutor()
    ps = executor.create(PolicyServer, name="policy_server")
    es = executor.create(EpisodeServer, name="episode_server")
    ps_client, es_client = executor.client(ps), executor.client(es)
    executor.invoke(ps, PolicyServer.add_fixed, "random", "fixed", {"name": "random", "env": ENV})
    learner = executor.create(
        LearnerRunner,
        "a",
        ENV,
        envs.make_spec(ENV, **OPTIONS),
        MAPPOLearner,
        config,
        name="learner_a",
        seed=0,
        policy_server=ps_client,
        episode_server=es_client,
    )
    worker = executor.create(
        RolloutWorker,
        ENV,
        OPTIONS,
        name="worker_0",
        restartable=True,
        num_envs=ENVS,
        seed=0,
        policy_server=ps_client,
        episode_server=es_client,
    )
    rollout = RolloutManager(executor, [worker], max_restarts=0)
    manager = TrainingManager(executor, rollout, {"a": learner}, steps_per_call=STEPS)
    return manager, es_client, executor.client(learner)


def task(rounds: int) -> list[TrainingTask]:
    return [TrainingTask("a", AgentType.MAIN_AGENT, {"random": 1.0}, rounds * ENVS * STEPS)]


def test_rounds_per_update_grow_along_the_schedule_and_restart_with_it() -> None:
    spec = envs.make_spec(ENV, **OPTIONS)
    learner = MAPPOLearner(spec, MAPPOConfig(hidden_size=8, batch_growth=4, lr_decay_updates=6), seed=0)
    assert learner.rounds_per_update == 1
    wanted = []
    for step in range(8):
        learner._schedule_step = step  # the schedule's clock: one tick per update
        wanted.append(learner.rounds_per_update)
    assert wanted == [1, 1, 2, 2, 3, 3, 4, 4]  # 1 + floor(3 * progress), held at 4 past the horizon
    learner.reset_weights()
    assert learner.rounds_per_update == 1
    plain = MAPPOLearner(spec, MAPPOConfig(hidden_size=8, lr_decay_updates=6), seed=0)
    plain._schedule_step = 6
    assert plain.rounds_per_update == 1  # the default: an update every round


def test_an_update_waits_for_its_rounds_and_the_tasks_last_round_flushes() -> None:
    # the horizon is two updates: the first update takes 1 round, the second 2, then 3 each
    manager, server, runner = build(
        MAPPOConfig(hidden_size=8, ppo_epoch=1, batch_growth=3, lr_decay_updates=2)
    )
    out = manager.run(task(8))
    assert out.env_steps == {"a": 8 * ENVS * STEPS}
    # rounds 1 | 2 3 | 4 5 6 | 7 8 (the last round updates on the two queued): four updates
    assert out.updates == {"a": 4}
    assert manager.versions == {"a": 5}  # one publication at the start, one per update
    assert server.size("a") == 0 and server.dropped["a"] == 0  # every trajectory used, none dropped
    assert out.metrics["a"]["rounds"] == pytest.approx((1 + 2 + 3 + 2) / 4)
    assert out.metrics["a"]["policy_lag"] == 0.0  # a waiting round's trajectories are its own version's
    assert runner.learner.num_updates == 4


def test_without_growth_every_round_updates() -> None:
    manager, server, _ = build(MAPPOConfig(hidden_size=8, ppo_epoch=1, lr_decay_updates=2))
    out = manager.run(task(3))
    assert out.updates == {"a": 3}
    assert out.metrics["a"]["rounds"] == 1.0
    assert server.size("a") == 0


def test_the_wait_carries_over_generations_and_restarts_with_a_reset() -> None:
    manager, server, runner = build(
        MAPPOConfig(hidden_size=8, ppo_epoch=1, batch_growth=3, lr_decay_updates=1)
    )
    manager.run(task(1))  # one update: the schedule is at its end, three rounds an update from now on
    assert manager.rounds_wanted == {"a": 3}
    out = manager.run(task(3))  # the next generation: one update, on its three rounds
    assert out.updates == {"a": 1} and out.metrics["a"]["rounds"] == 3.0 and server.size("a") == 0
    manager.reset("a")  # an exploiter's reset restarts the schedule: one round an update again
    assert runner.learner.rounds_per_update == 1
    out = manager.run(task(2))
    assert out.updates == {"a": 2} and out.metrics["a"]["rounds"] == 1.0


def test_batch_growth_with_overlap_is_refused_in_one_line() -> None:
    config = load_config(
        "expr_configs/league_leduc.yaml",
        ["execution.overlap=true", "learner.by_role.main_agent.batch_growth=4"],
    )
    with pytest.raises(ConfigError) as info:
        validate(config)
    message = str(info.value)
    assert "\n" not in message
    assert "batch_growth=4" in message and "main_agent" in message and "execution.overlap=false" in message
