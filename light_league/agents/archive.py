"""The archive: the members outside the active set the meta-game solves.

A league that runs for days grows to thousands of members; evaluating every new member against
all of them and solving the whole table each generation makes a generation cost more and more.
With ``league.active_set.size`` > 0 the AgentManager keeps an *active set* of about that many
members and archives the rest. Always active (protected): the baselines, the members the
meta-strategy weights (up to half of ``size``, the most weighted), the newest ``recent`` members
and (up to a quarter of ``size``) those that beat the newest main agent most (beat: the 95%
interval of the win rate above 0.5); the rest of the room goes to the best rated, the lowest rated are
archived (:func:`to_archive`).
An archived member stays in the pool (its manifest entry says ``"archived": true``), on disk
and loadable by id by every command; the scheduler, the evaluation of new members and the
meta-solver no longer see it. Each generation's new members also play a random sample of
``archive_sample`` archived members; one of those that beats the newest main agent comes back
(at most ``restore_max`` a generation, best first), and is then evaluated against the active set.
Once a quarter of ``size`` active members beat the newest main agent, one comes back only if it
beats it by more than the weakest of them (it would stay; no member goes back and forth).

:class:`Archive` keeps the set (saved in the checkpoint) and applies the rule; the rule itself is
a pure function of ids, roles, weights and ratings.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from light_league.game_theory.uncertainty import cell_intervals
from light_league.types import AgentType, newest_main
from light_league.utils.checks import require

if TYPE_CHECKING:
    from light_league.agents.agent_pool import AgentPool
    from light_league.agents.game_records import GameRecords
    from light_league.agents.meta_game import LeagueStats
    from light_league.agents.payoff_table import PayoffTable

#: a meta-strategy weight above this keeps a member active
WEIGHTED = 1e-6


@dataclass(frozen=True)
class ArchiveChange:
    """One generation's change to the archive (written to generations.jsonl)."""

    archived: tuple[str, ...]
    """Members archived in this generation."""
    restored: tuple[str, ...]
    """Members brought back in this generation."""
    size: int
    """Members in the archive after it."""


def protected(
    ids: Sequence[str],
    roles: Sequence[str],
    meta_strategy: Sequence[float],
    *,
    recent: int,
    beats_main: Mapping[str, float],
    beats_max: int,
    weighted_max: int,
) -> set[str]:
    """The members of ``ids`` (in order of addition) that stay active whatever the size: the
    baselines, the ``weighted_max`` the meta-strategy weights most, the newest ``recent``, and of
    ``beats_main`` (``{id: win rate against the newest main agent}``) the ``beats_max`` with the
    highest."""
    keep = {i for i, role in zip(ids, roles) if role == AgentType.BASELINE.value}
    most = sorted(range(len(ids)), key=lambda k: -meta_strategy[k])[:weighted_max]  # stable: older first
    keep |= {ids[k] for k in most if meta_strategy[k] > WEIGHTED}
    keep |= set(ids[len(ids) - recent :]) if recent else set()
    beaters = sorted((i for i in ids if i in beats_main), key=lambda i: -beats_main[i])  # stable
    return keep | set(beaters[:beats_max])


def to_archive(ids: Sequence[str], *, keep: set[str], rating: Mapping[str, float], size: int) -> list[str]:
    """The members of ``ids`` to archive so that at most ``size`` stay active (more when more are
    in ``keep``, which never leave): the lowest rated first out; in ``ids``' order."""
    if len(ids) <= size:
        return []
    room = max(size - len(keep & set(ids)), 0)
    rest = [i for i in ids if i not in keep]
    best = sorted(rest, key=lambda i: -rating.get(i, -math.inf))[:room]  # stable: older first on ties
    stays = set(best)
    return [i for i in rest if i not in stays]


def beats_main(table: PayoffTable, ids: Sequence[str], mains: Mapping[str, float]) -> dict[str, float]:
    """``{id: win rate}`` of the members of ``ids`` that beat one of ``mains`` (the newest main
    agents) in the evaluation table: their best win rate against one whose 95% interval
    (:func:`~light_league.game_theory.uncertainty.cell_intervals`) lies above 0.5. A point estimate
    above 0.5 over a new pairing's few games is a coin flip against a main agent near an
    equilibrium: on a 2-hour Kuhn run it brought back 2.6 members a generation, 94% of them to be
    archived again."""
    pairs = [(m, main) for m in ids for main in mains if main != m]
    if not pairs:
        return {}
    rates = np.array([table.win_rate(m, main) for m, main in pairs])
    games = np.array([table.games(m, main) for m, main in pairs])
    low, _ = cell_intervals(rates, games)
    out: dict[str, float] = {}
    for (member_id, _main), rate, bound in zip(pairs, rates, low):
        if bound > 0.5 and rate > out.get(member_id, 0.0):
            out[member_id] = float(rate)
    return out


class Archive:
    """The archived members and the rule that moves members in and out (module docstring)."""

    def __init__(
        self, *, size: int = 0, recent: int = 30, sample: int = 16, restore_max: int = 4, seed: int = 0
    ) -> None:
        self.size, self.recent, self.sample_size, self.restore_max = size, recent, sample, restore_max
        self.seed = seed
        #: keep the decayed training win rates against archived members (a role draws them:
        #: ``opponents: history``); else they are forgotten with the member
        self.keep_training = False
        #: archived member ids, in the order they were archived
        self.members: dict[str, None] = {}
        self.last = ArchiveChange((), (), 0)

    @property
    def enabled(self) -> bool:
        return self.size > 0

    def __contains__(self, member_id: object) -> bool:
        return member_id in self.members

    def sample(self, generation: int) -> list[str]:
        """The archived members this generation's new members also play (the same all generation)."""
        pool = list(self.members)
        if not pool or not self.sample_size:
            return pool[:0]
        rng = np.random.default_rng([self.seed, generation])
        picked = rng.choice(len(pool), size=min(self.sample_size, len(pool)), replace=False)
        return [pool[i] for i in sorted(picked.tolist())]

    def pairs(self, table: PayoffTable, new: Sequence[str], generation: int) -> list[tuple[str, str]]:
        """The unplayed pairs of the members ``new`` with this generation's :meth:`sample`."""
        sample = self.sample(generation)
        return [(a, x) for a in new for x in sample if table.games(a, x) == 0]

    def settle(
        self,
        stats: LeagueStats,
        records: GameRecords,
        pool: AgentPool,
        generation: int,
        keep: Collection[str] = (),
    ) -> ArchiveChange:
        """:meth:`update` after the solve ``stats`` of the active set (``keep``: members that stay
        active too, e.g. the best main agent so far): the pool's manifest marks the archived
        members, the payoff table and the decayed win rates forget their games (the match log keeps
        every game), so what they hold stays the size of the active set (the win rates against
        archived members are kept with :attr:`keep_training`: learners times members)."""
        if not self.enabled:
            return self.last
        table, sample = records.payoff_table, self.sample(generation)
        beats = beats_main(table, [*stats.ids, *sample], newest_main(stats.ids, stats.roles))
        change = self.update(
            stats.ids,
            stats.roles,
            stats.meta_strategy.tolist(),
            rating=stats.rating,
            beats_main=beats,
            keep=keep,
        )
        if change.archived or change.restored:
            pool.mark_archived(self.members)
        # what the table held of the archived members was read (their sample games too): let it go
        table.forget([*change.archived, *(x for x in sample if x in self.members)], table.agents())
        if not self.keep_training:
            records.training.forget(set(self.members))
        return change

    def update(
        self,
        ids: Sequence[str],
        roles: Sequence[str],
        meta_strategy: Sequence[float],
        *,
        rating: Mapping[str, float],
        beats_main: Mapping[str, float],
        keep: Collection[str] = (),
    ) -> ArchiveChange:
        """Archive what no longer fits the active set ``ids`` (never a member of ``keep``), and
        bring back the archived members of ``beats_main`` (``{id: win rate against the newest main
        agent}``, those above 0.5)."""
        if not self.enabled:
            return self.last
        kept = protected(
            ids,
            roles,
            meta_strategy,
            recent=self.recent,
            beats_main=beats_main,
            beats_max=self.size // 4,
            weighted_max=self.size // 2,
        )
        kept |= set(keep)
        out = to_archive(ids, keep=kept, rating=rating, size=self.size)
        # back only what would stay: above the weakest of a full quota of active beaters (no churn)
        beaters = sorted((beats_main[i] for i in ids if i in beats_main), reverse=True)[: self.size // 4]
        bar = beaters[-1] if len(beaters) >= self.size // 4 > 0 else 0.5
        back = sorted(
            (i for i in beats_main if i in self.members and beats_main[i] > bar), key=lambda i: -beats_main[i]
        )
        back = back[: self.restore_max]
        for member_id in back:
            del self.members[member_id]
        self.members.update(dict.fromkeys(out))
        self.last = ArchiveChange(tuple(out), tuple(back), len(self.members))
        return self.last

    def state_dict(self) -> dict[str, Any]:
        return {"archived": list(self.members)}

    @staticmethod
    def check_state(state: dict[str, Any]) -> None:
        archived = state.get("archived", [])
        require(isinstance(archived, list) and all(isinstance(i, str) for i in archived), "agents.archived")

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.members = dict.fromkeys(str(i) for i in state.get("archived", []))
        self.last = ArchiveChange((), (), len(self.members))
