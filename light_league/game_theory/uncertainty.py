"""How sure a payoff table is: per-cell intervals, posterior draws, and the meta-strategy's stability.

A cell of a league's win-rate table is the mean outcome of ``games`` games (draws count half).
Its uncertainty is the **Jeffreys** posterior ``Beta(wins + 1/2, games - wins + 1/2)``, where
``wins = rate * games``: the 95% interval is that posterior's 2.5% and 97.5% quantiles (with the
usual end fix: the lower bound is 0 when no game was won, the upper 1 when none was lost). Its
frequentist coverage is close to the nominal 95% even for a few games (Brown, Cai & DasGupta
2001), which a test checks by simulation.

The table is symmetric (``P[j, i] = 1 - P[i, j]``), so a draw of the whole table samples each
unordered pair once and mirrors it. Cells marked ``exact`` (exact expected payoffs, e.g. poker
by tree walk) have no uncertainty: a zero-width interval and the same value in every draw.

**Stability** of a meta-strategy: solve ``draws`` tables drawn from the posterior with the same
meta-solver and report the mean total-variation distance to the point estimate's mixture and,
per member, the fraction of draws in which it is in the support.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np
from scipy.stats import beta as beta_dist

from light_league.game_theory.meta_solvers import support_probability, total_variation

#: two-sided level of the per-cell intervals
INTERVAL_LEVEL = 0.95
#: the prior's pseudo-counts (Jeffreys: 1/2 win, 1/2 loss)
PRIOR = 0.5


def cell_intervals(
    rates: np.ndarray, games: np.ndarray, exact: np.ndarray | None = None, level: float = INTERVAL_LEVEL
) -> tuple[np.ndarray, np.ndarray]:
    """``(low, high)`` of the equal-tailed Jeffreys interval of every cell (NaN where unplayed).

    The diagonal of a win-rate table (a member against itself, 0.5 by symmetry) and ``exact``
    cells get a zero-width interval at their value.
    """
    p = np.asarray(rates, dtype=np.float64)
    n = np.asarray(games, dtype=np.float64)
    wins = np.clip(np.nan_to_num(p) * n, 0.0, n)
    tail = (1.0 - level) / 2.0
    played = n > 0
    with np.errstate(invalid="ignore"):
        low = np.where(wins > 0, beta_dist.ppf(tail, wins + PRIOR, n - wins + PRIOR), 0.0)
        high = np.where(wins < n, beta_dist.ppf(1.0 - tail, wins + PRIOR, n - wins + PRIOR), 1.0)
    low = np.where(played, low, np.nan)
    high = np.where(played, high, np.nan)
    fixed = np.zeros(p.shape, dtype=bool)
    if p.ndim == 2 and p.shape[0] == p.shape[1]:
        np.fill_diagonal(fixed, True)
    if exact is not None:
        fixed |= np.asarray(exact, dtype=bool)
    fixed &= ~np.isnan(p)
    return np.where(fixed, p, low), np.where(fixed, p, high)


def score_interval(score: float, games: int, level: float = INTERVAL_LEVEL) -> tuple[float, float]:
    """The equal-tailed Jeffreys interval of one mean outcome in [0, 1] over ``games`` games (draws
    counting half): the interval :func:`cell_intervals` gives a cell of that score."""
    low, high = cell_intervals(np.array([score]), np.array([games]), level=level)
    return float(low[0]), float(high[0])


def mean_interval(values: np.ndarray, level: float = INTERVAL_LEVEL) -> tuple[float, float]:
    """Student-t interval of the mean of ``values`` (a game's payoff each); the mean itself when
    there are fewer than two values or they are all equal."""
    x = np.asarray(values, dtype=np.float64)
    mean = float(x.mean()) if x.size else float("nan")
    if x.size < 2:
        return mean, mean
    from scipy.stats import t as t_dist

    half = float(t_dist.ppf(0.5 + level / 2.0, x.size - 1) * x.std(ddof=1) / np.sqrt(x.size))
    return mean - half, mean + half


def sample_tables(
    rates: np.ndarray,
    games: np.ndarray,
    draws: int,
    rng: np.random.Generator,
    exact: np.ndarray | None = None,
) -> np.ndarray:
    """``draws`` symmetric win-rate tables ``(draws, n, n)`` from the cells' Jeffreys posteriors."""
    p = np.asarray(rates, dtype=np.float64)
    n = np.asarray(games, dtype=np.float64)
    size = p.shape[0]
    iu, ju = np.triu_indices(size, k=1)
    wins = np.clip(p[iu, ju] * n[iu, ju], 0.0, n[iu, ju])
    upper = rng.beta(wins + PRIOR, n[iu, ju] - wins + PRIOR, size=(draws, iu.size))
    if exact is not None:
        fixed = np.asarray(exact, dtype=bool)[iu, ju]
        upper[:, fixed] = p[iu, ju][fixed]
    out = np.full((draws, size, size), 0.5)
    out[:, iu, ju] = upper
    out[:, ju, iu] = 1.0 - upper
    return out


class TableSolver(Protocol):
    """A meta-solver as :func:`meta_stability` calls it (``agents.meta_solvers.MetaSolver`` is one)."""

    @property
    def batched(self) -> bool:
        """``solve_many`` takes a stack of tables in one call."""
        ...

    def solve_many(self, payoffs: np.ndarray, options: Any = None) -> np.ndarray:
        """Mixtures ``(k, n)`` for the tables ``(k, n, n)`` with ``options``."""
        ...


@dataclass
class Stability:
    """How far the meta-strategy moves when the table is redrawn from its posterior."""

    tv_mean: float  #: mean total-variation distance to the point estimate's mixture
    support: np.ndarray  #: (n,) fraction of draws in which each member has mass >= 1e-3
    draws: int  #: draws actually solved (fewer than asked when the time budget ran out)
    seconds: float


def meta_stability(
    solver: TableSolver,
    options: Any,
    rates: np.ndarray,
    games: np.ndarray,
    mixture: np.ndarray,
    *,
    draws: int,
    rng: np.random.Generator,
    exact: np.ndarray | None = None,
    max_seconds: float = 2.0,
    solve_seconds: float = 0.0,
) -> Stability | None:
    """Solve up to ``draws`` posterior tables with ``solver``; None when ``draws == 0``.

    Tables are solved in chunks (10 at once for a batched solver, one by one otherwise) while the
    next chunk is expected to end within ``max_seconds`` (the first chunk is expected to take
    ``solve_seconds``, the time of one solve of the table; later ones as long as the slowest so
    far). None when not even the first chunk fits. When every
    cell is ``exact`` each draw is the table itself: nothing is solved, the distance is 0 and the
    support is the mixture's (``draws`` is then reported as 0).
    """
    if draws <= 0:
        return None
    start = time.perf_counter()
    size = np.asarray(rates).shape[0]
    if exact is not None and np.all(np.asarray(exact, dtype=bool) | np.eye(size, dtype=bool)):
        support = support_probability(np.asarray(mixture)[None, :])
        return Stability(tv_mean=0.0, support=support, draws=0, seconds=time.perf_counter() - start)
    tables = sample_tables(rates, games, draws, rng, exact)
    chunk = 10 if solver.batched else 1
    mixtures: list[np.ndarray] = []
    done, expected = 0, solve_seconds
    while done < draws and time.perf_counter() - start + expected <= max_seconds:
        began = time.perf_counter()
        mixtures.append(solver.solve_many(tables[done : done + chunk], options))
        done += len(mixtures[-1])
        expected = max(expected, time.perf_counter() - began)
    if not mixtures:
        return None
    solved = np.concatenate(mixtures)
    return Stability(
        tv_mean=float(total_variation(solved, mixture).mean()),
        support=support_probability(solved),
        draws=int(solved.shape[0]),
        seconds=time.perf_counter() - start,
    )


def refinement_priorities(
    rates: np.ndarray, games: np.ndarray, meta: np.ndarray, exact: np.ndarray, cap: float
) -> list[tuple[int, int, float]]:
    """Played cells ``(i, j)`` (``i < j``) worth more evaluation games and their priority,
    highest first (adaptive evaluation).

    With ``m`` the meta-strategy ``meta`` of the table ``W`` (``rates``), member ``k`` scores
    ``u_k = sum_j m_j W[k, j]`` against it, and the mixture itself ``v = m W m`` (0.5 in a
    win-rate table). What decides the mixture is which side of ``v`` each ``u_k`` lies on
    (outside the support below it, inside equal to it). ``f_k`` is the probability that ``u_k``
    lies on the other side (normal approximation, each cell's standard deviation from its 95%
    interval): 1/2 for support members, near 0 for members far outside. Cell ``(i, j)`` enters
    ``u_i`` with weight ``m_j`` and ``u_j`` with weight ``m_i``, so its priority is
    ``(f_i m_j + f_j m_i) * sd_ij``: cells between support members, and between the support and
    members that may belong to it. Cells no decision depends on (both members clearly outside the
    support), ``exact`` cells and cells with ``cap`` games or more are left out.
    """
    from scipy import special

    n = rates.shape[0]
    low, high = cell_intervals(rates, games, exact)
    sd = (high - low) / (2.0 * 1.959964)
    scores = rates @ meta
    value = float(meta @ scores)
    spread = np.sqrt((sd**2) @ (meta**2))
    gap = np.abs(scores - value)
    with np.errstate(divide="ignore", invalid="ignore"):
        flip = np.where(spread > 0, 0.5 * special.erfc(gap / (spread * np.sqrt(2.0))), 0.0)
    flip[gap <= 1e-9] = 0.5
    priority = (flip[:, None] * meta[None, :] + meta[:, None] * flip[None, :]) * sd
    priority[np.tril_indices(n)] = 0.0
    priority[(games >= cap) | exact] = 0.0
    order = np.argsort(-priority, axis=None, kind="stable")
    rows, cols = np.unravel_index(order, priority.shape)
    return [
        (i, j, float(priority[i, j])) for i, j in zip(rows.tolist(), cols.tolist()) if priority[i, j] > 0.0
    ]
