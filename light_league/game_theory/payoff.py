"""AlphaStar's decayed payoff bookkeeping.

Counters ``wins, draws, losses, games`` are kept per ordered pair ``(home, away)``. Each new game
between two players first multiplies the counters of both ``(home, away)`` and ``(away, home)``
by ``decay`` and then adds the game to both, seen from each side. With ``decay = 0.99`` the
estimate ``win_rate = (wins + 0.5 * draws) / games`` is an exponential moving average over
roughly the last 100 games of the pair; an unplayed pair has win rate 0.5.

Outcomes are home's score in [0, 1]: 1 a win, 0 a loss, exactly 0.5 a draw. Any other value
counts as a fractional win ``outcome`` plus a fractional loss ``1 - outcome`` (no draw), so the
win rate is always the decayed mean outcome.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np

Pair = tuple[str, str]

_COUNTERS = ("wins", "draws", "losses", "games")


def _credit(outcome: float) -> tuple[float, float, float]:
    """(wins, draws, losses) credited to the player who scored ``outcome``."""
    if outcome == 0.5:
        return 0.0, 1.0, 0.0
    return outcome, 0.0, 1.0 - outcome


def _check_outcomes(outcomes: np.ndarray) -> None:
    if outcomes.size and (not np.all(np.isfinite(outcomes)) or outcomes.min() < 0.0 or outcomes.max() > 1.0):
        raise ValueError(f"outcomes must lie in [0, 1] (1 win, 0.5 draw, 0 loss), got {outcomes.tolist()}")


class DecayedPayoff:
    """Decayed win/draw/loss counters per ordered pair, as in AlphaStar's league ``Payoff``."""

    def __init__(self, decay: float = 0.99) -> None:
        if not (0.0 < decay <= 1.0):
            raise ValueError(f"decay must lie in (0, 1], got {decay}")
        self.decay = float(decay)
        self._stats: dict[Pair, np.ndarray] = {}

    def _row(self, pair: Pair) -> np.ndarray:
        if pair not in self._stats:
            self._stats[pair] = np.zeros(4)
        return self._stats[pair]

    def update(self, home: str, away: str, outcome: float) -> None:
        """Decay both directions of the pair, then add one game with home's ``outcome``."""
        _check_outcomes(np.asarray([outcome], dtype=np.float64))
        forward, backward = self._row((home, away)), self._row((away, home))
        forward *= self.decay
        backward *= self.decay
        won, drew, lost = _credit(outcome)
        forward += (won, drew, lost, 1.0)
        backward += (lost, drew, won, 1.0)

    def update_many(self, home: str, away: str, outcomes: Iterable[float] | np.ndarray) -> None:
        """Add a batch of games in order; equal to calling :meth:`update` once per outcome."""
        scores = np.asarray(list(outcomes), dtype=np.float64).reshape(-1)
        _check_outcomes(scores)
        k = scores.size
        if k == 0:
            return
        # Each game decays a pair once per direction touching it: twice when home == away.
        factor = self.decay ** (2 if home == away else 1)
        weights = factor ** np.arange(k - 1, -1, -1, dtype=np.float64)
        credit = np.array([_credit(float(s)) for s in scores])
        home_view = np.column_stack([credit, np.ones(k)])
        away_view = np.column_stack([credit[:, 2], credit[:, 1], credit[:, 0], np.ones(k)])
        forward, backward = self._row((home, away)), self._row((away, home))
        forward *= factor**k
        if home != away:
            backward *= factor**k
        forward += weights @ home_view
        backward += weights @ away_view

    def forget(self, players: set[str]) -> None:
        """Drop the counters of every pair with a player in ``players``."""
        for pair in [p for p in self._stats if p[0] in players or p[1] in players]:
            del self._stats[pair]

    def _counter(self, home: str, away: str, index: int) -> float:
        row = self._stats.get((home, away))
        return 0.0 if row is None else float(row[index])

    def wins(self, home: str, away: str) -> float:
        return self._counter(home, away, 0)

    def draws(self, home: str, away: str) -> float:
        return self._counter(home, away, 1)

    def losses(self, home: str, away: str) -> float:
        return self._counter(home, away, 2)

    def games(self, home: str, away: str) -> float:
        """Decayed number of games of the pair (0.0 when never played)."""
        return self._counter(home, away, 3)

    def win_rate(self, home: str, away: str) -> float:
        """``(wins + 0.5 * draws) / games``; 0.5 for a pair that never played."""
        row = self._stats.get((home, away))
        if row is None or row[3] <= 0.0:
            return 0.5
        return float((row[0] + 0.5 * row[1]) / row[3])

    def win_rate_matrix(self, homes: list[str], aways: list[str]) -> np.ndarray:
        """``(len(homes), len(aways))`` matrix of :meth:`win_rate`."""
        return np.array([[self.win_rate(h, a) for a in aways] for h in homes], dtype=np.float64).reshape(
            len(homes), len(aways)
        )

    def state_dict(self) -> dict[str, Any]:
        """JSON-able state: the decay and one ``[home, away, wins, draws, losses, games]`` per pair."""
        return {
            "decay": self.decay,
            "pairs": [[h, a, *(float(v) for v in row)] for (h, a), row in self._stats.items()],
        }

    @classmethod
    def from_state_dict(cls, state: dict[str, Any]) -> DecayedPayoff:
        """Rebuild from :meth:`state_dict` output."""
        try:
            payoff = cls(decay=float(state["decay"]))
            for entry in state["pairs"]:
                home, away, *values = entry
                if len(values) != len(_COUNTERS):
                    raise ValueError(f"expected {len(_COUNTERS)} counters, got {len(values)}")
                payoff._stats[(str(home), str(away))] = np.asarray(values, dtype=np.float64)
        except (KeyError, TypeError, ValueError) as exc:
            raise ValueError(
                f"payoff state must be DecayedPayoff.state_dict() output ({exc.__class__.__name__}: {exc})"
            ) from None
        return payoff
