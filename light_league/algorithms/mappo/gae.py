"""Generalised advantage estimation over the :class:`SampleBatch` layout.

Arrays are time-major ``(T, N)``: one column per stream, valid entries first, padding after.
Values are in return units (the reference denormalises its critic's output before GAE; our
batches already carry denormalised values). For a valid entry ``t`` of stream ``n``::

    next_v  = values[t + 1, n]   if entry t + 1 is valid   else bootstrap_values[n]
    nonterm = 1 - dones[t, n]
    delta   = rewards[t, n] + gamma * nonterm * next_v - values[t, n]
    gae_t   = delta + gamma * lam * nonterm * gae_{t+1}        (gae_{t+1} = 0 past the stream's end)
    return  = gae_t + values[t, n]

Padding gets advantage and return 0. ``dones`` inside a stream cut the recursion, so one stream
may hold several episodes.
"""

from __future__ import annotations

import numpy as np

#: added to the standard deviation when normalising advantages (reference value)
ADV_NORM_EPS = 1e-5


def check_padding(valid: np.ndarray) -> None:
    """Raise unless every stream's valid entries come first (padding only at the end)."""
    v = np.asarray(valid, dtype=bool)
    if v.ndim != 2:
        raise ValueError(f"valid must be (T, N), got shape {v.shape}")
    holes = v[1:] & ~v[:-1]
    if holes.any():
        t, n = np.argwhere(holes)[0]
        raise ValueError(
            f"stream {n} has a valid entry at t={t + 1} after padding at t={t}; "
            "SampleBatch streams must be padded at the end only"
        )


def compute_gae(
    rewards: np.ndarray,
    values: np.ndarray,
    dones: np.ndarray,
    valid: np.ndarray,
    bootstrap_values: np.ndarray,
    *,
    gamma: float,
    lam: float,
) -> tuple[np.ndarray, np.ndarray]:
    """``(advantages, returns)``, both ``(T, N)`` float32, zero on padding."""
    check_padding(valid)
    r = np.asarray(rewards, dtype=np.float64)
    v = np.asarray(values, dtype=np.float64)
    shape = r.shape
    if v.shape != shape or np.shape(dones) != shape or np.shape(valid) != shape:
        raise ValueError(
            f"rewards, values, dones and valid must share one (T, N) shape, got {shape}, {v.shape}, "
            f"{np.shape(dones)}, {np.shape(valid)}"
        )
    boot = np.asarray(bootstrap_values, dtype=np.float64)
    if boot.shape != (shape[1],):
        raise ValueError(f"bootstrap_values must be ({shape[1]},), got {boot.shape}")
    nonterm = 1.0 - np.asarray(dones, dtype=np.float64)
    ok = np.asarray(valid, dtype=bool)
    adv = np.zeros(shape, dtype=np.float64)
    last = np.zeros(shape[1], dtype=np.float64)
    for t in range(shape[0] - 1, -1, -1):
        next_valid = ok[t + 1] if t + 1 < shape[0] else np.zeros(shape[1], dtype=bool)
        next_v = np.where(next_valid, v[t + 1] if t + 1 < shape[0] else 0.0, boot)
        delta = r[t] + gamma * nonterm[t] * next_v - v[t]
        last = delta + gamma * lam * nonterm[t] * np.where(next_valid, last, 0.0)
        adv[t] = np.where(ok[t], last, 0.0)
        last = adv[t]
    returns = np.where(ok, adv + v, 0.0)
    return adv.astype(np.float32), returns.astype(np.float32)


def normalize_advantages(advantages: np.ndarray, valid: np.ndarray, eps: float = ADV_NORM_EPS) -> np.ndarray:
    """``(A - mean) / (std + eps)`` with mean and (population) std over valid entries; padding stays 0."""
    a = np.asarray(advantages, dtype=np.float64)
    ok = np.asarray(valid, dtype=bool)
    if not ok.any():
        return np.zeros_like(a, dtype=np.float32)
    sel = a[ok]
    out = np.where(ok, (a - sel.mean()) / (sel.std() + eps), 0.0)
    return out.astype(np.float32)
