"""Meta-solvers: pure functions from a payoff matrix to a mixture over the population.

A meta-solver turns the population's payoff matrix into the **meta-strategy**: the mixture the
scheduler trains against (PSRO's opponent distribution) and the one whose NashConv is measured.
The built-ins, named in the config as OpenSpiel's PSRO names them (the table of names, options
and plugins, :data:`~light_league.agents.meta_solvers.META_SOLVERS`, is a floor up):

=============== ==============================================================================
``nash``        the maximin mixture from the LP (:func:`~light_league.game_theory.nash.compute_nash_distribution`);
                a vertex of the equilibrium set, so equal equilibria may be chosen differently
``maxent_nash`` the **maximum-entropy** Nash (unique: the centre of the equilibrium set in the
                entropy sense; Balduzzi et al. 2018's Nash averaging): clones share mass equally
``uniform``     1/n over the population (PSRO with it is fictitious play)
``prd``         projected replicator dynamics (Lanctot et al. 2017), the average strategy,
                OpenSpiel's defaults (``iterations=1e5, dt=1e-3, gamma=1e-6``)
``alpharank``   single-population alpha-rank (Omidshafiei et al. 2019), the stationary
                distribution of the Fermi-rule Markov chain; OpenSpiel's defaults
                (``m=50, alpha=100``)
``qre``         the logit quantal response equilibrium at ``temperature`` (the Nash of the
                entropy-regularised game): every member keeps some mass, and the mixture moves
                smoothly with the payoffs; tends to a Nash as ``temperature -> 0``
``least_exploitable``
                the mixture of the population that an exact best response in the *whole* game
                exploits least (Anytime PSRO's restricted distribution, McAleer et al. 2022);
                needs the members' policies and an exactly evaluated game (``game=True``):
                Kuhn and Leduc poker with ``evaluation.exact`` on
=============== ==============================================================================

**The payoff matrix.** ``payoff[i, j]`` is what row ``i`` scores against column ``j`` in a
symmetric two-player game: a league's win-rate matrix ``P`` (draws half, ``P + P^T = 1``) or its
zero-sum form ``P - 0.5``. Every solver treats it as the zero-sum game ``(A, -A)`` and returns
the row player's mixture; adding a constant to every entry changes no solver's answer (they
depend on payoff differences only). ``prd``, ``qre`` and ``uniform`` also take a stack
``(..., n, n)`` and solve each matrix at once.

**Game solvers.** :func:`least_exploitable` reads the game as well as the table: it is called
``fn(payoff, game=..., **options)`` with an :class:`ExactGame` of the members in the table's
order. Its mixture does not come from sampled payoffs, so it has no stability draws.

**Options** are keyword-only arguments of each function (validated from ``league.meta_solver``
by the table a floor up). numpy and scipy only.
"""

from __future__ import annotations

from typing import Protocol

import numpy as np
from scipy.optimize import linprog, minimize

from light_league.game_theory.nash import compute_nash_distribution, solve_zero_sum

#: probabilities at least this large count as "in the support" (stability statistics)
SUPPORT_THRESHOLD = 1e-3


def _square(payoff: np.ndarray, *, batched: bool = False) -> np.ndarray:
    a = np.asarray(payoff, dtype=np.float64)
    if a.ndim < 2 or (a.ndim > 2 and not batched) or a.shape[-1] != a.shape[-2] or a.shape[-1] == 0:
        raise ValueError(f"payoff must be a non-empty square (n, n) matrix, got shape {a.shape}")
    if not np.all(np.isfinite(a)):
        raise ValueError("payoff has unknown (NaN/inf) entries; play those pairs before solving")
    return a


# ---------------------------------------------------------------------------- the solvers


def nash(payoff: np.ndarray) -> np.ndarray:
    """The maximin (Nash) mixture of the row player, by linear programming."""
    return compute_nash_distribution(_square(payoff))


def uniform(payoff: np.ndarray) -> np.ndarray:
    """The uniform mixture (``(..., n)`` for a stack of matrices)."""
    a = _square(payoff, batched=True)
    return np.full(a.shape[:-1], 1.0 / a.shape[-1])


def maxent_nash(payoff: np.ndarray, *, tol: float = 1e-9) -> np.ndarray:
    """The maximum-entropy Nash mixture of the row player (unique).

    Exact in three steps: (1) the game value ``v`` by LP; (2) the union of the supports of all
    equilibria, one LP per member (``max x_i`` over the optimal face ``{x in simplex: A^T x >= v}``);
    the average of those LP solutions lies in the face's relative interior; (3) from there,
    SLSQP maximises the entropy over the face restricted to that support, where the optimum is
    interior (so the logarithm stays finite). ``tol`` is the slack (times the payoff scale) that
    still counts as optimal.
    """
    a = _square(payoff)
    n = a.shape[0]
    _, _, value = solve_zero_sum(a)
    scale = max(1.0, float(np.abs(a).max()))
    slack = tol * scale
    # every x on the optimal face: sum x = 1, x >= 0, (A^T x)_j >= v - slack
    a_ub, b_ub = -a.T, -(value - slack) * np.ones(n)
    a_eq, b_eq = np.ones((1, n)), np.array([1.0])
    best = np.zeros(n)
    points = []
    for i in range(n):
        if best[i] > 1e-7:  # already in the support of an earlier member's solution
            continue
        cost = np.zeros(n)
        cost[i] = -1.0
        res = linprog(cost, A_ub=a_ub, b_ub=b_ub, A_eq=a_eq, b_eq=b_eq, bounds=(0.0, None), method="highs")
        if res.status == 0 and res.x is not None:
            x = np.clip(res.x, 0.0, None)
            points.append(x / x.sum())
            best = np.maximum(best, points[-1])
    if not points:
        return nash(a)
    support = np.flatnonzero(best > 1e-7)
    start = np.mean(points, axis=0)[support]
    start /= start.sum()
    if support.size == 1:
        out = np.zeros(n)
        out[support] = 1.0
        return out
    sub = a[np.ix_(support, np.arange(n))]
    floor = 1e-12

    def neg_entropy(x: np.ndarray) -> float:
        z = np.maximum(x, floor)
        return float(np.sum(z * np.log(z)))

    def grad(x: np.ndarray) -> np.ndarray:
        return np.log(np.maximum(x, floor)) + 1.0

    res = minimize(
        neg_entropy,
        start,
        jac=grad,
        method="SLSQP",
        bounds=[(0.0, 1.0)] * support.size,
        constraints=[
            {"type": "eq", "fun": lambda x: np.sum(x) - 1.0, "jac": lambda x: np.ones_like(x)},
            {"type": "ineq", "fun": lambda x: sub.T @ x - (value - slack), "jac": lambda x: sub.T},
        ],
        options={"ftol": 1e-14, "maxiter": 500},
    )
    x = np.clip(res.x if res.success else start, 0.0, None)
    if float((sub.T @ x).min()) < value - 1e-6 * scale:  # the optimiser left the face: keep the start
        x = start
    out = np.zeros(n)
    out[support] = x / x.sum()
    return out


def _project(v: np.ndarray, gamma: float) -> np.ndarray:
    """Euclidean projection of each row of ``v`` onto ``{x : sum x = 1, x >= gamma}``.

    The sort-based algorithm (Wang & Carreira-Perpinan 2013, with a floor): find the shift
    ``lam`` with ``sum max(v + lam, gamma) = 1``.
    """
    n = v.shape[-1]
    u = -np.sort(-v, axis=-1)
    k = np.arange(1, n + 1)
    shift = (1.0 - np.cumsum(u, axis=-1) - (n - k) * gamma) / k
    # u + shift <= gamma holds from some index rho on (never for rho = n): the first of them
    rho = n - np.count_nonzero(u + shift <= gamma, axis=-1, keepdims=True)
    lam = np.take_along_axis(shift, np.maximum(rho - 1, 0), axis=-1)
    return np.asarray(np.maximum(v + lam, gamma))


def prd(
    payoff: np.ndarray, *, iterations: int = 100_000, dt: float = 1e-3, gamma: float = 1e-6
) -> np.ndarray:
    """Projected replicator dynamics on the zero-sum game ``(A, -A)``: the row player's average strategy.

    Both players start uniform and update simultaneously,
    ``x <- proj_gamma(x + dt * x * (A y - x.A y))`` and the same for ``y`` with payoff ``-A^T x``;
    the result is the mean of the ``iterations + 1`` row strategies (the start included). Same
    update, projection and averaging as OpenSpiel's ``projected_replicator_dynamics``.
    """
    a = _square(payoff, batched=True)
    if iterations < 0 or dt <= 0.0 or not 0.0 <= gamma < 1.0 / a.shape[-1]:
        raise ValueError(
            f"prd needs iterations >= 0, dt > 0, 0 <= gamma < 1/n; got {iterations}, {dt}, {gamma}"
        )
    # both players as one stack: row k of ``xy`` is (x, y), ``game[0] = A``, ``game[1] = -A^T``
    game = np.stack([a, -np.swapaxes(a, -1, -2)], axis=-3)
    xy = np.full((*a.shape[:-2], 2, a.shape[-1], 1), 1.0 / a.shape[-1])
    swap = [1, 0]
    total = xy[..., 0, :, 0].copy()
    for _ in range(int(iterations)):
        values = game @ xy[..., swap, :, :]
        mean = np.sum(values * xy, axis=-2, keepdims=True)
        xy = _project((xy + dt * xy * (values - mean))[..., 0], gamma)[..., None]
        total += xy[..., 0, :, 0]
    return np.asarray(total / (int(iterations) + 1))


def _fixation(u: np.ndarray, m: int) -> np.ndarray:
    """Fermi-rule fixation probability ``(1 - e^-u) / (1 - e^-mu)`` of one mutant; ``1/m`` at ``u = 0``."""
    out = np.full(u.shape, 1.0 / m)
    pos, neg = u > 1e-14, u < -1e-14
    out[pos] = np.expm1(-u[pos]) / np.expm1(-m * u[pos])
    # u < 0: multiply through by e^{mu} so nothing overflows
    un = u[neg]
    out[neg] = np.exp((m - 1) * un) * np.expm1(un) / np.expm1(m * un)
    return out


def alpharank(
    payoff: np.ndarray,
    *,
    m: int = 50,
    alpha: float = 100.0,
    use_inf_alpha: bool = False,
    inf_alpha_eps: float = 0.01,
) -> np.ndarray:
    """Single-population alpha-rank: the stationary distribution of the mutation chain.

    From the monomorphic population playing ``s``, a mutant ``r`` (chosen with probability
    ``1/(n-1)``) takes over with the Fermi fixation probability of ``u = alpha (A[r, s] - A[s, r])``
    in a population of ``m`` (local selection model). With ``use_inf_alpha`` the limit
    ``alpha -> inf`` is taken, keeping ``inf_alpha_eps`` of mass on the losing move. Same model
    and defaults as OpenSpiel's ``alpharank.compute`` on a single payoff table.
    """
    a = _square(payoff)
    n = a.shape[0]
    if n == 1:
        return np.ones(1)
    if m < 2 or alpha < 0.0 or not 0.0 <= inf_alpha_eps <= 1.0:
        raise ValueError(
            f"alpharank needs m >= 2, alpha >= 0, 0 <= inf_alpha_eps <= 1; got {m}, {alpha}, {inf_alpha_eps}"
        )
    diff = a.T - a  # diff[s, r] = A[r, s] - A[s, r]: the mutant r's edge over the resident s
    eta = 1.0 / (n - 1)
    if use_inf_alpha:
        c = np.where(np.abs(diff) <= 1e-14, 0.5, np.where(diff > 0, 1.0 - inf_alpha_eps, inf_alpha_eps)) * eta
    else:
        c = _fixation(alpha * diff, m) * eta
    np.fill_diagonal(c, 0.0)
    np.fill_diagonal(c, 1.0 - c.sum(axis=1))
    # stationary pi: pi (C - I) = 0, sum pi = 1 (one balance equation replaced by the normalisation)
    system = (c - np.eye(n)).T
    system[-1] = 1.0
    rhs = np.zeros(n)
    rhs[-1] = 1.0
    pi = np.linalg.lstsq(system, rhs, rcond=None)[0]
    pi = np.clip(pi, 0.0, None)
    return np.asarray(pi / pi.sum())


def _softmax(logits: np.ndarray) -> np.ndarray:
    z = np.exp(logits - logits.max(axis=-1, keepdims=True))
    return np.asarray(z / z.sum(axis=-1, keepdims=True))


def qre(
    payoff: np.ndarray, *, temperature: float = 0.02, max_iterations: int = 100_000, tol: float = 1e-10
) -> np.ndarray:
    """The logit quantal response equilibrium of ``(A, -A)`` at ``temperature``: the row's mixture.

    The unique ``(x, y)`` with ``x = softmax(A y / T)`` and ``y = softmax(-A^T x / T)``, i.e. the
    saddle point of ``x^T A y + T H(x) - T H(y)``. Solved by the predictive (extragradient)
    multiplicative-weights update of Cen et al. 2021, which converges linearly at rate
    ``1 - eta T`` with ``eta = 1 / (T + 2 max|A|)``; it stops when no probability moves by more
    than ``tol`` in one step.
    """
    a = _square(payoff, batched=True)
    if temperature <= 0.0 or max_iterations < 1:
        raise ValueError(
            f"qre needs temperature > 0 and max_iterations >= 1; got {temperature}, {max_iterations}"
        )
    a = a - a.mean(axis=(-1, -2), keepdims=True)  # same answer, smaller logits
    at = np.swapaxes(a, -1, -2)
    eta = 1.0 / (temperature + 2.0 * float(np.abs(a).max()) + 1e-12)
    keep = 1.0 - eta * temperature
    lx = np.zeros(a.shape[:-1])
    ly = np.zeros(a.shape[:-1])
    x, y = _softmax(lx), _softmax(ly)
    for _ in range(int(max_iterations)):
        xb = _softmax(keep * lx + eta * np.einsum("...ij,...j->...i", a, y))
        yb = _softmax(keep * ly - eta * np.einsum("...ij,...j->...i", at, x))
        lx = keep * lx + eta * np.einsum("...ij,...j->...i", a, yb)
        ly = keep * ly - eta * np.einsum("...ij,...j->...i", at, xb)
        lx -= lx.max(axis=-1, keepdims=True)
        ly -= ly.max(axis=-1, keepdims=True)
        nx, ny = _softmax(lx), _softmax(ly)
        moved = max(float(np.abs(nx - x).max()), float(np.abs(ny - y).max()))
        x, y = nx, ny
        if moved <= tol:
            break
    return x


class ExactGame(Protocol):
    """What a game meta-solver reads besides the table: the members in the game (the evaluation's
    :class:`~light_league.evaluation.evaluation_manager.MemberGame`)."""

    def least_exploitable(self, tol: float) -> np.ndarray:
        """The members' weights whose mixture has the lowest exact NashConv (to ``tol``)."""
        ...


def least_exploitable(payoff: np.ndarray, *, game: ExactGame, tol: float = 1e-6) -> np.ndarray:
    """The members' mixture with the lowest exact NashConv in the whole game (the payoff table is
    not read); :func:`light_league.algorithms.game_tree.least_exploitable`."""
    return game.least_exploitable(tol)


def support_probability(mixtures: np.ndarray) -> np.ndarray:
    """Per member, the fraction of mixtures ``(k, n)`` that give it at least :data:`SUPPORT_THRESHOLD`."""
    return np.asarray((np.asarray(mixtures) >= SUPPORT_THRESHOLD).mean(axis=0))


def total_variation(p: np.ndarray, q: np.ndarray) -> np.ndarray:
    """Total-variation distance ``0.5 * sum |p - q|`` along the last axis."""
    return np.asarray(0.5 * np.abs(np.asarray(p) - np.asarray(q)).sum(axis=-1))
