"""Fixed test policies shared by the unit tests (imported as ``from fixed_policies import Pure``)."""

from __future__ import annotations

import numpy as np


class Pure:
    """Always the same legal action (the first legal one when ``action`` is not)."""

    def __init__(self, action: int) -> None:
        self.action = action

    def log_probs(self, obs: np.ndarray, mask: np.ndarray, agent_idx: np.ndarray) -> np.ndarray:
        choice = np.where(mask[:, self.action], self.action, np.argmax(mask, axis=1))
        out = np.full(mask.shape, -np.inf)
        out[np.arange(len(mask)), choice] = 0.0
        return out
