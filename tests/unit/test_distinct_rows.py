"""A network computes each distinct input row once: ``distinct_rows`` finds them exactly (a hash
collision costs the shortcut, never a wrong row), ``rowwise`` gives ``net(x)`` and its gradients,
and a MAPPO update on a batch that repeats a few inputs (poker's) ends where the same update
through the plain forward pass ends."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from light_league.algorithms.mappo import MAPPOConfig, MAPPOLearner, policy
from light_league.algorithms.mappo.policy import build_mlp, distinct_rows, rowwise
from light_league.data_buffer.episode import SampleBatch
from tests.unit.test_mappo_policy import ACTIONS, OBS, SPEC, STATE, TEAM


def repeated(n: int, distinct: int, width: int, seed: int = 0) -> torch.Tensor:
    gen = torch.Generator().manual_seed(seed)
    rows = torch.randn(distinct, width, generator=gen)
    return rows[torch.randint(0, distinct, (n,), generator=gen)]


def test_distinct_rows_are_exact_and_refuse_what_does_not_repeat() -> None:
    x = repeated(500, 7, 5)
    x[3] = -0.0 * x[3]  # sign bits count: -0.0 and 0.0 are different rows
    found = distinct_rows(x)
    assert found is not None
    rows, inverse = found
    assert torch.equal(rows[inverse], x) and len(rows) == len(torch.unique(x, dim=0)) <= 8
    assert distinct_rows(torch.randn(500, 5)) is None  # every row distinct: no shortcut
    assert distinct_rows(repeated(500, 1000, 5)) is None  # more than half distinct (about 390)
    assert distinct_rows(repeated(10, 2, 5)) is None  # too short to pay
    assert distinct_rows(repeated(500, 7, 5).double()) is None  # float32 only


def test_a_hash_collision_costs_the_shortcut_not_a_wrong_row(monkeypatch: pytest.MonkeyPatch) -> None:
    # every row hashes alike: the groups are checked and the call falls back to the plain pass
    monkeypatch.setattr(policy, "_row_weights", lambda width, device: torch.zeros(width, dtype=torch.int64))
    assert distinct_rows(repeated(500, 7, 5)) is None


def test_rowwise_gives_the_net_and_its_gradients() -> None:
    net = build_mlp(
        6, 3, hidden_size=32, layer_N=1, use_relu=True, use_feature_normalization=True,
        use_orthogonal=True, out_gain=0.01, generator=torch.Generator().manual_seed(0),
    )  # fmt: skip
    x = repeated(2048, 12, 6)
    weight = torch.randn(2048, 3, generator=torch.Generator().manual_seed(1))
    grads = []
    for forward in (net, lambda t: rowwise(net, t)):
        net.zero_grad()
        out = forward(x)
        (out * weight).sum().backward()
        grads.append((out.detach(), [p.grad.clone() for p in net.parameters()]))
    (plain, g_plain), (fast, g_fast) = grads
    assert torch.equal(plain, fast)
    for a, b in zip(g_plain, g_fast, strict=True):
        torch.testing.assert_close(a, b, rtol=1e-5, atol=1e-6)


def poker_like_batch(learner: MAPPOLearner, seed: int) -> SampleBatch:
    """Two-step episodes over eight observations and eight states, repeated many times over."""
    rng = np.random.default_rng(seed)
    t, n = 2, 512
    obs_table = rng.standard_normal((8, OBS)).astype(np.float32)
    state_table = rng.standard_normal((8, STATE)).astype(np.float32)
    which = rng.integers(0, 8, (t, n))
    obs, state = obs_table[which], state_table[which]
    mask = np.ones((t, n, ACTIONS), dtype=bool)
    idx = np.tile(np.arange(TEAM), n // TEAM)
    logp_all, values = learner.policy.evaluate(
        obs.reshape(-1, OBS), state.reshape(-1, STATE), mask.reshape(-1, ACTIONS), np.tile(idx, t)
    )
    actions = rng.integers(0, ACTIONS, t * n)
    return SampleBatch(
        obs=obs,
        state=state,
        action_mask=mask,
        agent_idx=idx,
        actions=actions.reshape(t, n),
        logp=logp_all[np.arange(actions.size), actions].reshape(t, n),
        values=values.reshape(t, n),
        rewards=(rng.random((t, n)) < 0.5).astype(np.float32),
        dones=np.array([[False] * n, [True] * n]),
        valid=np.ones((t, n), dtype=bool),
        bootstrap_values=np.zeros(n, dtype=np.float32),
    )


@pytest.mark.parametrize(
    "config",
    [
        MAPPOConfig(ppo_epoch=4, num_mini_batch=1, magnet_coef=0.5),
        MAPPOConfig(ppo_epoch=2, num_mini_batch=4),
    ],
    ids=["one mini-batch, magnet", "four mini-batches"],
)
def test_an_update_on_repeated_inputs_matches_the_plain_forward_pass(
    config: MAPPOConfig, monkeypatch: pytest.MonkeyPatch
) -> None:
    fast, plain = MAPPOLearner(SPEC, config, seed=4), MAPPOLearner(SPEC, config, seed=4)
    batches = [poker_like_batch(fast, seed) for seed in (0, 1)]
    metrics = [fast.update(b) for b in batches]
    assert set(fast._distinct) == {"obs", "state"}  # the shortcut was taken
    monkeypatch.setattr("light_league.algorithms.mappo.batch.distinct_rows", lambda x: None)
    plain_metrics = [plain.update(b) for b in batches]
    assert not plain._distinct
    for got, want in zip(metrics, plain_metrics, strict=True):
        for key in ("policy_loss", "value_loss", "entropy", "approx_kl"):
            assert got[key] == pytest.approx(want[key], rel=1e-4, abs=1e-6), key
    for name, value in fast.get_weights().items():
        np.testing.assert_allclose(value, plain.get_weights()[name], rtol=1e-4, atol=1e-5, err_msg=name)
