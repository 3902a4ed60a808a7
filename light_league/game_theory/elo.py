"""Elo ratings with fixed baselines.

Standard base-10 Elo on the 400-point scale: the expected score of ``a`` against ``b`` is
``1 / (1 + 10 ** ((r_b - r_a) / 400))``, and after ``n`` games with mean outcome ``s`` (1 win,
0.5 draw, 0 loss) ``a`` moves by ``K * n * (s - expected)``. The opponent moves by the opposite
amount, so an update between two rated agents is zero-sum.

**Baselines** (fixed opponents such as scripted bots) anchor the scale: their ratings never
change, whatever they play. Each env declares its fixed opponents' ratings beside them
(``FIXED_POLICY_RATINGS``, read through ``envs.fixed_policy_ratings``); battalion's are ``random``
at 800 and scripted levels 1 to 5 at 1000, 1100, 1200, 1300 and 1400. :data:`DEFAULT_BASELINES`
keeps those numbers for :class:`EloRegistry` built without ``baselines`` (the league passes its
env's). Agents that have not played yet start at ``initial_rating`` (1000, the level-1 bot).

Two ways to compute it:

* :func:`bradley_terry_ratings` — the **rating** the league reports: a maximum-likelihood
  Bradley-Terry fit on the Elo scale over all games so far, from aggregated pair counts, with
  the baselines held at their fixed ratings. A draw counts as half a win and half a loss (the
  half-credit formulation: the likelihood of a game with score ``s`` is
  ``E ** s * (1 - E) ** (1 - s)``). It depends only on the pair counts, never on the order of the
  games. Every rated agent also plays ``prior_games`` (default 1) virtual draws against a
  virtual opponent rated ``prior_rating`` (1000): a weak prior that keeps the rating of an agent
  with all wins or all losses finite, and fixes the scale's origin when there are no baselines.
  Against 16 real games per pair it moves a rating by a few points at most.
* :class:`EloRegistry` — the classic sequential update below, game by game in the order the games
  finished (kept as a secondary figure: it depends on that order).

Note that Elo assumes transitive strength; on cyclic (rock-paper-scissors-like) populations it
hides the cycle, so read it beside the Nash mixture.
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
import scipy.linalg
from scipy.special import expit

from light_league.errors import CorruptFileError
from light_league.utils.atomic import atomic_write_json, read_json

#: fixed ratings of battalion's built-in opponents (the default of an EloRegistry built without
#: ``baselines``; a league reads its env's declared ratings: ``envs.fixed_policy_ratings``)
DEFAULT_BASELINES: dict[str, float] = {
    "random": 800.0,
    "scripted_l1": 1000.0,
    "scripted_l2": 1100.0,
    "scripted_l3": 1200.0,
    "scripted_l4": 1300.0,
    "scripted_l5": 1400.0,
}

ELO_SCALE = 400.0


def expected_score(rating: float, opponent_rating: float) -> float:
    """Probability-like expected score of a player rated ``rating`` against ``opponent_rating``."""
    return 1.0 / (1.0 + 10.0 ** ((opponent_rating - rating) / ELO_SCALE))


#: virtual draws each rated agent plays against a ``prior_rating`` opponent in the fit
PRIOR_GAMES = 1.0
_NATURAL = math.log(10.0) / ELO_SCALE  #: Elo points -> natural log-odds


def bradley_terry_ratings(
    scores: np.ndarray,
    games: np.ndarray,
    fixed: np.ndarray,
    *,
    prior_games: float = PRIOR_GAMES,
    prior_rating: float = 1000.0,
    tol: float = 1e-9,
    max_iter: int = 200,
) -> np.ndarray:
    """Maximum-likelihood Elo ratings (Bradley-Terry, 400-point base-10 scale) of ``n`` agents.

    ``scores[i, j]``: ``i``'s total score against ``j`` over all their games, both seats (a win 1,
    a draw 0.5); ``games[i, j]``: the number of those games, so ``scores + scores.T == games``.
    ``fixed[i]``: ``i``'s fixed rating, NaN for an agent to rate. Each rated agent gets
    ``prior_games`` virtual draws against a ``prior_rating`` opponent (module docstring). The
    log-likelihood is concave; Newton's method with step halving maximises it until no rating
    moves by more than ``tol`` points.
    """
    scores = np.asarray(scores, dtype=np.float64)
    games = np.asarray(games, dtype=np.float64)
    fixed = np.asarray(fixed, dtype=np.float64)
    n = fixed.shape[0]
    if scores.shape != (n, n) or games.shape != (n, n):
        raise ValueError(
            f"scores and games must be ({n}, {n}) like fixed, got {scores.shape} and {games.shape}"
        )
    if (games < 0).any() or (scores < -1e-9).any() or (scores > games + 1e-9).any():
        raise ValueError("need 0 <= scores <= games for every pair")
    if not np.allclose(games, games.T):
        raise ValueError("games must be symmetric (games[i, j] counts the games between i and j)")
    if not prior_games > 0.0:
        raise ValueError(f"prior_games must be positive (it keeps all-win ratings finite), got {prior_games}")
    free = np.isnan(fixed)
    s = np.where(free, prior_rating, fixed) * _NATURAL
    if not free.any():
        return s / _NATURAL
    s0 = prior_rating * _NATURAL
    loglik = _bt_loglik(s, scores, games, prior_games, s0, free)
    for _ in range(max_iter):
        p = expit(s[:, None] - s[None, :])
        q = expit(s - s0)
        grad = (scores - games * p).sum(axis=1) + prior_games * (0.5 - q)
        w = games * p * (1.0 - p)
        curvature = w.sum(axis=1) + prior_games * q * (1.0 - q)
        hess = np.diag(curvature[free]) - w[np.ix_(free, free)]  # minus the Hessian: positive definite
        step = np.zeros(n)
        step[free] = scipy.linalg.solve(hess, grad[free], assume_a="pos")
        t = 1.0
        while True:
            trial = s + t * step
            new = _bt_loglik(trial, scores, games, prior_games, s0, free)
            if new >= loglik - 1e-12 * abs(loglik) or t < 1e-6:
                break
            t *= 0.5
        s, loglik = trial, new
        if np.abs(t * step).max() / _NATURAL < tol:
            break
    return s / _NATURAL


def _bt_loglik(
    s: np.ndarray, scores: np.ndarray, games: np.ndarray, prior_games: float, s0: float, free: np.ndarray
) -> float:
    d = s[:, None] - s[None, :]
    # log sigma(d) = -log(1 + e^-d); scores[i, j] counts i's score, each ordered pair once
    data = -(scores * np.logaddexp(0.0, -d)).sum()
    prior = -0.5 * prior_games * (np.logaddexp(0.0, s0 - s[free]) + np.logaddexp(0.0, s[free] - s0)).sum()
    return float(data + prior)


def elo_delta(
    rating: float, opponent_rating: float, outcome: float, *, k_factor: float, n_games: int = 1
) -> float:
    """Rating change ``K * n * (outcome - expected)`` for ``n_games`` with mean ``outcome``."""
    return k_factor * n_games * (outcome - expected_score(rating, opponent_rating))


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

    def state_dict(self) -> dict[str, Any]:
        """JSON-able state (baselines included for reference; they are not read back)."""
        return {
            "k_factor": self.k_factor,
            "initial_rating": self.initial_rating,
            "ratings": dict(self._ratings),
            "games": dict(self._games),
            "baselines": dict(self.baselines),
        }

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
