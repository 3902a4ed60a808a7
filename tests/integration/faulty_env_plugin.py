"""A plugin env for the fault tests (test_env_faults.py): rock-paper-scissors through the PettingZoo
adapter that goes wrong once the file ``marker`` exists (``fault``: ``inf_reward``, ``nan_obs`` or
``hang``). A module of the repository, so that Ray workers (whose path holds the driver's working
directory) import it too: ``pettingzoo:tests.integration.faulty_env_plugin:FaultyRPS``."""

from __future__ import annotations

import os
import time
from typing import Any

import numpy as np

from envs.matrix_games import MatrixGameParallelEnv


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
        return obs, infos

    def step(self, actions: dict[str, int]) -> Any:
        obs, rew, term, trunc, infos = super().step(actions)
        if self._bad() and self.fault == "inf_reward":
            rew["player_1"] = float("inf")
        if self._bad() and self.fault == "hang":
            time.sleep(3600)
        return obs, rew, term, trunc, infos
