"""What a league hands over, read from a generation's payoff table: the best main agent so far,
judged against a fixed reference set, and the opponents its newest main agent does worst against.

The **reference set** is what does not shift with the population: the baselines and the
exploiters' snapshots (``main_exploiter``, ``league_exploiter``), which were trained to beat the
main agents. The **best main agent** is the main-agent snapshot whose worst win rate against that
set is highest (the least a member of the set gets out of it), ties by its mean win rate against
the set, then the newer snapshot. A snapshot leaves the table only when the pool evicts it
(``league.pool_max_size``); the archive (``league.active_set``) keeps the best one active, so the
best of the table is the best so far.

Pure functions of a :class:`~light_league.tracking.logger.PayoffSnapshot`; the record keeps what
they find each generation (``best_main``, ``newest[].worst_opponents``), the leaderboard's
handover lines name them (:func:`light_league.tracking.leaderboard.handover_lines`) and the payoff
table's focus shows them (:class:`light_league.tracking.payoff_render.Focus`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from light_league.tracking.logger import PayoffSnapshot
from light_league.types import AgentType, newest_snapshots

#: the roles whose snapshots, beside the baselines, make the reference set
REFERENCE_ROLES = ("baseline", AgentType.MAIN_EXPLOITER.value, AgentType.LEAGUE_EXPLOITER.value)
#: the opponents named beside a newest snapshot (the ones it does worst against)
WORST_SHOWN = 3


@dataclass(frozen=True)
class Judged:
    """A main-agent snapshot judged against the reference set (indices into the snapshot)."""

    member: int
    worst: int  #: the member of the reference set it does worst against
    worst_win_rate: float
    mean_win_rate: float
    references: int  #: members in the reference set


def reference_set(snapshot: PayoffSnapshot) -> list[int]:
    """The baselines and the exploiters' snapshots of ``snapshot``, in population order."""
    return [i for i, role in enumerate(snapshot.roles) if role in REFERENCE_ROLES]


def main_snapshots(snapshot: PayoffSnapshot) -> list[int]:
    return [i for i, role in enumerate(snapshot.roles) if role == AgentType.MAIN_AGENT.value]


def judge(snapshot: PayoffSnapshot, member: int) -> Judged | None:
    """``member`` against the reference set (None when the set is empty or a cell is unplayed)."""
    references = [j for j in reference_set(snapshot) if j != member]
    rates = snapshot.win_rates[member, references]
    if not references or np.isnan(rates).any():
        return None
    worst = int(np.argmin(rates))
    return Judged(member, references[worst], float(rates[worst]), float(rates.mean()), len(references))


def best_main(snapshot: PayoffSnapshot) -> Judged | None:
    """The best main-agent snapshot of ``snapshot`` (module docstring), or None without a main
    agent or a reference set."""
    judged = [j for i in main_snapshots(snapshot) if (j := judge(snapshot, i)) is not None]
    if not judged:
        return None
    return max(judged, key=lambda j: (round(j.worst_win_rate, 9), round(j.mean_win_rate, 9), j.member))


def worst_opponents(snapshot: PayoffSnapshot, member: int, *, count: int = WORST_SHOWN) -> list[int]:
    """The ``count`` members ``member`` does worst against (lowest win rate first; unplayed cells
    and ``member`` itself left out)."""
    rates = snapshot.win_rates[member]
    others = [j for j in range(snapshot.size) if j != member and not np.isnan(rates[j])]
    return sorted(others, key=lambda j: (rates[j], j))[:count]


def newest_main_index(snapshot: PayoffSnapshot) -> list[int]:
    """The newest snapshot of each main agent, in population order."""
    newest = newest_snapshots(snapshot.agent_ids, snapshot.roles)
    return [i for i in newest if snapshot.roles[i] == AgentType.MAIN_AGENT.value]


def handover_focus(snapshot: PayoffSnapshot) -> list[int]:
    """What the payoff table's focus adds for the handover: the best main agent and the worst
    opponents of each main agent's newest snapshot."""
    out: list[int] = []
    best = best_main(snapshot)
    if best is not None:
        out.append(best.member)
    for i in newest_main_index(snapshot):
        out += worst_opponents(snapshot, i)
    return sorted(set(out))
