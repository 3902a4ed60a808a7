"""MAPPOPolicy (masks, agent id, value units, batching) and MAPPOLearner (determinism, resume,
reset, schedule, a learning signal on a contextual bandit), plus the learner registry."""

from __future__ import annotations

import dataclasses
import io
import json

import numpy as np
import pytest
import torch

from light_league import envs
from light_league.algorithms.base import TrainablePolicy
from light_league.algorithms.mappo import MAPPOConfig, MAPPOLearner, MAPPOPolicy
from light_league.algorithms.registry import build_policy, make_learner
from light_league.config import load_config
from light_league.data_buffer.episode import SampleBatch
from light_league.envs.base import EnvSpec
from light_league.errors import ConfigError, NonFiniteError
from light_league.learner_kinds import learner_kind

OBS, STATE, ACTIONS, TEAM = 6, 9, 4, 2

SPEC = EnvSpec(
    name="toy",
    agents=("a0", "a1", "b0", "b1"),
    seats=((0, 1), (2, 3)),
    obs_dim=OBS,
    state_dim=STATE,
    num_actions=ACTIONS,
    symmetric=True,
    turn_based=False,
    score_range=(-1.0, 1.0),
    max_steps=10,
)


def make_policy(**kw: object) -> MAPPOPolicy:
    return MAPPOPolicy(obs_dim=OBS, state_dim=STATE, num_actions=ACTIONS, team_size=TEAM, seed=3, **kw)  # type: ignore[arg-type]


def inputs(n: int = 12, seed: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    mask = rng.random((n, ACTIONS)) < 0.5
    mask[np.arange(n), rng.integers(0, ACTIONS, n)] = True
    return (
        rng.standard_normal((n, OBS)).astype(np.float32),
        rng.standard_normal((n, STATE)).astype(np.float32),
        mask,
        rng.integers(0, TEAM, n),
    )


def test_log_probs_are_minus_inf_where_illegal_and_normalised() -> None:
    policy = make_policy()
    obs, _, mask, idx = inputs()
    logp = policy.log_probs(obs, mask, idx)
    assert logp.dtype == np.float32 and logp.shape == mask.shape
    assert np.all(np.isneginf(logp[~mask])) and np.all(np.isfinite(logp[mask]))
    np.testing.assert_allclose(np.exp(logp).sum(axis=1), 1.0, atol=1e-5)
    # gain 0.01 on the head: the initial policy is near uniform over legal actions
    uniform = -np.log(mask.sum(axis=1, keepdims=True))
    assert np.abs(np.where(mask, logp - uniform, 0.0)).max() < 0.05


def test_evaluate_is_log_probs_plus_values_and_batching_is_rowwise() -> None:
    policy = make_policy()
    assert isinstance(policy, TrainablePolicy)
    obs, state, mask, idx = inputs()
    logp, values = policy.evaluate(obs, state, mask, idx)
    np.testing.assert_array_equal(logp, policy.log_probs(obs, mask, idx))
    np.testing.assert_allclose(values, policy.values(state, idx), rtol=1e-6)
    for i in range(len(obs)):
        row = policy.log_probs(obs[i : i + 1], mask[i : i + 1], idx[i : i + 1])
        np.testing.assert_allclose(row[0][mask[i]], logp[i][mask[i]], atol=1e-5)


def test_agent_id_changes_the_input_only_when_enabled() -> None:
    obs, state, mask, _ = inputs()
    zeros, ones = np.zeros(len(obs), dtype=np.int64), np.ones(len(obs), dtype=np.int64)
    with_id = make_policy(add_agent_id=True)
    assert not np.allclose(with_id.values(state, zeros), with_id.values(state, ones))
    without = make_policy(add_agent_id=False)
    np.testing.assert_array_equal(without.log_probs(obs, mask, zeros), without.log_probs(obs, mask, ones))


def test_values_are_in_return_units() -> None:
    policy = make_policy()
    _, state, _, idx = inputs()
    assert policy.value_norm is not None
    policy.value_norm.update(torch.tensor([10.0, 30.0]))  # mean 20, var 100
    raw = policy.critic_values(torch.from_numpy(state), torch.from_numpy(idx)).detach().numpy()
    np.testing.assert_allclose(policy.values(state, idx), raw * 10.0 + 20.0, rtol=1e-5)


def test_bad_inputs_name_the_shape() -> None:
    policy = make_policy()
    obs, _, mask, idx = inputs()
    with pytest.raises(ValueError, match=r"obs must have shape \(N, 6\), got \(12, 5\)"):
        policy.log_probs(obs[:, :5], mask, idx)
    with pytest.raises(ValueError, match="agent_idx must be"):
        policy.log_probs(obs, mask, idx + 2)


def test_weights_round_trip_and_mismatch_message() -> None:
    a, b = (
        make_policy(),
        MAPPOPolicy(obs_dim=OBS, state_dim=STATE, num_actions=ACTIONS, team_size=TEAM, seed=9),
    )
    obs, _, mask, idx = inputs()
    assert not np.allclose(a.log_probs(obs, mask, idx), b.log_probs(obs, mask, idx))
    b.set_weights(a.get_weights())
    np.testing.assert_array_equal(a.log_probs(obs, mask, idx), b.log_probs(obs, mask, idx))
    weights = a.get_weights()
    weights["actor.1.weight"] = np.zeros((3, 3), dtype=np.float32)
    with pytest.raises(ValueError, match=r"weight 'actor.1.weight' has shape \(3, 3\)"):
        b.set_weights(weights)
    with pytest.raises(ValueError, match="missing"):
        make_policy(layer_N=2).set_weights(a.get_weights())


# ---------------------------------------------------------------------- learner


def bandit_batch(policy: MAPPOPolicy, rng: np.random.Generator, t: int = 4, n: int = 64) -> SampleBatch:
    """One-step episodes: reward 1 when the action equals argmax of the first ACTIONS obs entries."""
    obs = rng.standard_normal((t, n, OBS)).astype(np.float32)
    state = rng.standard_normal((t, n, STATE)).astype(np.float32)
    mask = np.ones((t, n, ACTIONS), dtype=bool)
    idx = np.tile(np.arange(TEAM), n // TEAM)
    logp_all, values = policy.evaluate(
        obs.reshape(-1, OBS), state.reshape(-1, STATE), mask.reshape(-1, ACTIONS), np.tile(idx, t)
    )
    gumbel = -np.log(-np.log(rng.random(logp_all.shape)))
    actions = np.argmax(logp_all + gumbel, axis=1)
    rewards = (actions == np.argmax(obs.reshape(-1, OBS)[:, :ACTIONS], axis=1)).astype(np.float32)
    return SampleBatch(
        obs=obs,
        state=state,
        action_mask=mask,
        agent_idx=idx,
        actions=actions.reshape(t, n),
        logp=logp_all[np.arange(actions.size), actions].reshape(t, n),
        values=values.reshape(t, n),
        rewards=rewards.reshape(t, n),
        dones=np.ones((t, n), dtype=bool),
        valid=np.ones((t, n), dtype=bool),
        bootstrap_values=np.zeros(n, dtype=np.float32),
    )


def test_learner_improves_a_contextual_bandit() -> None:
    learner = MAPPOLearner(SPEC, MAPPOConfig(lr=3e-3, critic_lr=3e-3, ppo_epoch=5), seed=0)
    rng = np.random.default_rng(0)
    first = float(bandit_batch(learner.policy, rng).rewards.mean())
    for _ in range(30):
        metrics = learner.update(bandit_batch(learner.policy, rng))
    last = float(np.mean([bandit_batch(learner.policy, rng).rewards.mean() for _ in range(5)]))
    assert first < 0.35 and last > 0.8, (first, last)
    for key in ("policy_loss", "value_loss", "entropy", "approx_kl", "clip_frac", "grad_norm", "lr"):
        assert np.isfinite(metrics[key]), key


def test_learner_is_deterministic_under_a_seed() -> None:
    cfg = MAPPOConfig(num_mini_batch=4, ppo_epoch=2)
    a, b = MAPPOLearner(SPEC, cfg, seed=5), MAPPOLearner(SPEC, cfg, seed=5)
    batch = bandit_batch(a.policy, np.random.default_rng(1))
    assert a.update(batch) == b.update(batch)
    for k, v in a.get_weights().items():
        np.testing.assert_array_equal(v, b.get_weights()[k])
    c = MAPPOLearner(SPEC, cfg, seed=6)
    assert not np.array_equal(c.get_weights()["actor.1.weight"], a.get_weights()["actor.1.weight"])


def test_state_dict_resumes_exactly_through_weights_only_load() -> None:
    cfg = MAPPOConfig(num_mini_batch=2, ppo_epoch=2, lr_schedule="linear", lr_decay_updates=4)
    rng = np.random.default_rng(2)
    behaviour = make_policy()
    batches = [bandit_batch(behaviour, rng), bandit_batch(behaviour, rng)]
    a = MAPPOLearner(SPEC, cfg, seed=1)
    a.update(batches[0])
    buf = io.BytesIO()
    torch.save(a.state_dict(), buf)
    buf.seek(0)
    b = MAPPOLearner(SPEC, cfg, seed=99)
    b.load_state_dict(torch.load(buf, weights_only=True))
    assert a.update(batches[1]) == b.update(batches[1])
    for k, v in a.get_weights().items():
        np.testing.assert_array_equal(v, b.get_weights()[k])
    with pytest.raises(ValueError, match="version"):
        b.load_state_dict({"version": 0})


def test_reset_weights_restores_the_initial_policy_and_schedule() -> None:
    learner = MAPPOLearner(
        SPEC, MAPPOConfig(lr_schedule="linear", lr_decay_updates=2, lr_final_fraction=0.5), seed=0
    )
    initial = learner.get_weights()
    batch = bandit_batch(learner.policy, np.random.default_rng(3))
    lrs = [learner.update(batch)["lr"] for _ in range(3)]
    assert lrs == pytest.approx([5e-4, 3.75e-4, 2.5e-4])
    assert not np.array_equal(initial["actor.1.weight"], learner.get_weights()["actor.1.weight"])
    learner.reset_weights()
    for k, v in initial.items():
        np.testing.assert_array_equal(v, learner.get_weights()[k])
    assert learner.lr_fraction == 1.0 and learner.num_updates == 3


def test_policy_meta_rebuilds_the_policy_through_the_registry() -> None:
    learner = MAPPOLearner(SPEC, MAPPOConfig(hidden_size=32, layer_N=2), seed=0)
    meta = json.loads(json.dumps(learner.policy_meta()))
    assert meta["kind"] == "mappo" and meta["team_size"] == TEAM and meta["architecture"]["layer_N"] == 2
    rebuilt = build_policy(learner.get_weights(), meta)
    obs, _, mask, idx = inputs()
    np.testing.assert_array_equal(rebuilt.log_probs(obs, mask, idx), learner.policy.log_probs(obs, mask, idx))


def test_the_learner_table_names_the_valid_kinds() -> None:
    from light_league.config import LearnerSection

    mappo = learner_kind(LearnerSection())
    assert mappo.learner is MAPPOLearner and MAPPOLearner.Config is MAPPOConfig
    assert isinstance(make_learner(MAPPOLearner, SPEC, MAPPOConfig(), seed=0), MAPPOLearner)
    with pytest.raises(
        ConfigError, match=r"unknown learner 'mapo'; did you mean mappo\? \(valid: exact_br, mappo"
    ):
        learner_kind(LearnerSection(kind="mapo"))


def test_config_refuses_out_of_range_and_unknown_fields() -> None:
    with pytest.raises(ValueError, match="clip_param"):
        MAPPOConfig(clip_param=0.0)
    with pytest.raises(ValueError, match="use_ReLU"):
        MAPPOConfig(use_ReLU=False)  # type: ignore[call-arg]


def test_every_switch_off_still_trains_and_rebuilds() -> None:
    off = {
        "use_valuenorm": False,
        "use_huber_loss": False,
        "use_clipped_value_loss": False,
        "use_advantage_norm": False,
        "use_relu": False,
        "use_feature_normalization": False,
        "use_orthogonal": False,
        "use_max_grad_norm": False,
        "add_agent_id": False,
    }
    learner = MAPPOLearner(SPEC, MAPPOConfig(layer_N=0, ppo_epoch=2, **off), seed=0)
    metrics = learner.update(bandit_batch(learner.policy, np.random.default_rng(4)))
    assert all(np.isfinite(v) for v in metrics.values()) and "value_norm_mean" not in metrics
    rebuilt = build_policy(learner.get_weights(), learner.policy_meta())
    obs, state, mask, idx = inputs()
    np.testing.assert_array_equal(rebuilt.log_probs(obs, mask, idx), learner.policy.log_probs(obs, mask, idx))


# ---------------------------------------------------------------------- regularisers


def policy_entropy(learner: MAPPOLearner, batch: SampleBatch) -> float:
    logp = learner.policy.log_probs(
        batch.obs.reshape(-1, OBS), batch.action_mask.reshape(-1, ACTIONS), np.tile(batch.agent_idx, 4)
    )
    p = np.exp(logp)
    return float(-(np.where(p > 0, p * logp, 0.0)).sum(axis=1).mean())


def test_removed_options_load_at_their_off_value_and_are_refused_otherwise() -> None:
    """The full configs of older run directories hold the removed options at the values that
    meant "off": those load; any other value is a one-line error naming the option."""
    old = {"batch_growth": 1, "entropy_target": None, "entropy_adapt_rate": 0.1}
    old |= {"state_weight_power": 0.0, "policy_gradient": "sampled"}
    assert MAPPOConfig.model_validate({"lr": 1e-3, **old}) == MAPPOConfig(lr=1e-3)
    for key, value in {"batch_growth": 4, "policy_gradient": "all_actions", "entropy_target": 0.5}.items():
        with pytest.raises(ConfigError, match=rf"learner\.mappo: .*{key} was removed"):
            load_config(None, [f"learner.mappo.{key}={value}"])


def test_magnet_kl_is_zero_at_the_start_and_pulls_toward_the_magnet() -> None:
    rng = np.random.default_rng(1)
    cfg = dict(lr=3e-3, ppo_epoch=5, entropy_coef=0.0)
    free = MAPPOLearner(SPEC, MAPPOConfig(**cfg), seed=0)  # type: ignore[arg-type]
    held = MAPPOLearner(SPEC, MAPPOConfig(**cfg, magnet_coef=5.0, magnet_rate=1e-3), seed=0)  # type: ignore[arg-type]
    one_step = MAPPOLearner(SPEC, MAPPOConfig(**{**cfg, "ppo_epoch": 1}, magnet_coef=5.0), seed=0)  # type: ignore[arg-type]
    # one mini-batch step: the KL is measured before the actor moves, when magnet == actor
    assert one_step.update(bandit_batch(one_step.policy, rng))["magnet_kl"] == pytest.approx(0.0, abs=1e-6)
    for _ in range(30):
        free.update(bandit_batch(free.policy, rng))
        last = held.update(bandit_batch(held.policy, rng))
    probe = bandit_batch(free.policy, np.random.default_rng(9))
    # a heavy, nearly fixed magnet (the near-uniform initial policy) keeps the entropy high
    assert policy_entropy(held, probe) > policy_entropy(free, probe) + 0.2
    assert 0.0 < last["magnet_kl"] < 0.5


def test_magnet_moves_toward_the_actor_and_survives_save_and_reset() -> None:
    cfg = MAPPOConfig(lr=3e-3, magnet_coef=0.5, magnet_rate=0.25)
    a = MAPPOLearner(SPEC, cfg, seed=1)
    rng = np.random.default_rng(4)
    before = {k: v.clone() for k, v in a._magnet.net.state_dict().items()}
    a.update(bandit_batch(a.policy, rng))
    actor = a.policy.actor.state_dict()
    for k, v in a._magnet.net.state_dict().items():
        torch.testing.assert_close(v, before[k] + 0.25 * (actor[k] - before[k]))
    buf = io.BytesIO()
    torch.save(a.state_dict(), buf)
    buf.seek(0)
    b = MAPPOLearner(SPEC, cfg, seed=7)
    b.load_state_dict(torch.load(buf, weights_only=True))
    assert b.entropy_coef == a.entropy_coef
    batch = bandit_batch(a.policy, rng)
    assert a.update(batch) == b.update(batch)
    a.reset_weights()
    assert a.entropy_coef == cfg.entropy_coef
    for k, v in a._magnet.net.state_dict().items():
        torch.testing.assert_close(v, a.policy.actor.state_dict()[k])


def test_entropy_coefficient_follows_the_linear_schedule_to_its_final_fraction() -> None:
    cfg = MAPPOConfig(entropy_coef=0.1, lr_schedule="linear", lr_decay_updates=4, entropy_final_fraction=0.2)
    learner = MAPPOLearner(SPEC, cfg, seed=0)
    batch = bandit_batch(learner.policy, np.random.default_rng(5))
    coefs = [learner.update(batch)["entropy_coef"] for _ in range(6)]
    assert coefs == pytest.approx([0.1, 0.08, 0.06, 0.04, 0.02, 0.02])
    constant = MAPPOLearner(SPEC, MAPPOConfig(entropy_coef=0.1, entropy_final_fraction=0.2), seed=0)
    assert constant.update(batch)["entropy_coef"] == 0.1  # no schedule, no decay


def test_advantage_std_is_the_spread_before_normalisation_in_reward_units() -> None:
    # one-step episodes: each advantage is the reward minus the batch's value, whatever gamma is
    learner = MAPPOLearner(SPEC, MAPPOConfig(), seed=0)
    batch = bandit_batch(learner.policy, np.random.default_rng(3))
    expected = float(np.std(batch.rewards - batch.values))
    assert learner.update(batch)["advantage_std"] == pytest.approx(expected, rel=1e-5)
    # in reward units: ten times the rewards, about ten times the spread (the values are small)
    scaled = dataclasses.replace(batch, rewards=batch.rewards * 10.0)
    expected = float(np.std(scaled.rewards - scaled.values))
    assert MAPPOLearner(SPEC, MAPPOConfig(), seed=0).update(scaled)["advantage_std"] == pytest.approx(
        expected, rel=1e-5
    )


def test_by_role_merges_fields_and_names_bad_ones() -> None:
    from light_league.config import LearnerSection

    section = LearnerSection.model_validate(
        {
            "mappo": {"entropy_coef": 0.05, "clip_param": 0.1},
            "by_role": {"main_exploiter": {"clip_param": 0.2}},
        }
    )
    exploiter = section.mappo_for("main_exploiter")
    assert (exploiter.clip_param, exploiter.entropy_coef) == (0.2, 0.05)
    assert section.mappo_for("main_agent") is section.mappo
    bad = LearnerSection.model_validate({"by_role": {"main_exploiter": {"clip_parm": 0.2}}})
    with pytest.raises(
        ConfigError, match=r"learner\.by_role\.main_exploiter\.clip_parm.*did you mean clip_param"
    ):
        bad.mappo_for("main_exploiter")


@pytest.mark.parametrize("bad", [np.nan, np.inf], ids=["nan", "inf"])
def test_a_non_finite_loss_stops_the_update_before_an_optimiser_step(bad: float) -> None:
    learner = MAPPOLearner(SPEC, MAPPOConfig(), seed=0)
    batch = bandit_batch(learner.policy, np.random.default_rng(0))
    batch.rewards[1, 3] = bad
    before = learner.get_weights()
    with pytest.raises(NonFiniteError, match="MAPPO update 1: the (actor|value) loss is"):
        learner.update(batch)
    for name, value in learner.get_weights().items():
        np.testing.assert_array_equal(value, before[name], err_msg=name)


def test_a_learner_never_publishes_non_finite_weights() -> None:
    """Weights that turned non-finite (here: copied from a policy that is) are refused before the
    PolicyServer gets them, naming the learner and the env."""
    from light_league.data_buffer.episode_server import EpisodeServer
    from light_league.data_buffer.policy_server import PolicyServer
    from light_league.training.learner_runner import LearnerRunner

    servers = PolicyServer(), EpisodeServer()
    runner = LearnerRunner(
        "main_agent_0",
        "rps",
        envs.make_spec("rps"),
        MAPPOLearner,
        MAPPOConfig(),
        seed=0,
        policy_server=servers[0],
        episode_server=servers[1],
    )
    entry = servers[0].get("main_agent_0")
    poisoned = {k: np.full_like(v, np.nan) for k, v in entry.weights.items()}
    servers[0].publish("other_0", entry.kind, entry.meta, poisoned)
    with pytest.raises(NonFiniteError, match="learner main_agent_0 \\(env 'rps'\\): .* non-finite weights"):
        runner.reset("other_0")
    assert np.isfinite(servers[0].get("main_agent_0").weights["actor.0.weight"]).all()


def test_mappo_by_role_its_former_name_is_still_read() -> None:
    from light_league.config import LearnerSection

    former = LearnerSection.model_validate({"mappo_by_role": {"main_exploiter": {"clip_param": 0.3}}})
    assert (
        former.by_role == {"main_exploiter": {"clip_param": 0.3}}
        and "mappo_by_role" not in former.model_dump()
    )
    assert load_config(None, ["learner.mappo_by_role={main_agent: {lr: 0.001}}"]).learner.mappo_for(
        "main_agent"
    ).lr == pytest.approx(0.001)
    with pytest.raises(ConfigError, match="both are set; keep by_role alone"):
        load_config(
            None, ["learner.mappo_by_role={main_agent: {lr: 0.001}}", "learner.by_role={x: {lr: 0.1}}"]
        )


def test_magnet_schedule_lr_slows_the_magnet_with_the_learning_rate() -> None:
    """With ``magnet_schedule: lr`` the magnet's step is ``magnet_rate`` times the lr fraction of
    the next update; ``constant`` keeps the full rate however far the lr has decayed."""
    base = dict(lr=3e-3, magnet_coef=0.5, magnet_rate=0.4, lr_schedule="linear", lr_decay_updates=2)
    base["lr_final_fraction"] = 0.25
    rng = np.random.default_rng(6)
    for schedule, rates in (("lr", [0.4 * 0.625, 0.4 * 0.25, 0.4 * 0.25]), ("constant", [0.4, 0.4, 0.4])):
        learner = MAPPOLearner(SPEC, MAPPOConfig(**base, magnet_schedule=schedule), seed=2)  # type: ignore[arg-type]
        for rate in rates:
            before = {k: v.clone() for k, v in learner._magnet.net.state_dict().items()}
            learner.update(bandit_batch(learner.policy, rng))
            actor = learner.policy.actor.state_dict()
            for k, v in learner._magnet.net.state_dict().items():
                torch.testing.assert_close(v, before[k] + rate * (actor[k] - before[k]))


def test_snapshot_average_is_a_running_average_of_the_parameters_and_belongs_to_the_lineage() -> None:
    """``snapshot_average_rate``: after the lineage's ``n``-th update every parameter of the
    average moves ``max(rate, 1/n)`` toward the learner's (a plain mean of the weights so far,
    then a running average); the learner's own weights are untouched; buffers (ValueNorm) are
    the learner's; the average survives a checkpoint and restarts with the lineage."""
    rng = np.random.default_rng(8)
    off = MAPPOLearner(SPEC, MAPPOConfig(lr=3e-3), seed=2)
    off.update(bandit_batch(off.policy, rng))
    assert off.snapshot() is None

    rate = 0.25
    learner = MAPPOLearner(SPEC, MAPPOConfig(lr=3e-3, snapshot_average_rate=rate), seed=2)
    expected = {k: v.copy() for k, v in learner.get_weights().items()}
    params = {name for name, _ in learner.policy.named_parameters()}
    for n in range(1, 6):  # steps 1, 1/2, 1/3, then the rate 1/4, 1/4
        learner.update(bandit_batch(learner.policy, rng))
        now = learner.get_weights()
        for k in params:
            expected[k] = expected[k] + max(rate, 1 / n) * (now[k] - expected[k])
    snapshot, now = learner.snapshot(), learner.get_weights()
    assert snapshot is not None and snapshot.meta == {**learner.policy_meta(), "averaged": True}
    snap = snapshot.weights
    assert set(snap) == set(now)
    for k in snap:
        np.testing.assert_allclose(snap[k], expected[k] if k in params else now[k], rtol=1e-5, atol=1e-6)
    assert any(not np.allclose(snap[k], now[k]) for k in params)  # the average lags the learner

    restored = MAPPOLearner(SPEC, MAPPOConfig(lr=3e-3, snapshot_average_rate=rate), seed=9)
    restored.load_state_dict(learner.state_dict())
    for k, v in restored.snapshot().weights.items():  # type: ignore[union-attr]
        np.testing.assert_array_equal(v, snap[k])

    learner.set_weights(off.get_weights())  # a restart from another learner: a new lineage
    for k, v in learner.snapshot().weights.items():  # type: ignore[union-attr]
        np.testing.assert_array_equal(v, off.get_weights()[k])
    learner.reset_weights()
    for k, v in learner.snapshot().weights.items():  # type: ignore[union-attr]
        np.testing.assert_array_equal(v, learner.get_weights()[k])
