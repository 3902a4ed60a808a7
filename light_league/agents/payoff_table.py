"""The evaluation payoff table of the population.

For every ordered pairing (``a`` in seat 0, ``b`` in seat 1) it keeps the sum of seat 0's outcomes
and the number of games. ``a``'s win rate against ``b`` averages both seat orders, so the table
satisfies ``W[a, b] + W[b, a] = 1`` and the meta-game ``W - 0.5`` is antisymmetric (zero-sum).
A pairing never played is NaN with a count of 0 — unknown, never a made-up number.

Sums and counts live in two square numpy arrays indexed by agent (grown by doubling), so the
whole table over a population of ``n`` comes out in a few array operations instead of ``n²``
dictionary look-ups. Pairs entered as exact expected payoffs (poker by tree walk) are marked
``exact``: no sampling uncertainty. :meth:`PayoffTable.ratings` fits every agent's Elo to the
table (Bradley-Terry).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from light_league.game_theory.elo import bradley_terry_fit


class PayoffTable:
    def __init__(self) -> None:
        self._index: dict[str, int] = {}
        self._sum = np.zeros((0, 0))  #: [seat0, seat1] sum of seat 0's outcomes
        self._n = np.zeros((0, 0))  #: [seat0, seat1] games
        #: unordered pairs ``(min, max)`` whose payoff is exact: no sampling uncertainty
        self.exact: set[tuple[str, str]] = set()

    def _slot(self, agent: str) -> int:
        """Row of ``agent``, adding it (and growing the arrays) when new."""
        slot = self._index.get(agent)
        if slot is None:
            slot = self._index[agent] = len(self._index)
            if slot >= self._n.shape[0]:
                size = max(8, 2 * self._n.shape[0])
                for name in ("_sum", "_n"):
                    grown = np.zeros((size, size))
                    old = getattr(self, name)
                    grown[: old.shape[0], : old.shape[1]] = old
                    setattr(self, name, grown)
        return slot

    def add(self, seat0: str, seat1: str, outcome_sum: float, games: float) -> None:
        """Add ``games`` games of ``seat0`` vs ``seat1`` whose seat-0 outcomes sum to ``outcome_sum``."""
        if games < 0 or not 0.0 <= outcome_sum <= games + 1e-9:
            raise ValueError(f"need 0 <= outcome_sum <= games, got {outcome_sum} over {games} games")
        i, j = self._slot(seat0), self._slot(seat1)
        self._sum[i, j] += outcome_sum
        self._n[i, j] += games

    def games(self, a: str, b: str) -> float:
        i, j = self._index.get(a), self._index.get(b)
        if i is None or j is None:
            return 0.0
        return float(self._n[i, j] + self._n[j, i])

    def win_rate(self, a: str, b: str) -> float:
        """``a``'s mean outcome against ``b`` over both seat orders; NaN when never played."""
        if a == b:
            return 0.5
        n = self.games(a, b)
        if n == 0:
            return float("nan")
        i, j = self._index[a], self._index[b]
        return float((self._sum[i, j] + self._n[j, i] - self._sum[j, i]) / n)

    def _sub(self, ids: list[str]) -> tuple[np.ndarray, np.ndarray]:
        """``(sums, counts)`` over ``ids`` (rows of unknown ids are zero)."""
        rows = np.array([self._index.get(a, -1) for a in ids], dtype=np.int64)
        known = rows >= 0
        sums = np.zeros((len(ids), len(ids)))
        counts = np.zeros((len(ids), len(ids)))
        both = np.ix_(np.flatnonzero(known), np.flatnonzero(known))
        sums[both] = self._sum[np.ix_(rows[known], rows[known])]
        counts[both] = self._n[np.ix_(rows[known], rows[known])]
        return sums, counts

    def matrix(self, ids: list[str]) -> tuple[np.ndarray, np.ndarray]:
        """``(win_rates, games)`` over ``ids``; diagonal 0.5 (a policy against itself over both seats)."""
        sums, counts = self._sub(ids)
        games = counts + counts.T
        won = sums + counts.T - sums.T
        with np.errstate(invalid="ignore", divide="ignore"):
            rates = np.where(games > 0, won / games, np.nan)
        np.fill_diagonal(rates, 0.5)
        np.fill_diagonal(games, 0.0)
        return rates, games

    def agents(self) -> list[str]:
        """Every agent that has a pairing in the table, in order of first appearance."""
        return list(self._index)

    def scores(self, ids: list[str]) -> tuple[np.ndarray, np.ndarray]:
        """``(scores, games)`` over ``ids``, both seats: ``scores[i, j]`` is ``i``'s total outcome
        against ``j`` (what a Bradley-Terry fit reads), ``games[i, j]`` their games (symmetric)."""
        sums, counts = self._sub(ids)
        games = counts + counts.T
        scores = sums + counts.T - sums.T
        np.fill_diagonal(games, 0.0)
        np.fill_diagonal(scores, 0.0)
        return scores, games

    def missing(self, ids: list[str]) -> list[tuple[str, str]]:
        """Unplayed pairs ``(ids[i], ids[j])``, ``i < j``, in row-major order."""
        _, counts = self._sub(ids)
        rows, cols = np.nonzero(np.triu((counts + counts.T) == 0, k=1))
        return [(ids[i], ids[j]) for i, j in zip(rows.tolist(), cols.tolist())]

    def forget(self, rows: Sequence[str], cols: Sequence[str]) -> None:
        """Drop the games between ``rows`` and ``cols`` (both seat orders; they become unplayed):
        what the archive no longer needs (the match log keeps them)."""
        i = [self._index[a] for a in rows if a in self._index]
        j = [self._index[b] for b in cols if b in self._index]
        for name in ("_sum", "_n"):
            array = getattr(self, name)
            array[np.ix_(i, j)] = 0.0
            array[np.ix_(j, i)] = 0.0
        gone, kept = set(rows), set(cols)  # the exact marks of those cells go too
        self.exact = {
            (a, b) for a, b in self.exact if not ((a in gone and b in kept) or (b in gone and a in kept))
        }

    def add_exact(self, seat0: str, seat1: str, value: float, games: float) -> None:
        """An exact expected outcome ``value`` (seat 0's) entered as ``games`` nominal games."""
        self.add(seat0, seat1, value * games, games)
        self.exact.add((min(seat0, seat1), max(seat0, seat1)))

    def exact_cells(self, ids: list[str]) -> np.ndarray:
        """(n, n) bool: the cells of ``ids`` whose payoff is exact."""
        exact = np.array([[(min(a, b), max(a, b)) in self.exact for b in ids] for a in ids], dtype=bool)
        return exact.reshape(len(ids), len(ids))

    def ratings(
        self, ids: list[str], fixed: Mapping[str, float], prior_rating: float, *, everyone: bool = True
    ) -> tuple[dict[str, float], dict[str, float]]:
        """Fitted Elo of ``ids`` and each rating's standard error: Bradley-Terry over every game in
        the table (``fixed``: the ratings held, the anchor). Every agent ever entered takes part (a
        member evicted from the pool still links those it played), unless ``everyone`` is False:
        then the games among ``ids`` alone."""
        agents = list(dict.fromkeys([*self.agents(), *ids])) if everyone else list(ids)
        scores, games = self.scores(agents)
        held = np.array([fixed.get(a, np.nan) for a in agents], dtype=np.float64)
        fitted, se = bradley_terry_fit(scores, games, held, prior_rating=prior_rating)
        wanted = set(ids)
        rows = [
            (a, float(r), float(e)) for a, r, e in zip(agents, fitted.tolist(), se.tolist()) if a in wanted
        ]
        return {a: r for a, r, _ in rows}, {a: e for a, _, e in rows}

    def state_dict(self) -> dict[str, Any]:
        agents = list(self._index)
        rows, cols = np.nonzero(self._n[: len(agents), : len(agents)] > 0)
        return {
            "pairs": [
                [agents[i], agents[j], float(self._sum[i, j]), float(self._n[i, j])]
                for i, j in zip(rows.tolist(), cols.tolist())
            ]
        }

    @classmethod
    def from_state_dict(cls, state: dict[str, Any]) -> PayoffTable:
        table = cls()
        for a, b, s, n in state["pairs"]:
            table.add(str(a), str(b), float(s), float(n))
        return table
