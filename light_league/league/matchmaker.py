"""Opponent selection for a focal agent: PFSP by default, or the league's Nash mixture.

Candidates are every pool member except the focal agent itself (the focal agent may be a live
learner that is not in the pool). Weights, in order of precedence:

1. **Nash** (after :meth:`LeagueMatchmaker.set_nash_weights`): probability proportional to each
   candidate's Nash weight; members absent from the mixture or with zero weight are never
   drawn. If the mixture gives no mass to any candidate (e.g. the focal agent is its whole
   support), that call uses the PFSP weights below and logs a warning.
2. **Custom** (after :meth:`LeagueMatchmaker.set_weight_function`): ``fn(win_rate)`` per
   candidate.
3. **PFSP hard-first** (default): ``(1 - win_rate) ** pfsp_temperature``, via
   :mod:`light_league.game_theory.pfsp`.

Win rates come from the match database (0.5 for an unplayed opponent). When every weight is
zero the draw is uniform, as in AlphaStar.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Callable, Mapping

import numpy as np

from light_league.agents.agent_pool import AgentPool
from light_league.agents.match_database import MatchDatabase
from light_league.errors import did_you_mean
from light_league.game_theory.pfsp import UNIFORM_FALLBACK_BELOW, pfsp_probabilities

log = logging.getLogger(__name__)

WeightFunction = Callable[[float], float]


class LeagueMatchmaker:
    """Samples opponents for a focal agent from an :class:`AgentPool`."""

    def __init__(
        self,
        agent_pool: AgentPool,
        match_database: MatchDatabase,
        pfsp_temperature: float = 1.0,
        *,
        seed: int | None = None,
    ) -> None:
        if not (math.isfinite(pfsp_temperature) and pfsp_temperature >= 0.0):
            raise ValueError(f"pfsp_temperature must be a finite number >= 0, got {pfsp_temperature}")
        self.agent_pool = agent_pool
        self.match_database = match_database
        self.pfsp_temperature = float(pfsp_temperature)
        self.rng = np.random.default_rng(seed)
        self._weight_fn: WeightFunction | None = None
        self._nash: dict[str, float] | None = None

    def set_weight_function(self, fn: WeightFunction | None) -> None:
        """Use ``fn(win_rate) -> weight`` for PFSP; None restores hard-first ``(1 - x) ** p``."""
        if fn is not None and not callable(fn):
            raise TypeError(f"weight function must be callable or None, got {fn!r}")
        self._weight_fn = fn

    def set_nash_weights(self, weights: Mapping[str, float] | None) -> None:
        """Sample in proportion to these Nash weights (agent id -> weight); None reverts to PFSP."""
        if weights is None:
            self._nash = None
            return
        cleaned: dict[str, float] = {}
        for agent_id, weight in weights.items():
            if agent_id not in self.agent_pool:
                hint = did_you_mean(agent_id, self.agent_pool.ids())
                raise ValueError(f"Nash weight for {agent_id!r}, which is not in the pool{hint}")
            if not (math.isfinite(weight) and weight >= -1e-9):
                raise ValueError(f"Nash weight of {agent_id!r} must be a finite number >= 0, got {weight}")
            cleaned[agent_id] = max(float(weight), 0.0)
        self._nash = cleaned

    def candidates(self, focal_id: str) -> list[str]:
        """Pool members the focal agent may face, in pool order."""
        return [agent_id for agent_id in self.agent_pool.ids() if agent_id != focal_id]

    def opponent_probabilities(self, focal_id: str) -> dict[str, float]:
        """Candidate id -> probability of being drawn (empty when there is no candidate)."""
        ids = self.candidates(focal_id)
        if not ids:
            return {}
        if self._nash is not None:
            nash = np.array([self._nash.get(c, 0.0) for c in ids])
            if nash.sum() >= UNIFORM_FALLBACK_BELOW:
                return dict(zip(ids, (nash / nash.sum()).tolist()))
            log.warning(
                "Nash mixture gives no weight to any opponent of %s; using PFSP for this draw", focal_id
            )
        return dict(zip(ids, self._pfsp(focal_id, ids).tolist()))

    def _pfsp(self, focal_id: str, ids: list[str]) -> np.ndarray:
        known = self.match_database.win_rates_for(focal_id)
        rates = np.array([known.get(c, 0.5) for c in ids])
        if self._weight_fn is None:
            return pfsp_probabilities(rates, "hard", self.pfsp_temperature)
        weights = np.array([float(self._weight_fn(float(x))) for x in rates])
        bad = [(c, w) for c, w in zip(ids, weights) if not (math.isfinite(w) and w >= 0.0)]
        if bad:
            raise ValueError(
                f"weight function must return finite weights >= 0, got {bad[:3]} (opponent, weight)"
            )
        total = weights.sum()
        if total < UNIFORM_FALLBACK_BELOW:
            return np.full(len(ids), 1.0 / len(ids))
        return weights / total

    def select_opponent(self, focal_id: str, rng: np.random.Generator | None = None) -> str | None:
        """Draw one opponent id for ``focal_id``; None when the pool holds no other member."""
        probs = self.opponent_probabilities(focal_id)
        if not probs:
            return None
        generator = self.rng if rng is None else rng
        ids = list(probs)
        return ids[int(generator.choice(len(ids), p=np.fromiter(probs.values(), dtype=np.float64)))]
