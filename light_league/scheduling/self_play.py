"""Self-play and fictitious self-play: one learner against itself or its past.

``latest`` plays the learner's current weights (naive self-play) or, with
``latest_opponent: snapshot``, its most recent snapshot. ``fictitious`` plays uniformly over the
whole frozen population (its snapshots and any initial members), which is fictitious play over
the population (PSRO with a uniform meta-solver). A snapshot is taken every ``snapshot_every``
generations; the learner is never reset.
"""

from __future__ import annotations

from typing import Any, ClassVar, Literal

from pydantic import Field

from light_league.config_base import Section
from light_league.scheduling.task_scheduler import (
    GenerationDecisions,
    LeagueView,
    LearnerSetup,
    TaskScheduler,
    TrainingTask,
)
from light_league.types import AgentType


class SelfPlaySchedulerConfig(Section):
    """Self-play: whom the learner plays and how often it is snapshotted."""

    mode: Literal["latest", "fictitious"] = "latest"
    """latest: the learner's newest self; fictitious: uniform over the whole frozen population."""
    latest_opponent: Literal["current", "snapshot"] = "current"
    """In latest mode: the learner's current weights, or its most recent snapshot."""
    snapshot_every: int = Field(default=1, ge=1, le=1_000_000)
    """Freeze the learner into the population every this many generations."""
    steps_per_generation: int = Field(default=20_000, ge=1, le=10**12)
    """Environment steps the learner trains per generation."""


class SelfPlayScheduler(TaskScheduler):
    """One main agent trained by self-play or fictitious self-play."""

    name: ClassVar[str] = "self_play"
    Config: ClassVar[type[Section]] = SelfPlaySchedulerConfig
    config: SelfPlaySchedulerConfig

    def __init__(self, config: Section, *, seed: int) -> None:
        super().__init__(config, seed=seed)
        self.generations_trained = 0

    def learners(self) -> list[LearnerSetup]:
        return [LearnerSetup("main_agent_0", AgentType.MAIN_AGENT, initial_member=True)]

    def next_tasks(self, league: LeagueView) -> list[TrainingTask]:
        tasks = []
        for learner_id, role in league.learners().items():
            opponents, weighting = self._opponents(league, learner_id)
            tasks.append(
                TrainingTask(
                    learner_id=learner_id,
                    role=role,
                    opponents=opponents,
                    env_steps=self.config.steps_per_generation,
                    weighting=weighting,
                )
            )
        return tasks

    def _opponents(self, league: LeagueView, learner_id: str) -> tuple[dict[str, float], str]:
        members = league.members()
        if self.config.mode == "fictitious":
            if not members:
                return {learner_id: 1.0}, "self_play(fallback:no_members)"
            return {m.agent_id: 1.0 / len(members) for m in members}, "uniform"
        if self.config.latest_opponent == "current":
            return {learner_id: 1.0}, "self_play"
        own = [m for m in members if m.parent == learner_id]
        if not own:
            return {learner_id: 1.0}, "self_play(fallback:no_snapshot)"
        latest = max(own, key=lambda m: m.created_at)
        return {latest.agent_id: 1.0}, "latest_snapshot"

    def after_training(self, league: LeagueView) -> GenerationDecisions:
        self.generations_trained += 1
        if self.generations_trained % self.config.snapshot_every:
            return GenerationDecisions()
        return GenerationDecisions(snapshot=sorted(league.learners()))

    def state_dict(self) -> dict[str, Any]:
        state = super().state_dict()
        state["generations_trained"] = self.generations_trained
        return state

    def load_state_dict(self, state: dict[str, Any]) -> None:
        super().load_state_dict(state)
        self.generations_trained = int(state.get("generations_trained", 0))
