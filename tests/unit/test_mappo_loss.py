"""MAPPO losses and ValueNorm against plain Python loops written from the reference code."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from light_league.algorithms.mappo.loss import (
    categorical_entropy,
    huber_loss,
    mappo_value_loss,
    masked_mean,
    policy_loss,
    ppo_diagnostics,
    value_loss,
)
from light_league.algorithms.mappo.valuenorm import ValueNorm


def ref_huber(e: float, d: float) -> float:
    return e * e / 2 if abs(e) <= d else d * (abs(e) - d / 2)


def masked_avg(xs: list[float], mask: list[float]) -> float:
    return sum(x * m for x, m in zip(xs, mask)) / sum(mask)


def t64(x: object) -> torch.Tensor:
    return torch.as_tensor(np.asarray(x), dtype=torch.float64)


@pytest.fixture
def data() -> dict[str, np.ndarray]:
    rng = np.random.default_rng(0)
    n = 50
    return {
        "logp": rng.normal(-1.0, 0.3, n),
        "old_logp": rng.normal(-1.0, 0.3, n),
        "adv": rng.standard_normal(n),
        "values": rng.standard_normal(n) * 3,
        "old_values": rng.standard_normal(n) * 3,
        "targets": rng.standard_normal(n) * 20,
        "mask": (rng.random(n) < 0.7).astype(np.float64),
    }


def test_huber_matches_loop() -> None:
    errs = np.linspace(-30, 30, 61)
    got = huber_loss(t64(errs), 10.0).numpy()
    assert np.allclose(got, [ref_huber(e, 10.0) for e in errs], atol=1e-12)


@pytest.mark.parametrize("clip", [0.05, 0.2])
def test_policy_loss_matches_loop(data: dict[str, np.ndarray], clip: float) -> None:
    surr = []
    for lp, old, a in zip(data["logp"], data["old_logp"], data["adv"]):
        r = math.exp(lp - old)
        surr.append(min(r * a, min(max(r, 1 - clip), 1 + clip) * a))
    want = -masked_avg(surr, list(data["mask"]))
    got = policy_loss(
        t64(data["logp"]), t64(data["old_logp"]), t64(data["adv"]), clip=clip, mask=t64(data["mask"])
    )
    assert abs(float(got) - want) < 1e-6
    unmasked = policy_loss(t64(data["logp"]), t64(data["old_logp"]), t64(data["adv"]), clip=clip)
    assert abs(float(unmasked) + sum(surr) / len(surr)) < 1e-6


def test_policy_loss_gradient_vanishes_outside_the_clip() -> None:
    # ratio 1.5 with positive advantage: clipped branch is smaller -> no gradient
    logp = torch.tensor([math.log(1.5)], dtype=torch.float64, requires_grad=True)
    policy_loss(
        logp, torch.zeros(1, dtype=torch.float64), torch.ones(1, dtype=torch.float64), clip=0.2
    ).backward()
    assert logp.grad is not None and float(logp.grad) == 0.0


@pytest.mark.parametrize("huber", [True, False])
@pytest.mark.parametrize("clipped", [True, False])
def test_value_loss_matches_loop(data: dict[str, np.ndarray], huber: bool, clipped: bool) -> None:
    clip, delta = 0.2, 10.0
    per = []
    for v, old, tgt in zip(data["values"], data["old_values"], data["targets"]):
        v_clip = old + min(max(v - old, -clip), clip)
        loss_fn = (lambda e: ref_huber(e, delta)) if huber else (lambda e: e * e / 2)
        orig, clp = loss_fn(tgt - v), loss_fn(tgt - v_clip)
        per.append(max(orig, clp) if clipped else orig)
    want = masked_avg(per, list(data["mask"]))
    got = value_loss(
        t64(data["values"]),
        t64(data["old_values"]),
        t64(data["targets"]),
        clip=clip,
        huber_delta=delta if huber else None,
        clipped=clipped,
        mask=t64(data["mask"]),
    )
    assert abs(float(got) - want) < 1e-6 * max(1.0, abs(want))


def test_entropy_ignores_illegal_actions() -> None:
    rng = np.random.default_rng(1)
    logits = rng.standard_normal((6, 5))
    mask = rng.random((6, 5)) < 0.6
    mask[:, 0] = True
    masked = torch.as_tensor(logits).masked_fill(~torch.as_tensor(mask), -1e10)
    got = categorical_entropy(torch.log_softmax(masked, dim=-1)).numpy()
    for i in range(6):
        legal = [logits[i, a] for a in range(5) if mask[i, a]]
        z = sum(math.exp(x) for x in legal)
        want = -sum(math.exp(x) / z * (x - math.log(z)) for x in legal)
        assert abs(got[i] - want) < 1e-6
    assert got[0] <= math.log(mask[0].sum()) + 1e-9


def test_masked_mean_and_diagnostics(data: dict[str, np.ndarray]) -> None:
    m = list(data["mask"])
    assert (
        abs(float(masked_mean(t64(data["adv"]), t64(data["mask"]))) - masked_avg(list(data["adv"]), m)) < 1e-9
    )
    kl, frac = ppo_diagnostics(t64(data["logp"]), t64(data["old_logp"]), clip=0.2, mask=t64(data["mask"]))
    ratios = [math.exp(a - b) for a, b in zip(data["logp"], data["old_logp"])]
    want_kl = masked_avg([(r - 1) - math.log(r) for r in ratios], m)
    want_frac = masked_avg([1.0 if abs(r - 1) > 0.2 else 0.0 for r in ratios], m)
    assert abs(kl - want_kl) < 1e-9 and abs(frac - want_frac) < 1e-9


class RefValueNorm:
    """``onpolicy/utils/valuenorm.py`` as a plain loop (scalar, per-update decay)."""

    def __init__(self, beta: float = 0.99999, eps: float = 1e-5) -> None:
        self.beta, self.eps = beta, eps
        self.mean = self.mean_sq = self.debias = 0.0

    def update(self, xs: list[float]) -> None:
        bm = sum(xs) / len(xs)
        bsq = sum(x * x for x in xs) / len(xs)
        self.mean = self.mean * self.beta + bm * (1 - self.beta)
        self.mean_sq = self.mean_sq * self.beta + bsq * (1 - self.beta)
        self.debias = self.debias * self.beta + (1 - self.beta)

    def stats(self) -> tuple[float, float]:
        d = max(self.debias, self.eps)
        m, sq = self.mean / d, self.mean_sq / d
        return m, max(sq - m * m, 1e-2)

    def normalize(self, x: float) -> float:
        m, v = self.stats()
        return (x - m) / math.sqrt(v)

    def denormalize(self, x: float) -> float:
        m, v = self.stats()
        return x * math.sqrt(v) + m


@pytest.mark.parametrize("beta", [0.99999, 0.9])
def test_valuenorm_matches_reference(beta: float) -> None:
    rng = np.random.default_rng(2)
    ours, ref = ValueNorm(beta=beta), RefValueNorm(beta=beta)
    assert float(ours.normalize(t64([3.0]))[0]) == pytest.approx(ref.normalize(3.0))  # empty stats
    for _ in range(5):
        xs = rng.normal(5.0, 4.0, 32)
        ours.update(t64(xs))
        ref.update(list(xs))
        probe = rng.standard_normal(4) * 10
        np.testing.assert_allclose(
            ours.normalize(t64(probe)).numpy(), [ref.normalize(p) for p in probe], rtol=1e-9
        )
        np.testing.assert_allclose(
            ours.denormalize(t64(probe)).numpy(), [ref.denormalize(p) for p in probe], rtol=1e-9
        )
    assert float(ours.denormalize(ours.normalize(t64([1.25])))[0]) == pytest.approx(1.25)
    mean, var = ref.stats()
    assert ours.mean_std() == pytest.approx((mean, math.sqrt(var)), rel=1e-9)


def test_mappo_value_loss_updates_valuenorm_before_normalising(data: dict[str, np.ndarray]) -> None:
    clip, delta = 0.2, 10.0
    returns = data["targets"]
    ref = RefValueNorm()
    ref.update(list(returns))
    per = []
    for v, old, ret in zip(data["values"], data["old_values"], returns):
        tgt = ref.normalize(ret)
        v_clip = old + min(max(v - old, -clip), clip)
        per.append(max(ref_huber(tgt - v, delta), ref_huber(tgt - v_clip, delta)))
    vn = ValueNorm()
    got = mappo_value_loss(
        t64(data["values"]),
        t64(data["old_values"]),
        t64(returns),
        vn,
        clip=clip,
        huber_delta=delta,
        clipped=True,
        mask=t64(data["mask"]),
    )
    assert abs(float(got) - masked_avg(per, list(data["mask"]))) < 1e-6
    assert float(vn.debiasing_term) == pytest.approx(ref.debias)
