"""``policy_gradient: all_actions``: an action-value network and a surrogate over every legal
action, so the noise of which action a sample took leaves the policy gradient (MAPPOLearner)."""

from __future__ import annotations

import io

import numpy as np
import pytest
import torch

from envs.base import EnvSpec
from light_league.algorithms.mappo import MAPPOConfig, MAPPOLearner
from light_league.config import load_config
from light_league.data_buffer.episode import SampleBatch
from light_league.errors import ConfigError

OBS, STATE, ACTIONS = 4, 4, 3
#: mean payoff of each action in the bandit below
PAYOFF = np.array([0.2, 0.0, -0.2])

SPEC = EnvSpec(
    name="toy",
    agents=("a0", "b0"),
    seats=((0,), (1,)),
    obs_dim=OBS,
    state_dim=STATE,
    num_actions=ACTIONS,
    symmetric=True,
    turn_based=False,
    score_range=(-3.0, 3.0),
    max_steps=1,
)


def bandit_batch(
    learner: MAPPOLearner, rng: np.random.Generator, n: int = 256, legal: np.ndarray | None = None
) -> SampleBatch:
    """One-step games in one state: action ``a`` pays ``PAYOFF[a]`` plus noise of sd 1."""
    obs = np.zeros((1, n, OBS), dtype=np.float32)
    obs[0, :, 0] = 1.0
    mask = (
        np.ones((1, n, ACTIONS), dtype=bool)
        if legal is None
        else np.broadcast_to(legal, (1, n, ACTIONS)).copy()
    )
    idx = np.zeros(n, dtype=np.int64)
    logp_all, values = learner.policy.evaluate(obs[0], obs[0], mask[0], idx)
    actions = np.argmax(logp_all + -np.log(-np.log(rng.random(logp_all.shape))), axis=1)
    rewards = PAYOFF[actions] + rng.standard_normal(n)
    return SampleBatch(
        obs=obs,
        state=obs.copy(),
        action_mask=mask,
        agent_idx=idx,
        actions=actions[None],
        logp=logp_all[np.arange(n), actions][None],
        values=values[None],
        rewards=rewards.astype(np.float32)[None],
        dones=np.ones((1, n), dtype=bool),
        valid=np.ones((1, n), dtype=bool),
        bootstrap_values=np.zeros(n, dtype=np.float32),
    )


def probs(learner: MAPPOLearner, legal: np.ndarray | None = None) -> np.ndarray:
    obs = np.zeros((1, OBS), dtype=np.float32)
    obs[0, 0] = 1.0
    mask = np.ones((1, ACTIONS), dtype=bool) if legal is None else legal[None]
    return np.exp(learner.policy.log_probs(obs, mask, np.zeros(1, np.int64)))[0]


CFG = dict(lr=3e-3, critic_lr=3e-3, ppo_epoch=4, entropy_coef=0.0, use_feature_normalization=False)


def train(gradient: str, seed: int, updates: int = 8, **extra: object) -> MAPPOLearner:
    learner = MAPPOLearner(SPEC, MAPPOConfig(**CFG, **extra, policy_gradient=gradient), seed=0)  # type: ignore[arg-type]
    rng = np.random.default_rng(seed)
    for _ in range(updates):
        learner.update(bandit_batch(learner, rng))
    return learner


def test_every_action_moves_by_its_value_and_the_best_one_wins() -> None:
    """The best action gains on every seed, and at least as much as with the sampled gradient:
    the same expected step, without the noise of which actions a batch happened to take (which
    Adam's step size answers with smaller steps)."""
    best = {
        g: np.array([probs(train(g, seed, updates=3))[0] for seed in range(6)])
        for g in ("sampled", "all_actions")
    }
    # seeds 0-5 after 3 updates: all_actions 0.80-0.93, sampled 0.59-0.70
    assert (best["all_actions"] > 0.6).all(), best
    assert (best["all_actions"] > best["sampled"]).all(), best


def test_the_control_variate_keeps_the_sampled_direction_whatever_the_action_values_say() -> None:
    """Action values frozen at a wrong answer (the worst action valued highest): ``all_actions``
    follows them to the worst action, ``control_variate`` still finds the best one, because the
    sampled term carries what the values miss."""
    ends = {}
    for gradient in ("all_actions", "control_variate"):
        cfg = {**CFG, "critic_lr": 1e-9}  # the action values (and the critic) all but frozen
        learner = MAPPOLearner(SPEC, MAPPOConfig(**cfg, policy_gradient=gradient), seed=0)  # type: ignore[arg-type]
        assert learner._q_net is not None
        with torch.no_grad():
            learner._q_net[-1].weight.zero_()  # type: ignore[index]
            learner._q_net[-1].bias.copy_(torch.tensor([-1.0, 0.0, 1.0]))  # type: ignore[index]
        rng = np.random.default_rng(4)
        for _ in range(6):
            learner.update(bandit_batch(learner, rng))
        ends[gradient] = probs(learner)
    assert ends["all_actions"].argmax() == 2, ends
    assert ends["control_variate"].argmax() == 0 and ends["control_variate"][0] > 0.5, ends


def test_illegal_actions_stay_at_zero_and_nothing_is_not_finite() -> None:
    legal = np.array([False, True, True])
    learner = MAPPOLearner(SPEC, MAPPOConfig(**CFG, policy_gradient="all_actions"), seed=0)  # type: ignore[arg-type]
    rng = np.random.default_rng(0)
    for _ in range(3):
        metrics = learner.update(bandit_batch(learner, rng, legal=legal))
        assert all(np.isfinite(v) for v in metrics.values()), metrics
    p = probs(learner, legal)
    assert p[0] == 0.0 and p[1] > p[2], p
    assert metrics["q_loss"] > 0.0


def test_the_action_values_resume_and_reset_with_the_learner() -> None:
    """A learner restored from ``state_dict`` makes the same next update as the one that wrote it;
    ``reset_weights`` takes the action values back to their start."""
    a = train("all_actions", seed=1, updates=3)
    buf = io.BytesIO()
    torch.save(a.state_dict(), buf)  # as a checkpoint holds it: no tensor shared with ``a``
    buf.seek(0)
    b = MAPPOLearner(SPEC, MAPPOConfig(**CFG, policy_gradient="all_actions"), seed=0)  # type: ignore[arg-type]
    b.load_state_dict(torch.load(buf, weights_only=True))
    batch = bandit_batch(a, np.random.default_rng(9))
    ma, mb = a.update(batch), b.update(batch)
    assert ma == mb
    for k, v in a.get_weights().items():
        np.testing.assert_array_equal(b.get_weights()[k], v)
    fresh = MAPPOLearner(SPEC, MAPPOConfig(**CFG, policy_gradient="all_actions"), seed=0)  # type: ignore[arg-type]
    a.reset_weights()
    x = torch.zeros(1, STATE + SPEC.team_size)
    assert a._q_net is not None and fresh._q_net is not None
    torch.testing.assert_close(a._q_net(x), fresh._q_net(x))
    # a state written without action values loads, and they start afresh
    plain = MAPPOLearner(SPEC, MAPPOConfig(**CFG), seed=0)  # type: ignore[arg-type]
    fresh.load_state_dict(plain.state_dict())


def test_the_action_values_learn_the_payoffs() -> None:
    learner = train("all_actions", seed=2, updates=12)
    assert learner._q_net is not None
    x = torch.zeros(1, STATE + SPEC.team_size)
    x[0, 0] = 1.0
    x[0, STATE] = 1.0  # agent position 0
    q = learner._q_net(x).detach().numpy()[0]
    assert q[0] > q[1] > q[2], q
    np.testing.assert_allclose(q, PAYOFF, atol=0.15)


def test_recurrent_policies_get_a_one_line_error() -> None:
    with pytest.raises(
        ConfigError, match=r"policy_gradient=all_actions does not work with recurrent.cell=gru"
    ):
        load_config(None, ["learner.mappo.recurrent.cell=gru", "learner.mappo.policy_gradient=all_actions"])
