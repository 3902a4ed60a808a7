"""A plugin env for the fault tests (test_env_faults.py): rock-paper-scissors through the PettingZoo
adapter that goes wrong once the file ``marker`` exists (``fault``: ``inf_reward``, ``nan_obs``,
``hang``, ``raise`` (its step raises) or ``no_legal_action`` (player_0 must act with every action
masked)). A module of the repository, so that Ray workers (whose path holds the driver's working
directory) import it too: ``pettingzoo:tests.integration.faulty_env_plugin:FaultyRPS``."""

from __future__ import annotations

import os
import time
from typing import Any

import numpy as np

from light_league.envs.matrix_games import MatrixGameParallelEnv

#: the end of the ``raise`` fault's message, which the run's error line must carry
ENV_OWN_WORDS = "the payoff server refused the connection (errno 111)"


class FaultyRPS(MatrixGameParallelEnv):
    def __init__(self, *, fault: str, marker: str) -> None:
        super().__init__(game="rps")
        self.fault, self.marker = fault, marker

    def _bad(self) -> bool:
        return os.path.exists(self.marker)

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> Any:
        obs, infos = super().reset(seed=seed, options=options)
        if self._bad() and self.fault == "nan_obs":
            obs["player_0"] = np.full(1, np.nan, dtype=np.float32)
        if self._bad() and self.fault == "no_legal_action":
            infos["player_0"]["action_mask"] = np.zeros_like(infos["player_0"]["action_mask"])
        return obs, infos

    def step(self, actions: dict[str, int]) -> Any:
        obs, rew, term, trunc, infos = super().step(actions)
        if self._bad() and self.fault == "inf_reward":
            rew["player_1"] = float("inf")
        if self._bad() and self.fault == "hang":
            time.sleep(3600)
        if self._bad() and self.fault == "raise":
            raise RuntimeError(f"FaultyRPS could not step: {ENV_OWN_WORDS}")
        return obs, rew, term, trunc, infos
