"""Scheduler names: the built-ins, ``package.module:ClassName`` plugins and entry-point plugins.

A scheduler is named in the config by a built-in name (``league``, ``psro``, ``self_play``; the
keys of :data:`SCHEDULERS`), by ``package.module:ClassName`` (imported with :mod:`importlib`, never
``eval``), or by a name an installed package registers under the entry-point group
``light_league.schedulers``. Resolution and its one-line errors live in :mod:`light_league.plugins`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, cast

from light_league.plugins import PluginKind, resolve, validate_options
from light_league.scheduling.alphastar import LeagueScheduler
from light_league.scheduling.psro import PSROScheduler
from light_league.scheduling.self_play import SelfPlayScheduler
from light_league.scheduling.task_scheduler import TaskScheduler

SCHEDULERS: dict[str, type[TaskScheduler]] = {
    "league": LeagueScheduler,
    "psro": PSROScheduler,
    "self_play": SelfPlayScheduler,
}

#: entry-point group under which installed packages register schedulers
ENTRY_POINT_GROUP = "light_league.schedulers"

SCHEDULER_PLUGINS = PluginKind(
    label="scheduler",
    builtins=SCHEDULERS,
    group=ENTRY_POINT_GROUP,
    base=TaskScheduler,
    base_path="light_league.scheduling.TaskScheduler",
    implement="learners, next_tasks, after_training",
)


def resolve_scheduler(name: str) -> type[TaskScheduler]:
    """The scheduler class named ``name`` (built-in, ``module:Class`` or entry point)."""
    return cast(type[TaskScheduler], resolve(SCHEDULER_PLUGINS, name))


def build_scheduler(
    name: str, raw_options: Mapping[str, Any], seed: int, *, path: str = "scheduler"
) -> TaskScheduler:
    """Resolve ``name``, validate ``raw_options`` with its ``Config`` and build the scheduler.

    ``path`` is the dotted config path of the options, used in error messages.
    """
    cls = resolve_scheduler(name)
    config = validate_options(cls.Config, raw_options, path=path)
    return cls(config, seed=seed)
