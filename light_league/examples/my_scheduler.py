"""A small scheduler plugin: "hardest first".

One main agent trains, each generation, only against the frozen member it beats least (ties go
to the oldest), and is snapshotted after every generation. With no member yet it plays itself.

Name it in a config as ``scheduler.name: light_league.examples.my_scheduler:HardestFirstScheduler``
(installed with the package), or register it by entry point; docs/plugins.md walks through both.
"""

from __future__ import annotations

from typing import ClassVar

from pydantic import Field

from light_league.config_base import Section
from light_league.scheduling import (
    GenerationDecisions,
    LeagueView,
    LearnerSetup,
    TaskScheduler,
    TrainingTask,
)
from light_league.types import AgentType


class HardestFirstConfig(Section):
    """Options of the hardest-first scheduler."""

    steps_per_generation: int = Field(default=10_000, ge=1, le=10**12)
    """Environment steps the learner trains per generation."""


class HardestFirstScheduler(TaskScheduler):
    """Train against the member the learner beats least; snapshot every generation."""

    name: ClassVar[str] = "hardest_first"
    Config: ClassVar[type[Section]] = HardestFirstConfig
    config: HardestFirstConfig

    def learners(self) -> list[LearnerSetup]:
        return [LearnerSetup("main_agent_0", AgentType.MAIN_AGENT, initial_member=True)]

    def next_tasks(self, league: LeagueView) -> list[TrainingTask]:
        tasks = []
        for learner_id, role in league.learners().items():
            members = league.members()
            if members:
                hardest = min(members, key=lambda m: league.win_rate(learner_id, m.agent_id))
                opponent, weighting = hardest.agent_id, "hardest_first"
            else:
                opponent, weighting = learner_id, "self_play(fallback:no_members)"
            tasks.append(
                TrainingTask(
                    learner_id=learner_id,
                    role=role,
                    opponents={opponent: 1.0},
                    env_steps=self.config.steps_per_generation,
                    weighting=weighting,
                )
            )
        return tasks

    def after_training(self, league: LeagueView) -> GenerationDecisions:
        return GenerationDecisions(snapshot=sorted(league.learners()))
