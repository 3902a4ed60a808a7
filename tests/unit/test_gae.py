"""GAE and advantage normalisation against plain Python loops."""

from __future__ import annotations

import numpy as np
import pytest

from light_league.algorithms.mappo.gae import check_padding, compute_gae, normalize_advantages

Grid = list[list[float]]


def reference_gae(
    rewards: Grid,
    values: Grid,
    dones: list[list[bool]],
    lengths: list[int],
    boot: list[float],
    gamma: float,
    lam: float,
) -> tuple[np.ndarray, np.ndarray]:
    """One stream at a time, one step at a time (the reference buffer's loop)."""
    t_max, n = len(rewards), len(rewards[0])
    adv = [[0.0] * n for _ in range(t_max)]
    ret = [[0.0] * n for _ in range(t_max)]
    for j in range(n):
        gae = 0.0
        for t in reversed(range(lengths[j])):
            next_v = values[t + 1][j] if t + 1 < lengths[j] else boot[j]
            mask = 0.0 if dones[t][j] else 1.0
            delta = rewards[t][j] + gamma * next_v * mask - values[t][j]
            gae = delta + gamma * lam * mask * gae
            adv[t][j] = gae
            ret[t][j] = gae + values[t][j]
    return np.array(adv), np.array(ret)


def random_batch(
    rng: np.random.Generator, t_max: int = 13, n: int = 7
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    lengths = rng.integers(0, t_max + 1, size=n)
    lengths[0] = t_max  # at least one full stream
    valid = np.arange(t_max)[:, None] < lengths[None, :]
    rewards = rng.standard_normal((t_max, n)).astype(np.float32) * valid
    values = rng.standard_normal((t_max, n)).astype(np.float32) * valid
    dones = (rng.random((t_max, n)) < 0.2) & valid
    boot = rng.standard_normal(n).astype(np.float32)
    # a stream whose last entry ends an episode bootstraps from 0 (SampleBatch convention)
    for j in range(n):
        if lengths[j] and dones[lengths[j] - 1, j]:
            boot[j] = 0.0
    return rewards, values, dones, valid, boot, lengths


@pytest.mark.parametrize("seed", range(5))
@pytest.mark.parametrize(("gamma", "lam"), [(0.99, 0.95), (1.0, 1.0), (0.9, 0.0)])
def test_gae_matches_reference_loop(seed: int, gamma: float, lam: float) -> None:
    rewards, values, dones, valid, boot, lengths = random_batch(np.random.default_rng(seed))
    adv, ret = compute_gae(rewards, values, dones, valid, boot, gamma=gamma, lam=lam)
    ref_adv, ref_ret = reference_gae(
        rewards.tolist(), values.tolist(), dones.tolist(), lengths.tolist(), boot.tolist(), gamma, lam
    )
    np.testing.assert_allclose(adv, ref_adv, atol=1e-6, rtol=1e-6)
    np.testing.assert_allclose(ret, ref_ret, atol=1e-6, rtol=1e-6)
    assert not adv[~valid].any() and not ret[~valid].any()


def test_gae_known_answer() -> None:
    # one stream: r = [1, 0, 2], V = [0.5, 0.5, 0.5], done at t=1, bootstrap 1.0 after t=2
    rewards = np.array([[1.0], [0.0], [2.0]])
    values = np.full((3, 1), 0.5)
    dones = np.array([[False], [True], [False]])
    valid = np.ones((3, 1), dtype=bool)
    adv, ret = compute_gae(rewards, values, dones, valid, np.array([1.0]), gamma=0.5, lam=0.5)
    d2 = 2.0 + 0.5 * 1.0 - 0.5  # 2.0
    d1 = 0.0 - 0.5  # terminal
    d0 = 1.0 + 0.5 * 0.5 - 0.5  # 0.75
    expected = np.array([d0 + 0.25 * d1, d1, d2])
    np.testing.assert_allclose(adv[:, 0], expected, atol=1e-7)
    np.testing.assert_allclose(ret[:, 0], expected + 0.5, atol=1e-7)


def test_padding_in_the_middle_is_refused() -> None:
    valid = np.array([[True, True], [False, True], [True, True]])
    with pytest.raises(ValueError, match="stream 0 has a valid entry at t=2"):
        check_padding(valid)


def test_shape_mismatch_names_the_shapes() -> None:
    z = np.zeros((3, 2))
    with pytest.raises(ValueError, match=r"bootstrap_values must be \(2,\)"):
        compute_gae(z, z, z.astype(bool), z == 0, np.zeros(3), gamma=0.9, lam=0.9)


@pytest.mark.parametrize("seed", range(3))
def test_advantage_normalisation_matches_loop(seed: int) -> None:
    rng = np.random.default_rng(seed)
    adv = rng.standard_normal((9, 5)) * 3 + 1
    valid = rng.random((9, 5)) < 0.6
    out = normalize_advantages(adv, valid)
    vals = [adv[t, n] for t in range(9) for n in range(5) if valid[t, n]]
    mean = sum(vals) / len(vals)
    std = (sum((v - mean) ** 2 for v in vals) / len(vals)) ** 0.5
    for t in range(9):
        for n in range(5):
            want = (adv[t, n] - mean) / (std + 1e-5) if valid[t, n] else 0.0
            assert abs(out[t, n] - want) < 1e-6
