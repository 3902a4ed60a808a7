"""``state_weight_power``: per-sample weights from how often a sample's observation comes up in
its batch, so a rare decision learns as fast as a common one (MAPPOLearner)."""

from __future__ import annotations

import numpy as np
import pytest

from envs.base import EnvSpec
from light_league.algorithms.mappo import MAPPOConfig, MAPPOLearner
from light_league.algorithms.mappo.learner import state_weights
from light_league.config import load_config
from light_league.data_buffer.episode import SampleBatch
from light_league.errors import ConfigError

OBS, STATE, ACTIONS = 4, 4, 2

SPEC = EnvSpec(
    name="toy",
    agents=("a0", "b0"),
    seats=((0,), (1,)),
    obs_dim=OBS,
    state_dim=STATE,
    num_actions=ACTIONS,
    symmetric=True,
    turn_based=False,
    score_range=(-1.0, 1.0),
    max_steps=1,
)


def test_weights_are_inverse_counts_to_the_power_normalised_to_mean_one() -> None:
    obs = np.array([[1, 0], [1, 0], [0, 1], [1, 0], [1, 0]], dtype=np.float32)
    idx = np.array([0, 0, 0, 0, 1])  # the last row: same observation, another position
    w = state_weights(obs, idx, 1.0)
    # counts 3, 3, 1, 3, 1 -> 1/3, 1/3, 1, 1/3, 1 (mean 0.6)
    np.testing.assert_allclose(w, np.array([1 / 3, 1 / 3, 1, 1 / 3, 1]) / 0.6, rtol=1e-6)
    assert w.dtype == np.float32 and w.mean() == pytest.approx(1.0)
    # each distinct (observation, position) gets the same total weight at power 1
    assert w[[0, 1, 3]].sum() == pytest.approx(w[2]) == pytest.approx(w[4])
    half = state_weights(obs, idx, 0.5)
    np.testing.assert_allclose(
        half, np.array([3**-0.5] * 2 + [1, 3**-0.5, 1]) / np.mean([3**-0.5] * 3 + [1, 1]), rtol=1e-6
    )
    np.testing.assert_allclose(state_weights(np.eye(5, dtype=np.float32), np.zeros(5, int), 1.0), np.ones(5))


def two_state_batch(
    learner: MAPPOLearner, rng: np.random.Generator, n: int = 400, rare: float = 0.1
) -> SampleBatch:
    """One-step games in two states, the second a ``rare`` fraction of them: action 0 pays 1 in
    the common state, action 1 in the rare one (so what the network learns from the common state
    alone pulls the rare one the wrong way)."""
    state_b = rng.random(n) < rare
    obs = np.zeros((1, n, OBS), dtype=np.float32)
    obs[0, ~state_b, 0] = 1.0
    obs[0, state_b, 1] = 1.0
    mask = np.ones((1, n, ACTIONS), dtype=bool)
    idx = np.zeros(n, dtype=np.int64)
    logp_all, values = learner.policy.evaluate(obs[0], obs[0], mask[0], idx)
    actions = np.argmax(logp_all + -np.log(-np.log(rng.random(logp_all.shape))), axis=1)
    return SampleBatch(
        obs=obs,
        state=obs.copy(),
        action_mask=mask,
        agent_idx=idx,
        actions=actions[None],
        logp=logp_all[np.arange(n), actions][None],
        values=values[None],
        rewards=(actions == state_b.astype(np.int64)).astype(np.float32)[None],
        dones=np.ones((1, n), dtype=bool),
        valid=np.ones((1, n), dtype=bool),
        bootstrap_values=np.zeros(n, dtype=np.float32),
    )


def p_right(learner: MAPPOLearner) -> tuple[float, float]:
    """Probability of the paying action in the common state (action 0) and in the rare one (1)."""
    obs = np.zeros((2, OBS), dtype=np.float32)
    obs[0, 0] = obs[1, 1] = 1.0
    p = np.exp(learner.policy.log_probs(obs, np.ones((2, ACTIONS), dtype=bool), np.zeros(2, np.int64)))
    return float(p[0, 0]), float(p[1, 1])


def test_a_rare_state_learns_as_fast_as_a_common_one_at_power_one() -> None:
    cfg = dict(lr=1e-3, critic_lr=1e-3, ppo_epoch=4, entropy_coef=0.0, use_feature_normalization=False)
    plain = MAPPOLearner(SPEC, MAPPOConfig(**cfg), seed=0)  # type: ignore[arg-type]
    weighted = MAPPOLearner(SPEC, MAPPOConfig(**cfg, state_weight_power=1.0), seed=0)  # type: ignore[arg-type]
    rng_p, rng_w = np.random.default_rng(1), np.random.default_rng(1)
    for _ in range(6):
        plain.update(two_state_batch(plain, rng_p))
        weighted.update(two_state_batch(weighted, rng_w))
    (common_p, rare_p), (common_w, rare_w) = p_right(plain), p_right(weighted)
    gain_p, gain_w = rare_p - 0.5, rare_w - 0.5
    # plain: the rare state hardly moves (seed 1: 0.55 against 0.95 in the common one);
    # weighted: it moves most of the common state's way (0.83 against 0.93)
    assert gain_p < 0.25 * (common_p - 0.5), (common_p, rare_p)
    assert gain_w > 0.5 * (common_w - 0.5) and rare_w > rare_p + 0.15, (common_w, rare_w, rare_p)


def test_all_distinct_observations_leave_the_update_as_it_was() -> None:
    """Continuous observations (no two alike): every weight is 1, the update is the plain one."""
    cfg = dict(lr=3e-3, ppo_epoch=3, num_mini_batch=2, magnet_coef=0.5)
    plain = MAPPOLearner(SPEC, MAPPOConfig(**cfg), seed=0)  # type: ignore[arg-type]
    weighted = MAPPOLearner(SPEC, MAPPOConfig(**cfg, state_weight_power=1.0), seed=0)  # type: ignore[arg-type]
    rng = np.random.default_rng(3)
    batch = two_state_batch(plain, rng)
    batch.obs[...] += rng.standard_normal(batch.obs.shape).astype(np.float32)
    a, b = plain.update(batch), weighted.update(batch)
    assert a.keys() == b.keys() and all(a[k] == pytest.approx(b[k], rel=1e-5, abs=1e-7) for k in a)
    for k, v in plain.get_weights().items():
        np.testing.assert_allclose(weighted.get_weights()[k], v, rtol=1e-5, atol=1e-7)


def test_recurrent_policies_get_a_one_line_error() -> None:
    with pytest.raises(ConfigError, match=r"state_weight_power=1.0 does not work with recurrent.cell=gru"):
        load_config(None, ["learner.mappo.recurrent.cell=gru", "learner.mappo.state_weight_power=1"])
