"""Nash equilibria of two-player zero-sum matrix games.

The row player picks a mixture ``x`` over rows and receives ``x^T A y``; the column player picks
``y`` and pays it. :func:`solve_zero_sum` finds the maximin pair by linear programming, in two
steps:

1. **Dense simplex** (the fast path). Shift the game so every entry is at least 1
   (``S = A - min(A) + 1``: same equilibria, value shifted by the same constant). The column
   player's problem becomes ``max 1^T w`` s.t. ``S w <= 1``, ``w >= 0``, whose all-slack basis is
   feasible, so no phase 1 is needed; then ``y = w / sum(w)``, the shifted value is
   ``1 / sum(w)``, and the row player's ``x`` is read from the same tableau's dual (the reduced
   costs of the slacks). The pivots run on a compact (Tucker) tableau with steepest-edge pricing,
   one rank-1 numpy update each. Population games are small and dense, where this beats a
   general sparse LP solver several times over (``bench/nash_solver.py``).
2. **Check, then fall back.** The answer is accepted only if it certifies itself: both mixtures
   are in the simplex and ``min_j (x^T A)_j`` and ``max_i (A y)_i`` both equal ``v`` to within
   ``1e-9`` of the payoff scale (which is the definition of an equilibrium). Otherwise (cycling
   on a degenerate game, round-off) scipy's HiGHS solves ``max v`` s.t. ``(A^T x)_j >= v``,
   ``sum(x) = 1``, ``x >= 0`` with ``v`` left unbounded (scipy's default bound ``[0, inf)``
   would silently clip negative game values), reading ``y`` from the LP's dual.

A league's **win-rate matrix** ``P`` (``P[i, j]`` = probability that ``i`` beats ``j``, draws
counting half, so ``P + P^T = 1``) is a constant-sum game; its zero-sum form is ``P - 0.5``.
Shifting every entry by a constant does not change the maximin mixture, so
:func:`compute_nash_distribution` accepts ``P`` or ``P - 0.5`` alike and returns the same mixture.

Unknown entries are NaN and are refused: estimate them, or fill them with an explicit prior
(e.g. 0.5), before solving.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence

import numpy as np
from scipy.optimize import linprog

from light_league.game_theory.names import unknown_choice

log = logging.getLogger(__name__)

#: probabilities below this are treated as LP round-off, set to 0 and the rest renormalised
MIN_PROBABILITY = 1e-9

#: the dense simplex gives up (and HiGHS takes over) after this many pivots per row + column
MAX_PIVOTS_PER_DIM = 20

#: entries of the simplex tableau below this count as zero when choosing a pivot
PIVOT_TOL = 1e-12

#: an answer is an equilibrium if it guarantees its value to within this (times the payoff scale)
EQUILIBRIUM_TOL = 1e-9

#: regret-matching iterations used by the fallback when the caller does not say
DEFAULT_RM_ITERATIONS = 10_000

NASH_METHODS = ("lp", "regret_matching")


def build_payoff_matrix(agent_ids: Sequence[str], win_rate_fn: Callable[[str, str], float]) -> np.ndarray:
    """``(n, n)`` matrix with ``M[i, j] = win_rate_fn(agent_ids[i], agent_ids[j])``.

    The diagonal is filled by the same function (a match database reports 0.5 for self-play).
    An entry the function cannot estimate should come back as NaN, never as a magic number.
    """
    ids = list(agent_ids)
    n = len(ids)
    payoff = np.empty((n, n), dtype=np.float64)
    for i, a in enumerate(ids):
        for j, b in enumerate(ids):
            payoff[i, j] = float(win_rate_fn(a, b))
    return payoff


def _as_game(payoff: np.ndarray, *, square: bool) -> np.ndarray:
    """Validate a payoff matrix: 2-D, non-empty, finite, square when asked."""
    a = np.asarray(payoff, dtype=np.float64)
    if a.ndim != 2 or a.size == 0:
        raise ValueError(f"payoff must be a non-empty 2-D matrix, got shape {a.shape}")
    if square and a.shape[0] != a.shape[1]:
        raise ValueError(
            f"payoff must be square (one row and column per population member), got shape {a.shape}; "
            "use solve_zero_sum for a game between two different populations"
        )
    bad = np.argwhere(~np.isfinite(a))
    if bad.size:
        where = ", ".join(str(tuple(int(k) for k in idx)) for idx in bad[:5])
        raise ValueError(
            f"payoff has {len(bad)} unknown (NaN/inf) entries, e.g. at {where}; "
            "play those pairs or fill them with an explicit prior (e.g. 0.5) before solving"
        )
    return a


def _renormalise(p: np.ndarray) -> np.ndarray:
    """Clip round-off negatives and tiny entries to 0 and rescale to sum 1."""
    q = np.where(p < MIN_PROBABILITY, 0.0, p)
    total = q.sum()
    if total <= 0.0:
        return np.full(p.shape, 1.0 / p.size)
    return np.asarray(q / total, dtype=np.float64)


def _simplex_tableau(a: np.ndarray) -> tuple[np.ndarray, np.ndarray, float] | None:
    """Row maximin ``(x, y, v)`` of ``a`` by the dense simplex; None if it does not finish.

    Tableau ``t`` (Tucker form, shape ``(m + 1, n + 1)``): rows are the basic variables, columns
    the non-basic ones, the last column the right-hand side, the last row the objective
    ``max sum(w)``. Labels ``0..n-1`` are the column player's ``w_j``, ``n..n+m-1`` the slacks of
    the row constraints ``(S w)_i <= 1``.
    """
    m, n = a.shape
    shift = 1.0 - float(a.min())
    t = np.empty((m + 1, n + 1))
    t[:m, :n] = a + shift
    t[:m, n] = 1.0
    t[m, :n] = -1.0
    t[m, n] = 0.0
    basic, nonbasic = np.arange(n, n + m), np.arange(n)
    edge_sq = 1.0 + np.einsum("ij,ij->j", t[:m, :n], t[:m, :n])
    for _ in range(MAX_PIVOTS_PER_DIM * (m + n)):
        c = int(np.argmin(t[m, :n] / np.sqrt(edge_sq)))
        if t[m, c] >= -PIVOT_TOL:
            return _read_tableau(t, basic, nonbasic, shift)
        r = _leaving_row(t, c)
        if r is None:
            return None
        edge_sq = _pivot(t, r, c, edge_sq)
        basic[r], nonbasic[c] = nonbasic[c], basic[r]
    return None


def _leaving_row(t: np.ndarray, c: int) -> int | None:
    """Ratio test on column ``c``: the row whose right-hand side runs out first (None: unbounded)."""
    m = t.shape[0] - 1
    col = t[:m, c]
    positive = col > PIVOT_TOL
    if not positive.any():
        return None
    ratios = np.full(m, np.inf)
    np.divide(t[:m, -1], col, out=ratios, where=positive)
    return int(np.argmin(ratios))


def _pivot(t: np.ndarray, r: int, c: int, edge_sq: np.ndarray) -> np.ndarray:
    """Exchange basic row ``r`` with non-basic column ``c`` in place; returns the updated edge norms.

    ``edge_sq[j] = 1 + sum_i t[i, j]^2`` over the constraint rows (the squared length of the
    simplex edge along column ``j``) is updated exactly from one matrix-vector product instead of
    being recomputed.
    """
    m = t.shape[0] - 1
    p = t[r, c]
    row = t[r] / p
    col = t[:, c].copy()
    cross = col[:m] @ t[:m, :-1] - p * t[r, :-1]  # sum over i != r of col_i * t[i, j]
    col_sq = float(col[:m] @ col[:m]) - p * p
    rj = row[:-1]
    edge_sq = edge_sq - p * p * rj * rj - 2.0 * rj * cross + rj * rj * col_sq + rj * rj
    t -= np.outer(col, row)
    t[r] = row
    t[:, c] = -col / p
    t[r, c] = 1.0 / p
    edge_sq[c] = 1.0 + (col_sq + 1.0) / (p * p)
    return np.maximum(edge_sq, 1.0)


def _read_tableau(
    t: np.ndarray, basic: np.ndarray, nonbasic: np.ndarray, shift: float
) -> tuple[np.ndarray, np.ndarray, float] | None:
    """``(x, y, v)`` from an optimal tableau: ``w`` from the basic rows, ``x`` from the slacks' duals."""
    m, n = t.shape[0] - 1, t.shape[1] - 1
    total = float(t[m, n])
    if total <= 0.0:
        return None
    w, u = np.zeros(n), np.zeros(m)
    is_w = basic < n
    w[basic[is_w]] = t[:m, n][is_w]
    is_slack = nonbasic >= n
    u[nonbasic[is_slack] - n] = t[m, :n][is_slack]
    return u / total, w / total, 1.0 / total - shift


def _is_equilibrium(a: np.ndarray, x: np.ndarray, y: np.ndarray, value: float) -> bool:
    """Both mixtures in the simplex and each guaranteeing ``value`` against every pure reply."""
    tol = EQUILIBRIUM_TOL * max(1.0, float(np.abs(a).max()))
    in_simplex = all(p.min() >= -tol and abs(p.sum() - 1.0) <= tol for p in (x, y))
    return in_simplex and float((x @ a).min()) >= value - tol and float((a @ y).max()) <= value + tol


def _maximin(a: np.ndarray) -> tuple[np.ndarray, np.ndarray, float] | None:
    """Row maximin of ``a``: the dense simplex if its answer checks out, else HiGHS."""
    solved = _simplex_tableau(a)
    if solved is not None and _is_equilibrium(a, *solved):
        x, y, value = solved
        return _renormalise(x), _renormalise(y), value
    return maximin_lp(a)


def maximin_lp(a: np.ndarray) -> tuple[np.ndarray, np.ndarray, float] | None:
    """Row maximin of ``a`` by scipy's HiGHS LP alone (what :func:`solve_zero_sum` falls back to
    when the dense simplex's answer does not check out); ``(x, y, v)`` or None when HiGHS fails."""
    m, n = a.shape
    cost = np.zeros(m + 1)
    cost[-1] = -1.0
    a_ub = np.hstack([-a.T, np.ones((n, 1))])
    a_eq = np.hstack([np.ones((1, m)), np.zeros((1, 1))])
    bounds = [(0.0, None)] * m + [(None, None)]
    res = linprog(cost, A_ub=a_ub, b_ub=np.zeros(n), A_eq=a_eq, b_eq=[1.0], bounds=bounds, method="highs")
    if res.status != 0 or res.x is None:
        log.warning("Nash LP failed (status %s: %s)", res.status, res.message)
        return None
    x = _renormalise(res.x[:m])
    y = _renormalise(-np.asarray(res.ineqlin.marginals, dtype=np.float64))
    return x, y, float(res.x[-1])


def regret_matching(
    payoff: np.ndarray, n_iterations: int = DEFAULT_RM_ITERATIONS
) -> tuple[np.ndarray, np.ndarray]:
    """Average strategies ``(x, y)`` of regret-matching self-play on the zero-sum game ``payoff``.

    Uses regret matching+ (Tammelin 2014: regrets floored at 0) with alternating updates and
    linearly weighted averages, which converges much faster than plain regret matching while
    keeping its guarantee. The average strategy is returned, never the last iterate (which need
    not converge).
    """
    a = _as_game(payoff, square=False)
    if int(n_iterations) < 1:
        raise ValueError(f"n_iterations must be >= 1, got {n_iterations}")
    m, n = a.shape
    regret_x, regret_y = np.zeros(m), np.zeros(n)
    sum_x, sum_y = np.zeros(m), np.zeros(n)
    x, y = np.full(m, 1.0 / m), np.full(n, 1.0 / n)
    for t in range(1, int(n_iterations) + 1):
        row_values = a @ y
        regret_x = np.maximum(regret_x + row_values - x @ row_values, 0.0)
        x = _regret_policy(regret_x)
        col_values = -(x @ a)
        regret_y = np.maximum(regret_y + col_values - col_values @ y, 0.0)
        y = _regret_policy(regret_y)
        sum_x += t * x
        sum_y += t * y
    return sum_x / sum_x.sum(), sum_y / sum_y.sum()


def _regret_policy(regret: np.ndarray) -> np.ndarray:
    total = regret.sum()
    if total <= 0.0:
        return np.full(regret.shape, 1.0 / regret.size)
    return regret / total


def solve_zero_sum(payoff: np.ndarray) -> tuple[np.ndarray, np.ndarray, float]:
    """Nash equilibrium ``(x, y, value)`` of the ``(m, n)`` zero-sum game ``payoff``.

    The row player maximises ``x^T A y``, the column player minimises it; ``value`` is the row
    player's guaranteed payoff. Raises ``RuntimeError`` when the LP fails (it should not on a
    finite matrix; :func:`compute_nash_distribution` falls back to regret matching instead).
    """
    a = _as_game(payoff, square=False)
    solved = _maximin(a)
    if solved is None:
        raise RuntimeError(f"the Nash LP failed on a {a.shape} payoff; try regret_matching(payoff)")
    return solved


def compute_nash_distribution(
    payoff: np.ndarray, *, n_iterations: int = DEFAULT_RM_ITERATIONS, method: str = "lp"
) -> np.ndarray:
    """Maximin mixture of the row player of the square game ``payoff`` (shape ``(n,)``).

    ``payoff`` is a win-rate matrix (or its zero-sum form ``P - 0.5``: the same answer).
    ``method="lp"`` solves it exactly; if the LP fails a warning is logged and the average
    strategy of ``n_iterations`` of regret matching is returned. ``method="regret_matching"``
    skips the LP.
    """
    if method not in NASH_METHODS:
        raise unknown_choice("Nash method", method, NASH_METHODS)
    a = _as_game(payoff, square=True)
    if method == "lp":
        solved = _maximin(a)
        if solved is not None:
            return solved[0]
        log.warning("LP solver failed; falling back to regret matching (%d iterations)", n_iterations)
    return _renormalise(regret_matching(a, n_iterations)[0])


def nash_entropy(probs: np.ndarray) -> float:
    """Shannon entropy of a mixture in nats (``0 log 0 = 0``); ``log(n)`` for uniform over ``n``."""
    p = np.asarray(probs, dtype=np.float64)
    if p.ndim != 1 or p.size == 0:
        raise ValueError(f"probs must be a non-empty 1-D mixture, got shape {p.shape}")
    if not np.all(np.isfinite(p)) or p.min() < 0.0 or abs(p.sum() - 1.0) > 1e-6:
        raise ValueError(f"probs must be non-negative and sum to 1, got {p.tolist()} (sum {p.sum()})")
    nz = p[p > 0.0]
    return max(0.0, float(-(nz * np.log(nz)).sum()))
