"""Prioritised fictitious self-play (PFSP) weights.

AlphaStar (Vinyals et al. 2019, Methods "Prioritised fictitious self-play"; supplementary
pseudocode ``multiagent.py::pfsp``) samples opponent ``B`` for learner ``A`` with probability
``f(P[A beats B]) / sum_C f(P[A beats C])``. The weightings:

=================  ====================  =============================================
name               f(x)                  used by
=================  ====================  =============================================
``hard``           ``(1 - x) ** p``      the paper's default; ``p`` = ``pfsp_temperature``
``squared``        ``(1 - x) ** 2``      main agent (PFSP and verification branches)
``variance``       ``x (1 - x)``         main exploiter curriculum, struggling main agent
``linear``         ``1 - x``             pseudocode default argument
``linear_capped``  ``min(0.5, 1 - x)``   league exploiter
=================  ====================  =============================================

When every weight is (near) zero the pseudocode falls back to uniform; so do we.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Literal

import numpy as np

from light_league.game_theory.names import unknown_choice

#: how a role weights the members it draws from: PFSP, the meta-strategy, or their product
OpponentWeighting = Literal["pfsp", "meta", "pfsp_meta"]

WEIGHTINGS: dict[str, Callable[[np.ndarray, float], np.ndarray]] = {
    "hard": lambda x, p: (1.0 - x) ** p,
    "squared": lambda x, p: (1.0 - x) ** 2,
    "variance": lambda x, p: x * (1.0 - x),
    "linear": lambda x, p: 1.0 - x,
    "linear_capped": lambda x, p: np.minimum(0.5, 1.0 - x),
}

#: below this total weight the distribution falls back to uniform (AlphaStar pseudocode)
UNIFORM_FALLBACK_BELOW = 1e-10


def pfsp_weights(win_rates: np.ndarray, weighting: str = "squared", p: float = 2.0) -> np.ndarray:
    """Unnormalised PFSP weights ``f(x)`` of win rates ``x`` in [0, 1]."""
    if weighting not in WEIGHTINGS:
        raise unknown_choice("PFSP weighting", weighting, WEIGHTINGS)
    x = np.asarray(win_rates, dtype=np.float64)
    if x.size and (np.any(np.isnan(x)) or x.min() < 0.0 or x.max() > 1.0):
        raise ValueError(f"win rates must lie in [0, 1], got {x.tolist()}")
    return np.asarray(WEIGHTINGS[weighting](x, p), dtype=np.float64)


def pfsp_probabilities(win_rates: np.ndarray, weighting: str = "squared", p: float = 2.0) -> np.ndarray:
    """Normalised PFSP sampling probabilities; uniform when all weights vanish.

    An empty candidate set is the caller's bug (AlphaStar's pseudocode divides by zero there),
    so it raises instead of returning an empty distribution silently.
    """
    x = np.asarray(win_rates, dtype=np.float64)
    if x.size == 0:
        raise ValueError("PFSP needs at least one candidate opponent; guard the empty case before calling")
    w = pfsp_weights(x, weighting, p)
    total = w.sum()
    if total < UNIFORM_FALLBACK_BELOW:
        return np.full(x.shape, 1.0 / x.size)
    return w / total


def remove_monotonic_suffix(win_rates: Sequence[float]) -> int:
    """Length of the prefix of ``win_rates`` (oldest first) that may hold forgotten players.

    AlphaStar's ``remove_monotonic_suffix``: scanning from the newest checkpoint back, the first
    older checkpoint beaten *less* often than its successor marks the end of the kept prefix; a
    list that never increases (every newer checkpoint is harder) keeps nothing. Returns the
    number of leading entries to keep (0 for an empty or one-element list).
    """
    for i in range(len(win_rates) - 1, 0, -1):
        if win_rates[i - 1] < win_rates[i]:
            return i + 1
    return 0


def combine_weights(
    pfsp_probs: np.ndarray, meta_weights: np.ndarray | None, weighting: OpponentWeighting
) -> tuple[np.ndarray, str]:
    """Opponent probabilities for one weighting, and the label of what was actually used.

    ``pfsp_probs`` are normalised PFSP probabilities over the candidates, ``meta_weights`` the
    meta-strategy's mass of each candidate (``None`` before the first). ``meta`` gives
    probabilities proportional to the meta-strategy (a zero-weight candidate is never drawn);
    ``pfsp_meta`` multiplies PFSP by the meta-strategy and renormalises. Whenever the
    meta-strategy's part is missing or sums to zero over the candidates, PFSP alone is returned
    and the label says why.
    """
    if weighting == "pfsp":
        return pfsp_probs, "pfsp"
    if meta_weights is None:
        return pfsp_probs, "pfsp(fallback:no_meta_strategy)"
    meta = np.clip(np.asarray(meta_weights, dtype=np.float64), 0.0, None)
    mixed = meta if weighting == "meta" else pfsp_probs * meta
    total = mixed.sum()
    if total < UNIFORM_FALLBACK_BELOW:
        reason = "zero_meta_strategy" if weighting == "meta" else "zero_product"
        return pfsp_probs, f"pfsp(fallback:{reason})"
    return mixed / total, weighting
