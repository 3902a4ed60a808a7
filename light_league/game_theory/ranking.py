"""The leaderboard's order: Nash clustering of the payoff table, then Nash averaging.

A rating fitted to the whole population (:func:`~light_league.game_theory.elo.bradley_terry_fit`)
ranks by total score against whoever happens to be in the population: a population that is half
old main-agent snapshots puts first the exploiter that beats only them. The order here depends
only on who beats whom:

1. **Nash clustering** (Czarnecki et al. 2020, "Real World Games Look Like Spinning Tops",
   section 4): the support of the population's Nash mixture is layer 1; remove it, solve the
   rest, its support is layer 2; and so on, until :data:`LAYERED_PLACES` members are placed.
   Each layer's Nash mixture scores at least 0.5 against every member below it (it is an
   equilibrium of a game they are in), so a layer of one member beats everyone below it at
   least 0.5 head to head. A layer of several members is a cycle (or a tie): each of them
   scores exactly the game's value against the layer's mixture, and no order of them has each
   beat everyone below.
2. Within a layer, members go by their mean win rate against the layer's other members.
3. **Nash averaging** (Balduzzi et al. 2018, "Re-evaluating evaluation") orders the members the
   layers did not reach: by their win rate against the population's Nash mixture (layer 1's
   mixture), which adding copies or dominated members does not change; ties by the mean win
   rate against the whole population.

:func:`order_note` checks the top of the order (each member beats every one below it at least
0.5 on the mean of their games) and, where it does not hold, says why in one line, naming the
cycle. numpy only; the Nash mixtures are :func:`~light_league.game_theory.nash.compute_nash_distribution`'s.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from light_league.game_theory.nash import compute_nash_distribution

#: the first places of the order come from Nash clustering (an LP per layer); the rest from Nash averaging
LAYERED_PLACES = 10
#: a member with at least this mass in a layer's Nash mixture is in that layer's support
SUPPORT_MASS = 1e-6
#: the top of the order :func:`order_note` checks
CHECKED_PLACES = 10


@dataclass(frozen=True)
class Ranking:
    """A population's order (indices into the table, best first) and what it was built from."""

    order: list[int]
    layer: dict[int, int]  #: ``{member: layer}`` (from 1) of the members the layers reached
    nash_average: np.ndarray  #: (n,) each member's win rate against the population's Nash mixture


def nash_clustering(rates: np.ndarray, *, places: int = LAYERED_PLACES) -> list[list[int]]:
    """The first layers of ``rates`` (a complete (n, n) win-rate table), each the support of the
    Nash mixture of the members not in an earlier layer, until ``places`` members are placed."""
    remaining = list(range(rates.shape[0]))
    layers: list[list[int]] = []
    while remaining and sum(map(len, layers)) < places:
        mixture = compute_nash_distribution(rates[np.ix_(remaining, remaining)])
        support = [remaining[i] for i in np.flatnonzero(mixture >= SUPPORT_MASS)]
        layers.append(support)
        remaining = [i for i in remaining if i not in support]
    return layers


def rank_population(rates: np.ndarray, *, places: int = LAYERED_PLACES) -> Ranking:
    """The order of the members of the complete win-rate table ``rates`` (module docstring)."""
    rates = np.asarray(rates, dtype=np.float64)
    n = rates.shape[0]
    if rates.shape != (n, n) or np.isnan(rates).any():
        raise ValueError(f"rank_population needs a complete square win-rate table, got shape {rates.shape}")
    if n == 0:
        return Ranking([], {}, np.zeros(0))
    average = rates @ compute_nash_distribution(rates)
    layers = nash_clustering(rates, places=places)
    order: list[int] = []
    for members in layers:
        within = [
            rates[i, [j for j in members if j != i]].mean() if len(members) > 1 else 0.5 for i in members
        ]
        order += [m for _, m in sorted(zip(within, members), key=lambda x: (-x[0], -average[x[1]], x[1]))]
    placed = set(order)
    overall = rates.mean(axis=1)  # ties in Nash average: the mean against the whole population
    order += sorted((i for i in range(n) if i not in placed), key=lambda i: (-average[i], -overall[i], i))
    layer = {m: k for k, members in enumerate(layers, 1) for m in members}
    return Ranking(order, layer, average)


def order_note(
    ids: Sequence[str], rates: np.ndarray, order: Sequence[int], *, places: int = CHECKED_PLACES
) -> str | None:
    """None when each of the first ``places`` members of ``order`` beats every one below it among
    them at least 0.5; else one line saying why not: the cycle through the first pair out of
    order (a member ranked above one that beats it), or, without one, that pair."""
    top = list(order[:places])
    for k, a in enumerate(top):
        for b in top[k + 1 :]:
            if rates[a, b] < 0.5:
                return _why(ids, rates, a, b, top)
    return None


def _why(ids: Sequence[str], rates: np.ndarray, a: int, b: int, top: list[int]) -> str:
    """Why ``a`` ranks above ``b`` though ``b`` beats it: the cycle ``a`` beats ... beats ``b``
    beats ``a`` (among ``top`` if there is one, else the whole table), or the pair alone."""
    path = _beats_path(rates, a, b, top) or _beats_path(rates, a, b, list(range(rates.shape[0])))
    if path is None:
        return (
            f"not a strict order: {ids[a]} ranks above {ids[b]}, which beats it {rates[b, a]:.2f}, "
            f"because {ids[a]}'s layer beats {ids[b]} as a mixture"
        )
    cycle = [*path, a]
    links = ", ".join(f"{ids[x]} beats {ids[y]} {rates[x, y]:.2f}" for x, y in zip(cycle, cycle[1:]))
    return f"not a strict order, the top holds a cycle: {links}"


def _beats_path(rates: np.ndarray, start: int, end: int, among: list[int]) -> list[int] | None:
    """The shortest path ``start`` -> ... -> ``end`` in which each member beats the next more
    than 0.5, through members of ``among`` (None when there is none)."""
    previous: dict[int, int | None] = {start: None}
    queue = deque([start])
    while queue:
        x = queue.popleft()
        for y in among:
            if y not in previous and rates[x, y] > 0.5:
                previous[y] = x
                if y == end:
                    path = [y]
                    while (step := previous[path[-1]]) is not None:
                        path.append(step)
                    return path[::-1]
                queue.append(y)
    return None
