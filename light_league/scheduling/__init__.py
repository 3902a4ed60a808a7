"""Schedulers: each generation, who trains against whom, and who is snapshotted or reset.

The contract lives in :mod:`light_league.scheduling.task_scheduler`; the built-in schedulers
are ``league`` (AlphaStar roles), ``psro`` (PSRO-Nash) and ``self_play`` (self-play and
fictitious play). Plugins are resolved by :func:`resolve_scheduler`.
"""

from light_league.scheduling.alphastar import LeagueScheduler, LeagueSchedulerConfig
from light_league.scheduling.psro import PSROScheduler, PSROSchedulerConfig
from light_league.scheduling.registry import (
    ENTRY_POINT_GROUP,
    SCHEDULERS,
    build_scheduler,
    resolve_scheduler,
)
from light_league.scheduling.self_play import SelfPlayScheduler, SelfPlaySchedulerConfig
from light_league.scheduling.task_scheduler import (
    GenerationDecisions,
    LeagueView,
    LearnerSetup,
    TaskScheduler,
    TrainingTask,
)

__all__ = [
    "ENTRY_POINT_GROUP",
    "SCHEDULERS",
    "GenerationDecisions",
    "LeagueScheduler",
    "LeagueSchedulerConfig",
    "LeagueView",
    "LearnerSetup",
    "PSROScheduler",
    "PSROSchedulerConfig",
    "SelfPlayScheduler",
    "SelfPlaySchedulerConfig",
    "TaskScheduler",
    "TrainingTask",
    "build_scheduler",
    "resolve_scheduler",
]
