"""The scheduler contract: each generation, who trains against whom.

A scheduler is a plain class. It reads the league through a read-only :class:`LeagueView`
(provided by the AgentManager) and returns :class:`TrainingTask` s; after training it decides
which learners are snapshotted into the population and which are reset. Built-in schedulers and
plugins subclass :class:`TaskScheduler`.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from typing import Any, ClassVar, Protocol

import numpy as np

from light_league.config_base import Section
from light_league.types import (
    AgentRecord,
    AgentType,
    GenerationDecisions,
    LearnerSetup,
    MatchResult,
    TrainingTask,
)

__all__ = ["GenerationDecisions", "LeagueView", "LearnerSetup", "TaskScheduler", "TrainingTask"]


class LeagueView(Protocol):
    """Read-only league statistics a scheduler may use."""

    @property
    def generation(self) -> int:
        """Index of the generation being planned (0 for the first)."""
        ...

    def members(self) -> list[AgentRecord]:
        """The frozen population (snapshots and fixed baselines), oldest first: the active set's
        members when ``league.active_set`` archived some."""
        ...

    def all_members(self) -> list[AgentRecord]:
        """Every member, the archived ones too, oldest first (:meth:`members` with no archive)."""
        ...

    def learners(self) -> dict[str, AgentType]:
        """Live learners by id and role."""
        ...

    def win_rate(self, a: str, b: str) -> float:
        """Estimated probability that ``a`` beats ``b`` (draws count half); 0.5 when never played.

        Estimated from games recorded per (player, opponent), with AlphaStar's decay.
        ``a`` and ``b`` may be learner ids or member ids.
        """
        ...

    def games(self, a: str, b: str) -> float:
        """(Decayed) number of games between ``a`` and ``b``."""
        ...

    def meta_strategy(self) -> dict[str, float]:
        """The meta-strategy over the frozen population from the latest evaluation: the
        configured meta-solver's mixture (``league.meta_solver``; the Nash mixture by default),
        empty before the first."""
        ...

    def payoff(self) -> tuple[list[str], np.ndarray, np.ndarray]:
        """The evaluation payoff table over the frozen population: ``(ids, win_rates, games)``.

        ``win_rates[i, j]`` is ``ids[i]``'s mean outcome against ``ids[j]`` over both seat orders
        (draws half; ``W + W^T = 1``, diagonal 0.5, NaN where never played); ``games[i, j]`` the
        games behind it (exact payoffs count as ``evaluation.episodes_per_pair`` nominal games).
        The meta-solver reads this table (not the decayed training win rates of :meth:`win_rate`).
        """
        ...

    def steps_since_checkpoint(self, learner_id: str) -> int:
        """Agent steps the learner has trained since its last snapshot (or reset)."""
        ...


class TaskScheduler(ABC):
    """Base class of every scheduler (built-in or plugin).

    Subclasses set ``name`` and ``Config`` (a :class:`Section` with their own options) and
    implement the three methods. ``seed`` feeds the scheduler's own generator (``self.rng``),
    whose state is saved with the league so a resumed run makes the same choices.
    """

    name: ClassVar[str] = ""
    Config: ClassVar[type[Section]] = Section

    def __init__(self, config: Section, *, seed: int) -> None:
        if not isinstance(config, self.Config):
            raise TypeError(
                f"{type(self).__name__} needs a {self.Config.__name__}, got {type(config).__name__}"
            )
        self.config = config
        self.rng = np.random.default_rng(seed)

    @abstractmethod
    def learners(self) -> list[LearnerSetup]:
        """The learners of this league (called once at the start of a run)."""

    @abstractmethod
    def next_tasks(self, league: LeagueView) -> list[TrainingTask]:
        """The generation's training tasks, one per learner that trains."""

    @abstractmethod
    def after_training(self, league: LeagueView) -> GenerationDecisions:
        """Called after training (win rates include the generation's games): snapshot / reset."""

    @property
    def reads_history(self) -> bool:
        """Whether the scheduler draws archived members as opponents (the league then keeps the
        decayed win rates against them, which PFSP reads; forgotten otherwise)."""
        return False

    def metrics(self, league: LeagueView, results: Sequence[MatchResult]) -> dict[str, float]:
        """Scalars of the scheduler's own from the generation's training games (none by default),
        logged under their keys (e.g. ``exploiter/rolling_win_rate_vs_main``)."""
        return {}

    def state_dict(self) -> dict[str, Any]:
        """JSON-able scheduler state for resume (the generator state by default)."""
        return {"rng": self.rng.bit_generator.state}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.rng.bit_generator.state = state["rng"]
