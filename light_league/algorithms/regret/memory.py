"""A reservoir of training samples: a uniform sample of every sample ever added, at most ``capacity``.

Deep CFR's memories: each network learns from a reservoir, so a sample of iteration ``t`` is
kept with the same chance as one of iteration ``t' > t`` however many came after, and the
weighted regression over it estimates the (weighted) average over all iterations.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch


class Reservoir:
    """Named arrays of one row per sample; rows are added and drawn together."""

    def __init__(self, capacity: int, shapes: dict[str, tuple[tuple[int, ...], Any]], *, seed: int) -> None:
        self.capacity = capacity
        self.shapes = shapes
        self.arrays = {k: np.zeros((capacity, *shape), dtype=dtype) for k, (shape, dtype) in shapes.items()}
        self.size = 0
        self.seen = 0  #: samples ever offered
        self.rng = np.random.default_rng(seed)

    def add(self, rows: dict[str, np.ndarray]) -> None:
        """Offer ``rows`` (every array the same length): the first ``capacity`` samples ever
        offered are kept, then sample ``c`` replaces a random slot with chance ``capacity / (c + 1)``."""
        n = len(next(iter(rows.values())))
        if n == 0:
            return
        counts = self.seen + np.arange(n)
        slots = np.where(
            counts < self.capacity,
            counts,
            (self.rng.random(n) * (counts + 1)).astype(np.int64),
        )
        keep = slots < self.capacity
        for k, a in rows.items():
            self.arrays[k][slots[keep]] = a[keep]
        self.seen += n
        self.size = min(self.capacity, self.seen)

    def sample(self, n: int, device: torch.device) -> dict[str, torch.Tensor]:
        """``n`` rows drawn uniformly (with replacement) from what is kept, as tensors."""
        idx = self.rng.integers(0, self.size, size=n)
        return {k: torch.from_numpy(a[idx]).to(device) for k, a in self.arrays.items()}

    def state_dict(self) -> dict[str, Any]:
        """The filled rows (tensors), the counters and the generator: what resumes it exactly."""
        return {
            "arrays": {k: torch.from_numpy(a[: self.size].copy()) for k, a in self.arrays.items()},
            "seen": self.seen,
            "rng": self.rng.bit_generator.state,
        }

    def load_state_dict(self, state: dict[str, Any]) -> None:
        for k, t in state["arrays"].items():
            rows = t.numpy()
            if rows.shape[1:] != self.arrays[k].shape[1:] or len(rows) > self.capacity:
                raise ValueError(
                    f"memory {k!r} holds rows of shape {tuple(rows.shape)}, this learner's hold "
                    f"{(self.capacity, *self.arrays[k].shape[1:])}: was it saved with other settings?"
                )
            self.arrays[k][: len(rows)] = rows
        self.seen = int(state["seen"])
        self.size = min(self.capacity, self.seen)
        self.rng.bit_generator.state = state["rng"]
