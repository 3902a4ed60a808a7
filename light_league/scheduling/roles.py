"""League roles as objects: the :class:`Role` protocol, and the role table's plugin resolver.

A role decides four things for the learners that have it:

* ``opponents``: the opponent distribution of a generation (a :class:`Mixture`, built branch by
  branch, and the label of the weighting it used);
* ``ready_to_checkpoint``: whether the learner is frozen into the population now;
* ``reset_at_checkpoint``: whether (and from which weights) it restarts after that snapshot;
* ``metrics``: scalars of its own, logged every generation (e.g. the main exploiters' win rate
  against the main agents).

The league scheduler (:mod:`light_league.scheduling.alphastar`) holds a table of roles: the three
AlphaStar roles built in, and any number added under ``scheduler.roles`` in the config, each
named by a built-in role class, a ``package.module:ClassName`` or an entry point registered
under ``light_league.roles``. A role's label (its key in the table) is what members and
learners carry (:class:`~light_league.types.AgentType`); ``baseline`` is reserved.
docs/plugins.md walks through adding one.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np

from light_league.config_base import Section
from light_league.game_theory.pfsp import pfsp_probabilities
from light_league.scheduling.task_scheduler import LeagueView
from light_league.types import AgentRecord, AgentType, MatchResult, learner_role


@dataclass
class Mixture:
    """An opponent distribution built branch by branch, with notes on what each branch did.

    Beside each branch's mass and the fallbacks taken, it notes how the distribution differs from
    the league's meta-strategy: ``meta_mass[branch]``, the share of the meta-strategy's mass on the
    members a meta-weighted branch chose among (1.0: all of it), and ``excluded``, members left out
    of the candidates and why (``untrained``: a snapshot of untrained weights)."""

    probs: dict[str, float] = field(default_factory=dict)
    branches: dict[str, float] = field(default_factory=dict)
    fallbacks: list[str] = field(default_factory=list)
    meta_mass: dict[str, float] = field(default_factory=dict)
    excluded: dict[str, str] = field(default_factory=dict)

    def add(self, dist: dict[str, float], mass: float, branch: str) -> None:
        if mass <= 0.0:
            return
        for opponent, p in dist.items():
            if p > 0.0:
                self.probs[opponent] = self.probs.get(opponent, 0.0) + mass * p
        self.branches[branch] = self.branches.get(branch, 0.0) + mass

    def normalised(self) -> dict[str, float]:
        total = sum(self.probs.values())
        return {opponent: p / total for opponent, p in self.probs.items()}

    def info(self) -> dict[str, Any]:
        out: dict[str, Any] = {"branches": dict(self.branches), "fallbacks": list(self.fallbacks)}
        if self.meta_mass:
            out["meta_mass"] = dict(self.meta_mass)
        if self.excluded:
            out["excluded"] = dict(self.excluded)
        return out


@dataclass(frozen=True)
class Reset:
    """A reset after a snapshot: to the learner's initial weights (``source`` None) or to the
    current weights of learner ``source`` (with fresh optimisers)."""

    source: str | None = None


class Role(ABC):
    """What the learners of one league role play, when they are frozen and reset, and what is logged.

    Subclasses set ``Config`` (a :class:`Section` of the role's options, validated from the
    config) and implement :meth:`opponents` and :meth:`ready_to_checkpoint`; the other methods
    have defaults (never reset, no metrics, the scheduler's steps per generation). ``name`` is
    the role's label in the league table; ``initial_member`` says whether a learner's initial
    weights join the population before the first generation.
    """

    Config: ClassVar[type[Section]] = Section
    initial_member: ClassVar[bool] = False

    def __init__(self, name: str, config: Section) -> None:
        if not isinstance(config, self.Config):
            raise TypeError(
                f"{type(self).__name__} needs a {self.Config.__name__}, got {type(config).__name__}"
            )
        self.name = learner_role(name)
        self.config = config

    @abstractmethod
    def opponents(self, league: LeagueView, learner_id: str) -> tuple[Mixture, str]:
        """The generation's opponent distribution of ``learner_id`` and the weighting it used."""

    @abstractmethod
    def ready_to_checkpoint(self, league: LeagueView, learner_id: str) -> bool:
        """Called after training: freeze ``learner_id`` into the population now?"""

    def reset_at_checkpoint(
        self, league: LeagueView, learner_id: str, rng: np.random.Generator
    ) -> Reset | None:
        """Called after a snapshot: restart ``learner_id`` (a :class:`Reset`), or None to go on.
        ``rng`` is the scheduler's generator (saved with the league, so a resumed run agrees)."""
        return None

    def steps_per_generation(self) -> int | None:
        """Environment steps a learner of this role trains per generation (None: the scheduler's)."""
        return None

    def metrics(self, league: LeagueView, results: Sequence[MatchResult]) -> dict[str, float]:
        """Scalars of this role from the generation's training games (logged under their keys)."""
        return {}

    def learner_ids(self, league: LeagueView) -> list[str]:
        """The live learners of this role."""
        return [lid for lid, role in league.learners().items() if role == self.name]


# --------------------------------------------------------------------------------------------
# Helpers over the view, for roles
# --------------------------------------------------------------------------------------------


def trained(members: list[AgentRecord], mixture: Mixture | None = None) -> list[AgentRecord]:
    """``members`` without snapshots of untrained weights (a main agent's ``-v0``), unless only those
    exist: a learner gains nothing from games against the random network it started from, and the
    fixed baselines already stand for weak play. Those left out are noted in ``mixture.excluded``.

    Branches weighted by the meta-strategy alone (``meta``) do not use it: the meta-strategy
    decides, and in a game where an untrained network plays near the equilibrium (rock-paper-
    scissors) it is part of the equilibrium."""
    kept = [m for m in members if m.metadata.get("steps", 1) != 0]
    if not kept:
        return members
    if mixture is not None:
        mixture.excluded.update({m.agent_id: "untrained" for m in members if m not in kept})
    return kept


def main_agent_ids(league: LeagueView) -> list[str]:
    """The live main agents' learner ids (a ValueError when there is none)."""
    mains = [lid for lid, role in league.learners().items() if role == AgentType.MAIN_AGENT]
    if not mains:
        raise ValueError(
            f"the league scheduler needs at least one main agent among the learners, got {league.learners()}"
        )
    return mains


def history(members: list[AgentRecord], parent: str) -> list[AgentRecord]:
    """Snapshots of learner ``parent``, oldest first (``members`` is oldest first)."""
    return [m for m in members if m.parent == parent]


def win_rates(league: LeagueView, learner_id: str, candidates: list[AgentRecord]) -> np.ndarray:
    return np.array([league.win_rate(learner_id, c.agent_id) for c in candidates], dtype=np.float64)


def pfsp_distribution(candidates: list[AgentRecord], rates: np.ndarray, curve: str) -> dict[str, float]:
    probs = pfsp_probabilities(rates, curve)
    return {c.agent_id: float(p) for c, p in zip(candidates, probs)}
