"""A network computes each distinct input row once: ``distinct_rows`` finds them exactly (a hash
collision costs the shortcut, never a wrong row), ``rowwise`` gives ``net(x)`` and its gradients,
and a MAPPO update on a batch that repeats a few inputs (poker's) ends where the same update
through the plain forward pass ends."""

from __future__ import annotations

import copy

import numpy as np
import pytest
import torch
from torch.func import functional_call, grad, vmap

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
    # the same rows through the same net: equal up to float32 rounding (a BLAS may take another
    # kernel for 12 rows than for 2,048), at torch's float32 tolerances
    torch.testing.assert_close(fast, plain)
    # Each gradient entry is a sum over the 2,048 rows of that row's term t_i, which the two paths
    # add in different orders (the fast one first adds up each distinct row's repeats). In float32
    # any order of n terms is off the exact sum by at most about n * eps/2 * sum_i |t_i|
    # (Higham, "Accuracy and Stability of Numerical Algorithms", 4.2): both are held to
    # n * eps * sum_i |t_i| from the float64 sum, with each row's terms taken in float64.
    terms = per_row_gradients(net, x, weight)
    eps = torch.finfo(torch.float32).eps
    for (name, t), a, b in zip(terms.items(), g_plain, g_fast, strict=True):
        exact, bound = t.sum(0), len(x) * eps * t.abs().sum(0)
        for path, got in (("plain", a), ("rowwise", b)):
            off = (got.double() - exact).abs()
            assert (off <= bound).all(), f"{path} {name}: off by {off.max():.3g}, {bound.max():.3g} allowed"
        # the bound still sees a mistake: one distinct row's repeats left out
        missing = (t[(x == x[0]).all(dim=1)].sum(0).abs() > bound).any()
        assert missing, f"{name}: the bound is too loose to see a distinct row left out"


def per_row_gradients(net: torch.nn.Module, x: torch.Tensor, weight: torch.Tensor) -> dict[str, torch.Tensor]:
    """For each parameter, in float64, each row's term of the gradient of ``(net(x) * weight).sum()``
    (their sum over the first axis is that gradient)."""
    exact_net = copy.deepcopy(net).double()
    params = {name: p.detach() for name, p in exact_net.named_parameters()}

    def row_loss(p: dict[str, torch.Tensor], row: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
        return (functional_call(exact_net, p, (row[None],))[0] * w).sum()

    terms: dict[str, torch.Tensor] = vmap(grad(row_loss), in_dims=(None, 0, 0))(
        params, x.double(), weight.double()
    )
    return terms


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
