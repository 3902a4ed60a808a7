"""Fixed test policies shared by the unit tests (imported as ``from fixed_policies import Pure``)."""

from __future__ import annotations

from typing import Any

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


def random_tabular(env: str, seed: int) -> Any:
    """A TabularPolicy of ``env`` (an OpenSpiel-checked game) with a random mixed action at each of
    its information states (Dirichlet(1) over the legal actions)."""
    from light_league.algorithms import game_tree
    from light_league.algorithms.tabular import TabularPolicy

    table = game_tree.infostate_table(env)
    rng = np.random.default_rng(seed)
    obs, mask = np.concatenate(table.obs), np.concatenate(table.mask)
    probs = np.where(mask, rng.dirichlet(np.ones(mask.shape[1]), size=len(mask)), 0.0)
    return TabularPolicy(obs, probs / probs.sum(axis=1, keepdims=True))
