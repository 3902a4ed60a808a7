"""The regret learner: regret matching, its memories, mirror streams, its update on a matrix game
with a known equilibrium, exact resume, and its snapshots as MAPPO members."""

from __future__ import annotations

import io

import numpy as np
import pytest
import torch

from light_league import envs
from light_league.algorithms.mappo.policy import MAPPOPolicy
from light_league.algorithms.registry import build_policy
from light_league.algorithms.regret import RegretConfig
from light_league.algorithms.regret.learner import RegretLearner
from light_league.algorithms.regret.memory import Reservoir
from light_league.algorithms.regret.policy import RegretPolicy, regret_matching, uniform_log_probs
from light_league.config import load_config
from light_league.data_buffer.episode import SampleBatch
from light_league.data_buffer.episode_server import EpisodeServer
from light_league.data_buffer.policy_server import PolicyServer
from light_league.envs.matrix_games import payoff_matrix
from light_league.errors import ConfigError
from light_league.rollout.episode import EpisodeLoop
from light_league.training.learner_runner import LearnerRunner

SMALL = RegretConfig(hidden_size=16, layer_N=0, batch_size=256, regret_steps=8, snapshot_steps=100)


def test_regret_matching_is_the_positive_part_normalised_or_the_best_action() -> None:
    regrets = torch.tensor([[1.0, 3.0, -2.0], [-1.0, -3.0, -0.5], [2.0, 5.0, 1.0]])
    mask = torch.tensor([[True, True, True], [True, True, True], [True, False, True]])
    probs = regret_matching(regrets, mask)
    torch.testing.assert_close(probs[0], torch.tensor([0.25, 0.75, 0.0]))
    torch.testing.assert_close(probs[1], torch.tensor([0.0, 0.0, 1.0]))  # none positive: the largest
    torch.testing.assert_close(probs[2], torch.tensor([2 / 3, 0.0, 1 / 3]))  # an illegal action gets nothing
    lp = uniform_log_probs(np.array([[True, False, True]]))
    np.testing.assert_allclose(np.exp(lp), [[0.5, 0.0, 0.5]])


def test_a_reservoir_keeps_the_first_samples_then_a_uniform_sample_and_resumes_exactly() -> None:
    shapes = {"x": ((), np.int64)}
    memory = Reservoir(100, shapes, seed=0)
    memory.add({"x": np.arange(60)})
    memory.add({"x": np.arange(60, 100)})
    np.testing.assert_array_equal(memory.arrays["x"], np.arange(100))
    for start in range(100, 10_000, 100):
        memory.add({"x": np.arange(start, start + 100)})
    kept = memory.arrays["x"]
    assert memory.size == 100 and memory.seen == 10_000
    # a uniform sample of 0..9999: about a tenth from each tenth
    counts = np.bincount(kept // 1000, minlength=10)
    assert counts.min() >= 2 and counts.max() <= 25
    copy = Reservoir(100, shapes, seed=5)
    copy.load_state_dict(memory.state_dict())
    memory.add({"x": np.arange(10_000, 10_050)})
    copy.add({"x": np.arange(10_000, 10_050)})
    np.testing.assert_array_equal(copy.arrays["x"], memory.arrays["x"])


def self_play(learner: RegretLearner, loop: EpisodeLoop, steps: int) -> SampleBatch:
    return loop.collect(
        learner.policy, {"me": learner.policy}, {"me": 1.0}, steps, learner_id="me", mirror=True
    ).batch


def test_self_play_batches_hold_the_mirror_seat_and_every_decision_s_seat() -> None:
    """The learner's seat plays the sampling policy (uniform); the mirror seat, played by its
    current strategy, comes back as mirror streams; each decision says its seat."""
    loop = EpisodeLoop(envs.make_batched("kuhn_poker", 32), seed=0)
    learner = RegretLearner(loop.spec, SMALL, seed=0)
    batch = self_play(learner, loop, 12)
    assert batch.mirror is not None and batch.seat is not None
    own, mirror = batch.streams(~batch.mirror), batch.streams(batch.mirror)
    assert own.num_samples > 0 and mirror.num_samples > 0
    np.testing.assert_allclose(np.exp(own.logp[own.valid]), 1.0 / own.action_mask[own.valid].sum(axis=1))
    current = learner.policy.log_probs(
        mirror.obs[mirror.valid],
        mirror.action_mask[mirror.valid],
        mirror.agent_idx[np.nonzero(mirror.valid)[1]],
    )
    taken = mirror.actions[mirror.valid]
    np.testing.assert_allclose(mirror.logp[mirror.valid], current[np.arange(taken.size), taken], rtol=1e-5)
    # Kuhn's observation opens with the observer's seat
    for part in (own, mirror):
        np.testing.assert_array_equal(part.seat[part.valid], np.argmax(part.obs[part.valid][:, :2], axis=1))
    # against another opponent there is no mirror seat
    other = RegretPolicy.from_meta(learner.policy_meta(), learner.get_weights())
    loop = EpisodeLoop(envs.make_batched("kuhn_poker", 32), seed=1)
    plain = loop.collect(learner.policy, {"x": other}, {"x": 1.0}, 12, learner_id="me", mirror=True).batch
    assert plain.mirror is not None and not plain.mirror.any()


def exploitability(probs: np.ndarray, game: str) -> float:
    """How much a best response wins against ``probs`` in symmetric matrix game ``game`` (value 0)."""
    return float(np.max(np.asarray(payoff_matrix(game)) @ probs))


def average_strategy(learner: RegretLearner) -> np.ndarray:
    snap = learner.snapshot()
    pol = build_policy(snap.weights, snap.meta)
    return np.exp(pol.log_probs(np.ones((1, 1), np.float32), np.ones((1, 3), bool), np.zeros(1, np.int64)))[0]


def test_the_average_strategy_approaches_the_equilibrium_of_a_matrix_game() -> None:
    """Biased rock-paper-scissors (Nash (1/4, 1/2, 1/4), value 0): the current strategy keeps
    moving, the average strategy's exploitability falls well below uniform play's (1/3) and a
    pure strategy's (1 or 2)."""
    loop = EpisodeLoop(envs.make_batched("biased_rps", 128), seed=0)
    learner = RegretLearner(loop.spec, SMALL, seed=0)  # the defaults: corrected estimates, lr 3e-3
    readings = []
    for it in range(1, 151):  # seeds 0-2 read 0.099-0.128 after 150 iterations, 0.64-0.72 after 25
        learner.update(self_play(learner, loop, 1))
        if it in (25, 150):
            readings.append(exploitability(average_strategy(learner), "biased_rps"))
    assert readings[1] < 0.2
    assert readings[1] < readings[0]


def test_a_learner_resumed_from_its_state_goes_on_exactly() -> None:
    loop_a = EpisodeLoop(envs.make_batched("kuhn_poker", 16), seed=3)
    loop_b = EpisodeLoop(envs.make_batched("kuhn_poker", 16), seed=3)
    a = RegretLearner(loop_a.spec, SMALL, seed=1)
    for _ in range(3):
        batch = self_play(a, loop_a, 6)
        self_play(a, loop_b, 6)  # the second loop's games where the first's are
        a.update(batch)
    buf = io.BytesIO()
    torch.save(a.state_dict(), buf)
    buf.seek(0)
    b = RegretLearner(loop_a.spec, SMALL, seed=9)
    b.load_state_dict(torch.load(buf, weights_only=True))
    for _ in range(2):
        ma, mb = a.update(self_play(a, loop_a, 6)), b.update(self_play(b, loop_b, 6))
        assert ma == mb
    for k, v in a.get_weights().items():
        np.testing.assert_array_equal(v, b.get_weights()[k])
    snap_a, snap_b = a.snapshot().weights, b.snapshot().weights  # each trains its average network
    for k, v in snap_a.items():
        np.testing.assert_array_equal(v, snap_b[k])


def test_its_snapshot_is_a_mappo_member_and_an_exploiter_restarts_from_it() -> None:
    """The average strategy freezes as a MAPPO policy; a MAPPO learner of the same network shape
    that resets to the regret learner starts from its newest snapshot."""
    spec = envs.make_spec("kuhn_poker")
    server, episodes = PolicyServer(), EpisodeServer()
    main = LearnerRunner(
        "main",
        "kuhn_poker",
        spec,
        RegretLearner,
        SMALL,
        seed=0,
        policy_server=server,
        episode_server=episodes,
    )
    assert server.get("main").kind == "regret"
    meta, weights = main.snapshot()  # type: ignore[misc]
    frozen = server.freeze("main", "main-v1", weights, meta)
    assert frozen.kind == "mappo" and isinstance(
        build_policy(frozen.weights, frozen.policy_meta), MAPPOPolicy
    )
    from light_league.algorithms.mappo import MAPPOConfig, MAPPOLearner

    exploiter = LearnerRunner(
        "exploiter",
        "kuhn_poker",
        spec,
        MAPPOLearner,
        MAPPOConfig(**SMALL.architecture()),
        seed=1,
        policy_server=server,
        episode_server=episodes,
    )
    exploiter.reset("main")
    for k, v in exploiter.learner.get_weights().items():
        np.testing.assert_array_equal(v, frozen.weights[k])
    other = LearnerRunner(
        "other",
        "kuhn_poker",
        spec,
        MAPPOLearner,
        MAPPOConfig(hidden_size=8),
        seed=1,
        policy_server=server,
        episode_server=episodes,
    )
    with pytest.raises(ValueError, match="do not fit"):
        other.reset("main")


def test_a_role_trains_with_its_own_kind_and_settings() -> None:
    from light_league.build import validate

    config = load_config(
        None,
        [
            "env.name=kuhn_poker",
            "scheduler.name=league",
            "learner.by_role={main_agent: {kind: regret, regret_steps: 4}, main_exploiter: {hidden_size: 64}}",
            "learner.regret.hidden_size=64",
            "learner.mappo.hidden_size=32",
            "scheduler.main_exploiter.reset_to=main_agent",
        ],
    )
    checked = validate(config)
    assert checked.kinds["main_agent"].name == "regret" and checked.kinds["main_exploiter"].name == "mappo"
    assert config.learner.regret_for("main_agent").regret_steps == 4
    assert config.learner.mappo_for("main_agent").hidden_size == 32  # the MAPPO fields stay MAPPO's
    bad = load_config(
        None, ["env.name=kuhn_poker", "learner.by_role={main_agent: {kind: regret, regret_stepz: 4}}"]
    )
    with pytest.raises(
        ConfigError, match=r"learner\.by_role\.main_agent\.regret_stepz.*did you mean regret_steps"
    ):
        validate(bad)
    shape = load_config(
        None,
        [
            "env.name=kuhn_poker",
            "scheduler.name=league",
            "learner.by_role={main_agent: {kind: regret}}",
            "scheduler.main_exploiter.reset_to=main_agent",
        ],
    )
    with pytest.raises(ConfigError, match="their networks differ in hidden_size"):
        validate(shape)
