"""EloRegistry: Elo ratings of agents with fixed baselines, saved as JSON (the tutorial API).

The arithmetic is :mod:`light_league.game_theory.elo`'s (``expected_score``, ``elo_delta``);
this class keeps the ratings and game counts, applies the sequential update game by game, and
writes and reads them atomically.
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from light_league.errors import CorruptFileError
from light_league.game_theory.elo import DEFAULT_BASELINES, elo_delta
from light_league.utils.atomic import atomic_write_json, read_json
from light_league.utils.checks import is_int, numbers, require


class EloRegistry:
    """Elo ratings of agents, JSON-backed, with baselines that never move.

    ``path``: where :meth:`save` writes (atomically) and from which the registry is loaded when
    the file exists. ``baselines``: name -> fixed rating (``None`` means
    :data:`DEFAULT_BASELINES`; pass ``{}`` for none).
    """

    def __init__(
        self,
        path: str | os.PathLike[str] | None = None,
        k_factor: float = 32.0,
        baselines: Mapping[str, float] | None = None,
        *,
        initial_rating: float = 1000.0,
    ) -> None:
        if not (math.isfinite(k_factor) and k_factor > 0.0):
            raise ValueError(f"k_factor must be a positive number, got {k_factor}")
        self.path = Path(path) if path is not None else None
        self.k_factor = float(k_factor)
        self.initial_rating = float(initial_rating)
        self.baselines = dict(DEFAULT_BASELINES if baselines is None else baselines)
        self._ratings: dict[str, float] = {}
        self._games: dict[str, int] = {}
        if self.path is not None and self.path.exists():
            self._load(self.path)

    def is_baseline(self, name: str) -> bool:
        return name in self.baselines

    def get_rating(self, name: str) -> float:
        """Current rating; a baseline's fixed rating; ``initial_rating`` for an unseen agent."""
        if name in self.baselines:
            return float(self.baselines[name])
        return self._ratings.get(name, self.initial_rating)

    def get_game_count(self, name: str) -> int:
        """Games ``name`` has been rated on (0 for an unseen agent)."""
        return self._games.get(name, 0)

    def all_ratings(self) -> dict[str, float]:
        """Every rated agent and every baseline, name -> rating."""
        ratings = dict(self._ratings)
        ratings.update({name: float(r) for name, r in self.baselines.items()})
        return ratings

    def update(self, agent: str, opponent: str, outcome: float, n_games: int = 1) -> float:
        """Rate ``n_games`` of ``agent`` against ``opponent`` with mean ``outcome`` (agent's view).

        Returns ``agent``'s delta ``K * n_games * (outcome - expected)``. It is added to
        ``agent`` and subtracted from ``opponent``, except that baselines never change.
        """
        if agent == opponent:
            raise ValueError(f"an agent cannot be rated against itself ({agent!r}); pass two different names")
        if not (0.0 <= outcome <= 1.0):
            raise ValueError(f"outcome must lie in [0, 1] (1 win, 0.5 draw, 0 loss), got {outcome}")
        if int(n_games) != n_games or n_games < 1:
            raise ValueError(f"n_games must be a positive integer, got {n_games}")
        r_agent, r_opponent = self.get_rating(agent), self.get_rating(opponent)
        delta = elo_delta(r_agent, r_opponent, outcome, k_factor=self.k_factor, n_games=int(n_games))
        for name, rating, change in ((agent, r_agent, delta), (opponent, r_opponent, -delta)):
            if name not in self.baselines:
                self._ratings[name] = rating + change
            self._games[name] = self._games.get(name, 0) + int(n_games)
        return delta

    def update_games(self, games: list[tuple[str, str, float]]) -> None:
        """Games ``(a, b, a's outcome)`` one by one in the order they finished, each rated from the
        side that is not a baseline (a game between two baselines changes nothing)."""
        for a, b, outcome in games:
            if not self.is_baseline(a):
                self.update(a, b, outcome)
            elif not self.is_baseline(b):
                self.update(b, a, 1.0 - outcome)

    def state_dict(self) -> dict[str, Any]:
        """JSON-able state (baselines included for reference; they are not read back)."""
        return {
            "k_factor": self.k_factor,
            "initial_rating": self.initial_rating,
            "ratings": dict(self._ratings),
            "games": dict(self._games),
            "baselines": dict(self.baselines),
        }

    @staticmethod
    def check_state(state: Any) -> None:
        """Raise ``TypeError`` unless ``state`` is a :meth:`state_dict` (ratings and game counts)."""
        require(isinstance(state, dict), "agents.elo is not an object")
        require(numbers(state["ratings"]), "elo ratings")
        require(numbers(state["games"], is_int), "elo games")

    def save(self, path: str | os.PathLike[str] | None = None) -> Path:
        """Write the registry atomically to ``path`` (default: the constructor's path)."""
        target = Path(path) if path is not None else self.path
        if target is None:
            raise ValueError("EloRegistry.save needs a path: pass one here or to EloRegistry(path=...)")
        atomic_write_json(target, self.state_dict())
        return target

    def _load(self, path: Path) -> None:
        data = read_json(path, what="Elo registry", fix="delete it to start the ratings afresh")
        try:
            self._ratings = {str(k): float(v) for k, v in data["ratings"].items()}
            self._games = {str(k): int(v) for k, v in data["games"].items()}
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise CorruptFileError(
                f"Elo registry {path} lacks valid 'ratings'/'games' ({exc.__class__.__name__}: {exc}); "
                "delete it to start the ratings afresh"
            ) from None
        for name in self.baselines:
            self._ratings.pop(name, None)
