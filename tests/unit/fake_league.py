"""A scripted LeagueView for scheduler tests: members, learners, a payoff table, Nash, steps."""

from __future__ import annotations

from dataclasses import dataclass, field

from light_league.types import AgentRecord, AgentType


def member(
    agent_id: str, agent_type: AgentType, parent: str | None = None, created_at: float = 0.0
) -> AgentRecord:
    """A frozen population member (snapshot of ``parent``, or a baseline when ``parent`` is None)."""
    return AgentRecord(
        agent_id=agent_id,
        version=0,
        agent_type=agent_type,
        snapshot_path=f"/snapshots/{agent_id}",
        created_at=created_at,
        parent=parent,
    )


@dataclass
class FakeLeague:
    """Implements the LeagueView protocol from plain dicts.

    ``payoff[(a, b)]`` is the probability that ``a`` beats ``b``; the reverse pair is read as
    ``1 - payoff[(a, b)]``; unplayed pairs are 0.5, as in AlphaStar's ``Payoff``.
    """

    learner_roles: dict[str, AgentType]
    population: list[AgentRecord] = field(default_factory=list)
    payoff: dict[tuple[str, str], float] = field(default_factory=dict)
    mixture: dict[str, float] = field(default_factory=dict)
    steps: dict[str, int] = field(default_factory=dict)
    generation_index: int = 0
    archived: list[AgentRecord] = field(default_factory=list)
    """Members of the archive (``league.active_set``): in :meth:`all_members`, not :meth:`members`."""

    @property
    def generation(self) -> int:
        return self.generation_index

    def members(self) -> list[AgentRecord]:
        return list(self.population)

    def all_members(self) -> list[AgentRecord]:
        return [*self.archived, *self.population]

    def learners(self) -> dict[str, AgentType]:
        return dict(self.learner_roles)

    def win_rate(self, a: str, b: str) -> float:
        if (a, b) in self.payoff:
            return self.payoff[(a, b)]
        if (b, a) in self.payoff:
            return 1.0 - self.payoff[(b, a)]
        return 0.5

    def games(self, a: str, b: str) -> float:
        return 10.0 if (a, b) in self.payoff or (b, a) in self.payoff else 0.0

    def meta_strategy(self) -> dict[str, float]:
        return dict(self.mixture)

    def steps_since_checkpoint(self, learner_id: str) -> int:
        return self.steps.get(learner_id, 0)

    def set_win_rates(self, learner_id: str, rates: dict[str, float]) -> None:
        """Script ``learner_id``'s win rate against each opponent."""
        for opponent, rate in rates.items():
            self.payoff[(learner_id, opponent)] = rate


def league_learners(
    main_agents: int = 1, main_exploiters: int = 1, league_exploiters: int = 1
) -> dict[str, AgentType]:
    """Learner ids and roles as the league scheduler names them."""
    roles = [
        (AgentType.MAIN_AGENT, main_agents),
        (AgentType.MAIN_EXPLOITER, main_exploiters),
        (AgentType.LEAGUE_EXPLOITER, league_exploiters),
    ]
    return {f"{role.value}_{i}": role for role, n in roles for i in range(n)}
