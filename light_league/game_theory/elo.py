"""Elo ratings: the fitted rating (one anchor, 95% intervals) and the sequential Elo.

Standard base-10 Elo on the 400-point scale: the expected score of ``a`` against ``b`` is
``1 / (1 + 10 ** ((r_b - r_a) / 400))``, and after ``n`` games with mean outcome ``s`` (1 win,
0.5 draw, 0 loss) ``a`` moves by ``K * n * (s - expected)``. The opponent moves by the opposite
amount, so an update between two rated agents is zero-sum.

**Baselines** (fixed opponents such as scripted bots) keep fixed ratings in the sequential Elo
(:class:`light_league.league.EloRegistry`): they never change, whatever they play. Each env
declares its fixed opponents' ratings beside them (``FIXED_POLICY_RATINGS``, read through
``envs.fixed_policy_ratings``); battalion's are ``random`` at 800 and scripted levels 1 to 5 at
1000, 1100, 1200, 1300 and 1400. :data:`DEFAULT_BASELINES` keeps those numbers for an
``EloRegistry`` built without ``baselines`` (the league passes its env's). Agents that have not
played yet start at ``initial_rating`` (1000, the level-1 bot). The fitted rating below holds only
one member fixed: the scripted levels' hand-set numbers need not match how they play (in a
battalion league, level 5 beats level 3 about 470 points apart, not 200).

Two ways to compute it:

* :func:`bradley_terry_fit` — the **rating** the league reports: a maximum-likelihood
  Bradley-Terry fit on the Elo scale over all games so far, from aggregated pair counts, with
  **one anchor** (``random`` at 800 in a league, see :data:`RATING_ANCHOR`) and every other agent,
  scripted baselines included, fitted from its games; each rating comes with a 95% interval (Wald:
  1.96 standard errors from the inverse of the observed information, relative to the anchor). A
  draw counts as half a win and half a loss (the half-credit formulation: the likelihood of a game
  with score ``s`` is ``E ** s * (1 - E) ** (1 - s)``). It depends only on the pair counts, never on
  the order of the games. Every rated agent also plays ``prior_games`` (default 1) virtual draws
  against a virtual opponent rated ``prior_rating`` (1000): a weak prior that keeps the rating of
  an agent with all wins or all losses finite, and fixes the scale's origin when there is no
  anchor. Against 16 real games per pair it moves a rating by a few points at most.
* :func:`elo_delta` — the classic sequential update, game by game in the order the games
  finished, with the env's fixed baseline ratings (kept as a secondary figure: it depends on that
  order), which :class:`light_league.league.EloRegistry` applies and saves.

Note that Elo assumes transitive strength; on cyclic (rock-paper-scissors-like) populations it
hides the cycle (a main agent can beat ``scripted_l5`` and lose to ``scripted_l3``, and its rating
sits between), so read it beside the payoff table and the meta-strategy.
"""

from __future__ import annotations

import math

import numpy as np
import scipy.linalg
from scipy.special import expit

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
#: the one member a league's fitted rating holds fixed, at its env's declared rating (800 in every
#: shipped env), when it is a baseline of the run: every other rating, scripted baselines
#: included, is fitted from the games relative to it
RATING_ANCHOR = "random"
#: a 95% interval is this many standard errors either side (the normal quantile)
Z95 = 1.959963984540054


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
) -> np.ndarray:
    """The ratings of :func:`bradley_terry_fit` alone."""
    return bradley_terry_fit(scores, games, fixed, prior_games=prior_games, prior_rating=prior_rating)[0]


def bradley_terry_fit(
    scores: np.ndarray,
    games: np.ndarray,
    fixed: np.ndarray,
    *,
    prior_games: float = PRIOR_GAMES,
    prior_rating: float = 1000.0,
    tol: float = 1e-9,
    max_iter: int = 200,
) -> tuple[np.ndarray, np.ndarray]:
    """Maximum-likelihood Elo ratings (Bradley-Terry, 400-point base-10 scale) of ``n`` agents and
    their standard errors, ``(ratings, se)`` in Elo points (``se`` 0 for a fixed agent; a 95%
    interval is ``ratings ± Z95 * se``).

    ``scores[i, j]``: ``i``'s total score against ``j`` over all their games, both seats (a win 1,
    a draw 0.5); ``games[i, j]``: the number of those games, so ``scores + scores.T == games``.
    ``fixed[i]``: ``i``'s fixed rating, NaN for an agent to rate. Each rated agent gets
    ``prior_games`` virtual draws against a ``prior_rating`` opponent (module docstring). The
    log-likelihood is concave; Newton's method with step halving maximises it until no rating
    moves by more than ``tol`` points. The standard errors are the square roots of the diagonal of
    the inverse of minus the log-likelihood's Hessian over the fitted agents at the maximum (the
    observed information, the virtual draws included).
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
    se = np.zeros(n)
    if not free.any():
        return s / _NATURAL, se
    s0 = prior_rating * _NATURAL
    loglik = _bt_loglik(s, scores, games, prior_games, s0, free)
    for _ in range(max_iter):
        grad, hess = _bt_derivatives(s, scores, games, prior_games, s0, free)
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
    _, hess = _bt_derivatives(s, scores, games, prior_games, s0, free)
    se[free] = np.sqrt(np.diag(scipy.linalg.inv(hess, overwrite_a=True))) / _NATURAL
    return s / _NATURAL, se


def _bt_derivatives(
    s: np.ndarray, scores: np.ndarray, games: np.ndarray, prior_games: float, s0: float, free: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """The log-likelihood's gradient (every agent) and minus its Hessian over the fitted agents
    (positive definite), in natural log-odds units."""
    p = expit(s[:, None] - s[None, :])
    q = expit(s - s0)
    grad = (scores - games * p).sum(axis=1) + prior_games * (0.5 - q)
    w = games * p * (1.0 - p)
    curvature = w.sum(axis=1) + prior_games * q * (1.0 - q)
    return grad, np.diag(curvature[free]) - w[np.ix_(free, free)]


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
