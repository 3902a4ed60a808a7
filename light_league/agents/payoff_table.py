"""The evaluation payoff table of the population.

For every ordered pairing (``a`` in seat 0, ``b`` in seat 1) it keeps the sum of seat 0's outcomes
and the number of games. ``a``'s win rate against ``b`` averages both seat orders, so the table
satisfies ``W[a, b] + W[b, a] = 1`` and the meta-game ``W - 0.5`` is antisymmetric (zero-sum).
A pairing never played is NaN with a count of 0 — unknown, never a made-up number.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

import numpy as np


class PayoffTable:
    def __init__(self) -> None:
        self._sum: dict[tuple[str, str], float] = defaultdict(float)
        self._n: dict[tuple[str, str], float] = defaultdict(float)

    def add(self, seat0: str, seat1: str, outcome_sum: float, games: float) -> None:
        """Add ``games`` games of ``seat0`` vs ``seat1`` whose seat-0 outcomes sum to ``outcome_sum``."""
        if games < 0 or not 0.0 <= outcome_sum <= games + 1e-9:
            raise ValueError(f"need 0 <= outcome_sum <= games, got {outcome_sum} over {games} games")
        self._sum[(seat0, seat1)] += outcome_sum
        self._n[(seat0, seat1)] += games

    def games(self, a: str, b: str) -> float:
        return self._n.get((a, b), 0.0) + self._n.get((b, a), 0.0)

    def win_rate(self, a: str, b: str) -> float:
        """``a``'s mean outcome against ``b`` over both seat orders; NaN when never played."""
        if a == b:
            return 0.5
        n = self.games(a, b)
        if n == 0:
            return float("nan")
        won = self._sum.get((a, b), 0.0) + (self._n.get((b, a), 0.0) - self._sum.get((b, a), 0.0))
        return won / n

    def matrix(self, ids: list[str]) -> tuple[np.ndarray, np.ndarray]:
        """``(win_rates, games)`` over ``ids``; diagonal 0.5 (a policy against itself over both seats)."""
        n = len(ids)
        rates = np.full((n, n), np.nan)
        games = np.zeros((n, n))
        for i, a in enumerate(ids):
            for j, b in enumerate(ids):
                rates[i, j] = self.win_rate(a, b)
                games[i, j] = self.games(a, b) if i != j else 0.0
        return rates, games

    def missing(self, ids: list[str]) -> list[tuple[str, str]]:
        return [(a, b) for i, a in enumerate(ids) for b in ids[i + 1 :] if self.games(a, b) == 0]

    def state_dict(self) -> dict[str, Any]:
        return {"pairs": [[a, b, self._sum[(a, b)], self._n[(a, b)]] for (a, b) in self._n]}

    @classmethod
    def from_state_dict(cls, state: dict[str, Any]) -> PayoffTable:
        table = cls()
        for a, b, s, n in state["pairs"]:
            table._sum[(a, b)] = float(s)
            table._n[(a, b)] = float(n)
        return table
