"""Counter-based random numbers: the same draw for the same key, whatever the batch size.

A draw is a pure function of ``(seed, episode, step, stream)``: the key is folded through
splitmix64 (Steele, Lea and Flood, "Fast splittable pseudorandom number generators", OOPSLA 2014)
and the top 53 bits become a float in ``[0, 1)``. The vectorised numpy version (for the batched
envs) and the plain-Python version (for the single-game reference envs) give bit-identical
results, which is what makes game ``b`` of a batch replay exactly as a single game.
"""

from __future__ import annotations

import numpy as np

_MASK64 = (1 << 64) - 1
_GAMMA = 0x9E3779B97F4A7C15
_MUL1 = 0xBF58476D1CE4E5B9
_MUL2 = 0x94D049BB133111EB
_TO_UNIT = 2.0**-53


def splitmix64(x: int) -> int:
    """One splitmix64 output for the 64-bit integer ``x`` (plain Python)."""
    z = (x + _GAMMA) & _MASK64
    z = ((z ^ (z >> 30)) * _MUL1) & _MASK64
    z = ((z ^ (z >> 27)) * _MUL2) & _MASK64
    return z ^ (z >> 31)


def splitmix64_np(x: np.ndarray) -> np.ndarray:
    """Vectorised :func:`splitmix64` on a ``uint64`` array (wrap-around arithmetic)."""
    z = x.astype(np.uint64) + np.uint64(_GAMMA)
    z = (z ^ (z >> np.uint64(30))) * np.uint64(_MUL1)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(_MUL2)
    return z ^ (z >> np.uint64(31))


def uniform(seed: int, episode: int, step: int, stream: int) -> float:
    """A float in ``[0, 1)`` determined by the key (plain Python)."""
    h = splitmix64(seed & _MASK64)
    h = splitmix64(h ^ (episode & _MASK64))
    h = splitmix64(h ^ (step & _MASK64))
    h = splitmix64(h ^ (stream & _MASK64))
    return (h >> 11) * _TO_UNIT


def uniform_np(
    seed: np.ndarray, episode: np.ndarray, step: np.ndarray | int, stream: np.ndarray | int
) -> np.ndarray:
    """Vectorised :func:`uniform`: the four keys broadcast to one shape of floats."""
    h = splitmix64_np(np.asarray(seed, dtype=np.uint64))
    h = splitmix64_np(h ^ np.asarray(episode, dtype=np.uint64))
    h = splitmix64_np(h ^ np.asarray(step, dtype=np.uint64))
    h = splitmix64_np(h ^ np.asarray(stream, dtype=np.uint64))
    return (h >> np.uint64(11)).astype(np.float64) * _TO_UNIT


def check_seed(seed: int) -> int:
    """Validate a user seed (a non-negative integer below 2**63)."""
    if not isinstance(seed, int | np.integer) or isinstance(seed, bool) or not 0 <= int(seed) < 2**63:
        raise ValueError(f"seed must be an integer in [0, 2**63), got {seed!r}; pass e.g. seed=0")
    return int(seed)


def fresh_seed() -> int:
    """A seed drawn from the operating system, for ``reset(seed=None)``."""
    return int(np.random.SeedSequence().entropy % (2**62))  # type: ignore[operator]
