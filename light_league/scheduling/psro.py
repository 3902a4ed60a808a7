"""PSRO-Nash scheduler: one new best response per player per generation against the Nash mixture.

Policy-Space Response Oracles (Lanctot et al. 2017, §3) with an exact Nash meta-solver (the
double oracle): each generation every best-response learner trains against opponents drawn
from the latest Nash mixture of the population, is frozen into the population, and starts the
next generation from fresh weights. Before the first Nash exists the mixture is uniform over
the population (the initial members in the first generation).
"""

from __future__ import annotations

from typing import Any, ClassVar

from pydantic import Field

from light_league.config_base import Section
from light_league.scheduling.task_scheduler import (
    GenerationDecisions,
    LeagueView,
    LearnerSetup,
    TaskScheduler,
    TrainingTask,
)
from light_league.types import AgentRecord, AgentType


class PSROSchedulerConfig(Section):
    """PSRO-Nash: number of players, steps per best response, resets."""

    players: int = Field(default=1, ge=1, le=2)
    """1 for a symmetric game (one best response per generation serves both seats); 2 for an
    asymmetric game (``br_0`` trains in seat 0, ``br_1`` in seat 1)."""
    steps_per_generation: int = Field(default=20_000, ge=1, le=10**12)
    """Environment steps each best response trains per generation."""
    reset_after_snapshot: bool = True
    """Start each generation's best response from fresh weights (exact PSRO); false keeps training the same weights."""


class PSROScheduler(TaskScheduler):
    """Classic PSRO-Nash: best responses to the population's Nash mixture."""

    name: ClassVar[str] = "psro"
    Config: ClassVar[type[Section]] = PSROSchedulerConfig
    config: PSROSchedulerConfig

    def learners(self) -> list[LearnerSetup]:
        return [
            LearnerSetup(f"br_{seat}", AgentType.BEST_RESPONSE, initial_member=True)
            for seat in range(self.config.players)
        ]

    def next_tasks(self, league: LeagueView) -> list[TrainingTask]:
        tasks = []
        for seat, learner_id in enumerate(sorted(league.learners())):
            opponents, weighting = self._opponents(league, learner_id)
            info: dict[str, Any] = {"seat": seat} if self.config.players == 2 else {}
            tasks.append(
                TrainingTask(
                    learner_id=learner_id,
                    role=AgentType.BEST_RESPONSE,
                    opponents=opponents,
                    env_steps=self.config.steps_per_generation,
                    weighting=weighting,
                    info=info,
                    seat=seat if self.config.players == 2 else None,
                )
            )
        return tasks

    def _opponents(self, league: LeagueView, learner_id: str) -> tuple[dict[str, float], str]:
        """The meta-strategy (the Nash mixture by default) over the members this learner may face
        (uniform before the first one)."""
        candidates = self._candidates(league, learner_id)
        if not candidates:
            fallback = self._live_opponent(league, learner_id)
            return {fallback: 1.0}, "self_play(fallback:no_members)"
        uniform = {m.agent_id: 1.0 / len(candidates) for m in candidates}
        meta = league.meta_strategy()
        if not meta:
            return uniform, "uniform(no_meta_strategy)"
        weights = {m.agent_id: max(meta.get(m.agent_id, 0.0), 0.0) for m in candidates}
        total = sum(weights.values())
        if total <= 0.0:
            return uniform, "uniform(fallback:zero_meta_strategy)"
        return {k: w / total for k, w in weights.items() if w > 0.0}, "meta_strategy"

    def _candidates(self, league: LeagueView, learner_id: str) -> list[AgentRecord]:
        """All members; in a two-player game, not the learner's own seat's past best responses."""
        members = league.members()
        if self.config.players == 1:
            return members
        return [m for m in members if m.parent != learner_id]

    def _live_opponent(self, league: LeagueView, learner_id: str) -> str:
        """With an empty population: the other seat's learner, or the learner itself."""
        others = [lid for lid in sorted(league.learners()) if lid != learner_id]
        return others[0] if self.config.players == 2 and others else learner_id

    def after_training(self, league: LeagueView) -> GenerationDecisions:
        learners = sorted(league.learners())
        return GenerationDecisions(
            snapshot=list(learners),
            reset=list(learners) if self.config.reset_after_snapshot else [],
        )
