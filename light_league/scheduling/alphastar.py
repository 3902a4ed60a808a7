"""AlphaStar league scheduler: main agents, main exploiters and league exploiters.

The rules follow the AlphaStar supplementary pseudocode (``multiagent.py``: ``MainPlayer``,
``MainExploiter``, ``LeagueExploiter``) and the paper's Methods ("Populating the league",
"Prioritised fictitious self-play"); docs/league.md lists every rule with its source and the
places where paper and pseudocode disagree.

AlphaStar samples an opponent per match with a few coin flips. Our framework samples opponents
per episode from one distribution per generation, so each role's rule is turned into the exact
mixture those coin flips produce: e.g. the main agent's distribution is
``0.5 * PFSP(all frozen) + 0.15 * verification + 0.35 * self-play``, where a verification branch
with no candidate puts its mass into self-play, as the pseudocode does.

Each role is a class (:class:`MainAgentRole`, :class:`MainExploiterRole`,
:class:`LeagueExploiterRole`, on :class:`~light_league.scheduling.roles.Role`); the scheduler holds
a table of them, to which ``scheduler.roles`` adds more (built-in classes, ``module:Class`` or
entry points of ``light_league.roles``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar, Literal, cast

import numpy as np
from pydantic import Field, field_validator, model_validator

from light_league.config_base import Section
from light_league.game_theory.pfsp import (
    OpponentWeighting,
    combine_weights,
    pfsp_probabilities,
    remove_monotonic_suffix,
)
from light_league.plugins import PluginKind, resolve, validate_options
from light_league.scheduling.roles import (
    Mixture,
    Reset,
    Role,
    history,
    main_agent_ids,
    pfsp_distribution,
    trained,
    win_rates,
)
from light_league.scheduling.task_scheduler import (
    GenerationDecisions,
    LeagueView,
    LearnerSetup,
    TaskScheduler,
    TrainingTask,
)
from light_league.types import AgentRecord, AgentType, MatchResult, learner_role

#: the weightings' former names (still read in a config): ``nash`` and ``pfsp_nash``
FORMER_WEIGHTINGS = {"nash": "meta", "pfsp_nash": "pfsp_meta"}
PFSPCurve = Literal["squared", "variance", "linear", "linear_capped"]
#: whom a role's PFSP draws from: the active set, or every member (the archive too)
OpponentPool = Literal["active", "history"]
ResetTarget = Literal["initial", "main_agent"]


# --------------------------------------------------------------------------------------------
# Config
# --------------------------------------------------------------------------------------------


class CheckpointRules(Section):
    """When a learner of a role is frozen into the population (pseudocode ``ready_to_checkpoint``),
    and how many steps it trains per generation."""

    steps_per_generation: int | None = Field(default=None, ge=1, le=10**12)
    """Environment steps a learner of this role trains per generation; ``None`` takes the
    scheduler's ``steps_per_generation``. Giving the main agents a larger share spends more of
    the machine on the agents the league exists to produce."""

    checkpoint_min_steps: int = Field(default=20_000, ge=1, le=10**13)
    """Steps (as counted by ``LeagueView.steps_since_checkpoint``) before a snapshot is considered;
    AlphaStar's 2e9 agent steps, scaled to our budgets."""
    checkpoint_max_steps: int = Field(default=40_000, ge=1, le=10**13)
    """Timeout: snapshot regardless of win rates once this many steps passed; AlphaStar's 4e9."""
    checkpoint_win_rate: float = Field(default=0.7, ge=0.0, le=1.0)
    """Snapshot early when every win rate against the role's targets exceeds this (AlphaStar: 0.7)."""
    opponents: OpponentPool = "active"
    """Whom the role's PFSP draws from: ``active`` (the active set, ``league.active_set``) or
    ``history`` (every member, the archived ones too; needs ``weighting: pfsp``, which the
    meta-strategy, solved over the active set, cannot give them). Verification and self-play
    stay on the active set; the main exploiter's curriculum draws its main agent's snapshots."""

    @field_validator("weighting", mode="before", check_fields=False)
    @classmethod
    def _former_weighting(cls, value: Any) -> Any:
        """``nash`` / ``pfsp_nash``: the former names of ``meta`` / ``pfsp_meta``."""
        return FORMER_WEIGHTINGS.get(value, value) if isinstance(value, str) else value

    @model_validator(mode="after")
    def _history_by_pfsp(self) -> CheckpointRules:
        """``opponents: history`` draws archived members: only ``weighting: pfsp`` can."""
        weighting = getattr(self, "weighting", "pfsp")
        if self.opponents == "history" and weighting != "pfsp":
            raise ValueError(
                f"opponents: history draws archived members, which the meta-strategy does not weigh "
                f"(weighting: {weighting} would never draw them); set weighting: pfsp"
            )
        return self

    @model_validator(mode="after")
    def _max_not_below_min(self) -> CheckpointRules:
        if self.checkpoint_max_steps < self.checkpoint_min_steps:
            raise ValueError(
                f"checkpoint_max_steps ({self.checkpoint_max_steps}) must be >= checkpoint_min_steps "
                f"({self.checkpoint_min_steps}); raise checkpoint_max_steps"
            )
        return self


class MainAgentRules(CheckpointRules):
    """Opponents and snapshots of a main agent (pseudocode ``MainPlayer``)."""

    weighting: OpponentWeighting = "pfsp_meta"
    """How the PFSP branch over all frozen players is weighted: pfsp | meta | pfsp_meta (the
    meta-strategy's weights alone, or times PFSP; ``nash`` / ``pfsp_nash``, their former names,
    are still read)."""
    pfsp_probability: float = Field(default=0.5, ge=0.0, le=1.0)
    """Share of matches drawn by squared PFSP from all frozen players (AlphaStar: 50%)."""
    verification_probability: float = Field(default=0.15, ge=0.0, le=1.0)
    """Share of matches against unbeaten exploiter snapshots or forgotten main snapshots (15%)."""
    exploiter_win_rate: float = Field(default=0.3, ge=0.0, le=1.0)
    """Verification plays past main-exploiter snapshots when the lowest win rate against them is below this."""
    forgotten_win_rate: float = Field(default=0.7, ge=0.0, le=1.0)
    """Verification plays forgotten main-lineage snapshots when the lowest win rate is below this."""
    self_play_win_rate: float = Field(default=0.3, ge=0.0, le=1.0)
    """Self-play against a main agent only above this win rate; else variance PFSP over its history."""

    @model_validator(mode="after")
    def _shares_fit(self) -> MainAgentRules:
        if self.pfsp_probability + self.verification_probability > 1.0:
            raise ValueError(
                f"pfsp_probability + verification_probability must be <= 1, got "
                f"{self.pfsp_probability} + {self.verification_probability}; lower one of them"
            )
        return self


class ResetRules(CheckpointRules):
    """Snapshot rules plus where a reset goes."""

    reset_to: ResetTarget = "initial"
    """What a reset restarts from: ``initial`` (the learner's initial weights; AlphaStar's reset
    to the supervised agent) or ``main_agent`` (a main agent's current weights, with fresh
    optimisers). Without a supervised starting point the initial weights are a random network
    that must relearn the game after every reset; from the main agent an exploiter starts as
    strong as its target and spends its steps on finding its weaknesses."""


class MainExploiterRules(ResetRules):
    """Opponents and snapshots of a main exploiter (pseudocode ``MainExploiter``)."""

    weighting: OpponentWeighting = "pfsp"
    """How the curriculum branch over a main agent's history is weighted: pfsp | meta | pfsp_meta."""
    main_win_rate: float = Field(default=0.1, ge=0.0, le=1.0)
    """Play the current main agent when the win rate against it exceeds this (pseudocode 0.1; paper text 0.2)."""
    curriculum_probability: float = Field(default=1.0, ge=0.0, le=1.0)
    """Chance that a struggling exploiter uses the curriculum instead of the main agent (pseudocode 1.0; paper 0.5)."""


class LeagueExploiterRules(ResetRules):
    """Opponents, snapshots and resets of a league exploiter (pseudocode ``LeagueExploiter``)."""

    weighting: OpponentWeighting = "pfsp_meta"
    """How PFSP over all frozen players is weighted: pfsp | meta | pfsp_meta."""
    pfsp_curve: PFSPCurve = "linear_capped"
    """PFSP curve over all frozen players (pseudocode: linear_capped; DI-engine uses squared)."""
    reset_probability: float = Field(default=0.25, ge=0.0, le=1.0)
    """Chance of a reset to the initial weights at each snapshot (AlphaStar: 25%)."""


class RoleEntry(Section):
    """A role added to the league table (``scheduler.roles.<label>``)."""

    kind: str
    """The role class: a built-in role (``main_agent``, ``main_exploiter``, ``league_exploiter``),
    ``package.module:ClassName`` or an entry point of the ``light_league.roles`` group."""
    count: int = Field(default=1, ge=0, le=64)
    """Number of learners with this role (ids ``<label>_0``, ``<label>_1``, ...)."""
    options: dict[str, Any] = Field(default_factory=dict)
    """Options of the role, validated by its class's ``Config``."""


class LeagueSchedulerConfig(Section):
    """AlphaStar league: learner counts, steps per generation and each role's rules."""

    main_agents: int = Field(default=1, ge=1, le=64)
    """Number of main agents (pseudocode default per race: 1)."""
    main_exploiters: int = Field(default=1, ge=0, le=64)
    """Number of main exploiters (pseudocode default per race: 1)."""
    league_exploiters: int = Field(default=2, ge=0, le=64)
    """Number of league exploiters (pseudocode default per race: 2; use 1 on a small CPU machine)."""
    steps_per_generation: int = Field(default=20_000, ge=1, le=10**12)
    """Environment steps each learner trains per generation."""
    main_agent: MainAgentRules = Field(default_factory=MainAgentRules)
    """Rules of the main agents."""
    main_exploiter: MainExploiterRules = Field(default_factory=MainExploiterRules)
    """Rules of the main exploiters."""
    league_exploiter: LeagueExploiterRules = Field(default_factory=LeagueExploiterRules)
    """Rules of the league exploiters."""
    roles: dict[str, RoleEntry] = Field(default_factory=dict)
    """Further roles, by label: ``{historical_exploiter: {kind: 'package.module:ClassName', count: 1,
    options: {...}}}``. ``kind`` names the role class (a built-in role, ``package.module:ClassName``
    or an entry point of the ``light_league.roles`` group), ``options`` its ``Config``. Labels
    are lower-case names; the built-in labels and ``baseline`` are taken."""

    @field_validator("roles")
    @classmethod
    def _labels_free(cls, value: dict[str, RoleEntry]) -> dict[str, RoleEntry]:
        for label in value:
            learner_role(label)  # a valid label, not ``baseline``
            if label in ROLES:
                raise ValueError(
                    f"role label {label!r} is a built-in role (configure it under scheduler.{label}); "
                    "give the added role another label"
                )
        return value


# --------------------------------------------------------------------------------------------
# The AlphaStar roles
# --------------------------------------------------------------------------------------------


class AlphaStarRole(Role):
    """A role with AlphaStar's snapshot rule (pseudocode ``ready_to_checkpoint``): after
    ``checkpoint_min_steps``, freeze when every win rate against the role's targets exceeds
    ``checkpoint_win_rate``, and regardless after ``checkpoint_max_steps``. Subclasses give the
    opponents, and may change the targets (:meth:`checkpoint_targets`) and the reset."""

    Config: ClassVar[type[Section]] = CheckpointRules
    config: CheckpointRules

    def steps_per_generation(self) -> int | None:
        return self.config.steps_per_generation

    def checkpoint_targets(self, league: LeagueView) -> list[str]:
        """Whom the learner must beat for an early snapshot: every member (main exploiters: the main agents)."""
        return [m.agent_id for m in league.members()]

    def ready_to_checkpoint(self, league: LeagueView, learner_id: str) -> bool:
        """Pseudocode ``ready_to_checkpoint``; an empty target set counts as beaten."""
        rules = self.config
        steps = league.steps_since_checkpoint(learner_id)
        if steps < rules.checkpoint_min_steps:
            return False
        if steps >= rules.checkpoint_max_steps:
            return True
        return all(
            league.win_rate(learner_id, t) > rules.checkpoint_win_rate
            for t in self.checkpoint_targets(league)
        )

    def frozen_distribution(
        self,
        league: LeagueView,
        learner_id: str,
        candidates: list[AgentRecord],
        curve: str,
        weighting: OpponentWeighting,
        *,
        mixture: Mixture | None = None,
        branch: str = "",
    ) -> tuple[dict[str, float], str]:
        """PFSP with ``curve`` over frozen ``candidates``, combined with the meta-strategy per
        ``weighting``; a weighting that reads the meta-strategy notes in ``mixture.meta_mass[branch]``
        the share of its mass the candidates hold."""
        rates = win_rates(league, learner_id, candidates)
        pfsp = pfsp_probabilities(rates, curve)
        meta = league.meta_strategy()
        meta_weights = np.array([meta.get(c.agent_id, 0.0) for c in candidates]) if meta else None
        probs, used = combine_weights(pfsp, meta_weights, weighting)
        if mixture is not None and meta_weights is not None and weighting != "pfsp":
            mixture.meta_mass[branch] = round(float(meta_weights.sum()), 6)
        return {c.agent_id: float(p) for c, p in zip(candidates, probs)}, used

    def frozen_players(
        self, league: LeagueView, weighting: OpponentWeighting, mixture: Mixture
    ) -> list[AgentRecord]:
        """The members a branch weighted by ``weighting`` chooses among: every member for ``meta``
        (the meta-strategy decides), the :func:`trained` ones otherwise; the active set's, or with
        ``opponents: history`` the whole history's (:meth:`LeagueView.all_members`)."""
        everyone = getattr(self.config, "opponents", "active") == "history"
        members = league.all_members() if everyone else league.members()
        return members if weighting == "meta" else trained(members, mixture)


class ResettingRole(AlphaStarRole):
    """An AlphaStar role whose learners may restart after a snapshot (``ResetRules.reset_to``)."""

    Config: ClassVar[type[Section]] = ResetRules
    config: ResetRules

    def resets(self, rng: np.random.Generator) -> bool:
        """Whether this snapshot resets the learner (always, unless a subclass says otherwise)."""
        return True

    def reset_at_checkpoint(
        self, league: LeagueView, learner_id: str, rng: np.random.Generator
    ) -> Reset | None:
        if not self.resets(rng):
            return None
        if self.config.reset_to == "main_agent":
            mains = main_agent_ids(league)
            return Reset(source=mains[int(rng.integers(len(mains)))])
        return Reset()


class MainAgentRole(AlphaStarRole):
    """Pseudocode ``MainPlayer``: PFSP over everyone, verification, self-play; never reset."""

    Config: ClassVar[type[Section]] = MainAgentRules
    config: MainAgentRules
    initial_member: ClassVar[bool] = True

    def opponents(self, league: LeagueView, learner_id: str) -> tuple[Mixture, str]:
        rules = self.config
        mixture = Mixture()
        members = trained(league.members())  # the verification and self-play branches' (PFSP)
        self_play_share = 1.0 - rules.pfsp_probability - rules.verification_probability
        if members:
            dist, weighting = self.frozen_distribution(
                league,
                learner_id,
                self.frozen_players(league, rules.weighting, mixture),
                "squared",
                rules.weighting,
                mixture=mixture,
                branch="pfsp",
            )
            mixture.add(dist, rules.pfsp_probability, "pfsp")
        else:
            weighting = "self_play(fallback:no_frozen_players)"
            mixture.fallbacks.append("pfsp->self_play:no_frozen_players")
            self_play_share += rules.pfsp_probability
        mains = main_agent_ids(league)
        for opponent in mains:
            verification = self._verification(league, learner_id, opponent, members)
            verification_mass = rules.verification_probability / len(mains)
            self_play_mass = self_play_share / len(mains)
            if verification is not None:
                mixture.add(verification, verification_mass, "verification")
            elif verification_mass > 0.0:
                mixture.fallbacks.append(f"verification->self_play:{opponent}")
                self_play_mass += verification_mass
            self_play = self._self_play(league, learner_id, opponent, members, mixture)
            mixture.add(self_play, self_play_mass, "self_play")
        return mixture, weighting

    def _verification(
        self, league: LeagueView, learner_id: str, opponent: str, members: list[AgentRecord]
    ) -> dict[str, float] | None:
        """Pseudocode ``_verification_branch``: unbeaten exploiter snapshots, then forgotten ones."""
        rules = self.config
        exploiter_ids = {lid for lid, role in league.learners().items() if role == AgentType.MAIN_EXPLOITER}
        exploiters = [
            m for m in members if m.agent_type == AgentType.MAIN_EXPLOITER or m.parent in exploiter_ids
        ]
        rates = win_rates(league, learner_id, exploiters)
        if exploiters and rates.min() < rules.exploiter_win_rate:
            return pfsp_distribution(exploiters, rates, "squared")
        past = history(members, opponent)
        rates = win_rates(league, learner_id, past)
        keep = remove_monotonic_suffix(rates.tolist())
        if keep and rates[:keep].min() < rules.forgotten_win_rate:
            return pfsp_distribution(past[:keep], rates[:keep], "squared")
        return None

    def _self_play(
        self,
        league: LeagueView,
        learner_id: str,
        opponent: str,
        members: list[AgentRecord],
        mixture: Mixture,
    ) -> dict[str, float]:
        """Pseudocode ``_selfplay_branch``: the current main agent, or a curriculum over its history.

        Against itself the win rate is 0.5 by definition (DI-engine notes the same), so a single
        main agent always plays itself here.
        """
        if opponent == learner_id or league.win_rate(learner_id, opponent) > self.config.self_play_win_rate:
            return {opponent: 1.0}
        past = history(members, opponent)
        if not past:
            mixture.fallbacks.append(f"curriculum->current:{opponent}:no_history")
            return {opponent: 1.0}
        return pfsp_distribution(past, win_rates(league, learner_id, past), "variance")


class MainExploiterRole(ResettingRole):
    """Pseudocode ``MainExploiter``: the current main agents (or a curriculum over their history);
    frozen when it beats the main agents, and then reset."""

    Config: ClassVar[type[Section]] = MainExploiterRules
    config: MainExploiterRules

    def opponents(self, league: LeagueView, learner_id: str) -> tuple[Mixture, str]:
        rules = self.config
        mixture = Mixture()
        weighting = "current_main"
        members = self.frozen_players(league, rules.weighting, mixture)
        mains = main_agent_ids(league)
        for main in mains:
            share = 1.0 / len(mains)
            past = history(members, main)
            if league.win_rate(learner_id, main) > rules.main_win_rate:
                mixture.add({main: 1.0}, share, "current_main")
            elif not past:
                mixture.fallbacks.append(f"curriculum->current:{main}:no_history")
                mixture.add({main: 1.0}, share, "current_main")
            else:
                dist, weighting = self.frozen_distribution(
                    league,
                    learner_id,
                    past,
                    "variance",
                    rules.weighting,
                    mixture=mixture,
                    branch="curriculum",
                )
                mixture.add(dist, share * rules.curriculum_probability, "curriculum")
                mixture.add({main: 1.0}, share * (1.0 - rules.curriculum_probability), "current_main")
        return mixture, weighting

    def checkpoint_targets(self, league: LeagueView) -> list[str]:
        return main_agent_ids(league)

    def metrics(self, league: LeagueView, results: Sequence[MatchResult]) -> dict[str, float]:
        """``exploiter/rolling_win_rate_vs_main``, every generation: the decayed win rate against the
        current main agents that the snapshot rule and ``main_win_rate`` read (it stays put while
        the exploiters play only the history); ``exploiter/win_rate_vs_main_lineage``: the mean
        outcome of this generation's games against the main agents and their snapshots."""
        mine, mains = self.learner_ids(league), main_agent_ids(league)
        lineage = {*mains, *(m.agent_id for m in league.members() if m.parent in mains)}
        outs = [r.outcome for r in results if r.player_id in mine and r.opponent_id in lineage]
        rates = [league.win_rate(learner, main) for learner in mine for main in mains]
        return {
            **({"exploiter/rolling_win_rate_vs_main": float(np.mean(rates))} if rates else {}),
            **({"exploiter/win_rate_vs_main_lineage": float(np.mean(outs))} if outs else {}),
        }


class LeagueExploiterRole(ResettingRole):
    """Pseudocode ``LeagueExploiter``: PFSP over everyone; reset with ``reset_probability`` at a snapshot."""

    Config: ClassVar[type[Section]] = LeagueExploiterRules
    config: LeagueExploiterRules

    def opponents(self, league: LeagueView, learner_id: str) -> tuple[Mixture, str]:
        rules = self.config
        mixture = Mixture()
        members = self.frozen_players(league, rules.weighting, mixture)
        if members:
            dist, weighting = self.frozen_distribution(
                league, learner_id, members, rules.pfsp_curve, rules.weighting, mixture=mixture, branch="pfsp"
            )
            mixture.add(dist, 1.0, "pfsp")
            return mixture, weighting
        mains = main_agent_ids(league)
        mixture.fallbacks.append("pfsp->current_main:no_frozen_players")
        mixture.add({main: 1.0 / len(mains) for main in mains}, 1.0, "current_main")
        return mixture, "current_main(fallback:no_frozen_players)"

    def resets(self, rng: np.random.Generator) -> bool:
        return bool(rng.random() < self.config.reset_probability)


#: the built-in role classes, by the name a ``scheduler.roles.<label>.kind`` may use
ROLES: dict[str, type[Role]] = {
    "main_agent": MainAgentRole,
    "main_exploiter": MainExploiterRole,
    "league_exploiter": LeagueExploiterRole,
}

#: entry-point group under which installed packages register league roles
ROLE_ENTRY_POINT_GROUP = "light_league.roles"

ROLE_PLUGINS = PluginKind(
    label="league role",
    builtins=ROLES,
    group=ROLE_ENTRY_POINT_GROUP,
    base=Role,
    base_path="light_league.scheduling.roles.Role",
    implement="opponents, ready_to_checkpoint",
)


def resolve_role(kind: str) -> type[Role]:
    """The role class named ``kind`` (built-in, ``module:Class`` or entry point)."""
    return cast(type[Role], resolve(ROLE_PLUGINS, kind))


# --------------------------------------------------------------------------------------------
# Scheduler
# --------------------------------------------------------------------------------------------


class LeagueScheduler(TaskScheduler):
    """AlphaStar's league: a table of roles (main agents, main exploiters, league exploiters and
    any added under ``scheduler.roles``) and how many learners each has."""

    name: ClassVar[str] = "league"
    Config: ClassVar[type[Section]] = LeagueSchedulerConfig
    config: LeagueSchedulerConfig

    def __init__(self, config: Section, *, seed: int) -> None:
        super().__init__(config, seed=seed)
        c = self.config
        #: label -> (role, number of learners), in the order the learners are created
        self.roles: dict[str, tuple[Role, int]] = {
            "main_agent": (MainAgentRole("main_agent", c.main_agent), c.main_agents),
            "main_exploiter": (MainExploiterRole("main_exploiter", c.main_exploiter), c.main_exploiters),
            "league_exploiter": (
                LeagueExploiterRole("league_exploiter", c.league_exploiter),
                c.league_exploiters,
            ),
        }
        for label, entry in c.roles.items():
            cls = resolve_role(entry.kind)
            options = validate_options(cls.Config, entry.options, path=f"scheduler.roles.{label}.options")
            self.roles[label] = (cls(label, options), entry.count)
        self.snapshot_counts: dict[str, int] = {}
        self.reset_counts: dict[str, int] = {}

    @property
    def reads_history(self) -> bool:
        """Whether a role draws opponents from the whole history (``opponents: history``)."""
        return any(
            getattr(role.config, "opponents", "active") == "history" for role, _ in self.roles.values()
        )

    def role(self, label: str, learner_id: str) -> Role:
        """The role object of ``label`` (a ValueError naming the learner when the table has none)."""
        if label not in self.roles:
            raise ValueError(
                f"league scheduler has no role {label!r} (learner {learner_id!r}); its roles: {', '.join(self.roles)}"
            )
        return self.roles[label][0]

    # ---- setup ------------------------------------------------------------------------------

    def learners(self) -> list[LearnerSetup]:
        return [
            LearnerSetup(f"{label}_{i}", role.name, initial_member=role.initial_member)
            for label, (role, n) in self.roles.items()
            for i in range(n)
        ]

    # ---- planning ---------------------------------------------------------------------------

    def next_tasks(self, league: LeagueView) -> list[TrainingTask]:
        tasks = []
        for learner_id, label in league.learners().items():
            role = self.role(label, learner_id)
            mixture, weighting = role.opponents(league, learner_id)
            tasks.append(
                TrainingTask(
                    learner_id=learner_id,
                    role=label,
                    opponents=mixture.normalised(),
                    env_steps=role.steps_per_generation() or self.config.steps_per_generation,
                    weighting=weighting,
                    info=mixture.info(),
                )
            )
        return tasks

    # ---- snapshots and resets ---------------------------------------------------------------

    def after_training(self, league: LeagueView) -> GenerationDecisions:
        decisions = GenerationDecisions()
        for learner_id, label in sorted(league.learners().items()):
            role = self.role(label, learner_id)
            if not role.ready_to_checkpoint(league, learner_id):
                continue
            decisions.snapshot.append(learner_id)
            self.snapshot_counts[learner_id] = self.snapshot_counts.get(learner_id, 0) + 1
            reset = role.reset_at_checkpoint(league, learner_id, self.rng)
            if reset is not None:
                decisions.reset.append(learner_id)
                if reset.source is not None:
                    decisions.reset_from[learner_id] = reset.source
                self.reset_counts[learner_id] = self.reset_counts.get(learner_id, 0) + 1
        return decisions

    def metrics(self, league: LeagueView, results: Sequence[MatchResult]) -> dict[str, float]:
        out: dict[str, float] = {}
        for role, _ in self.roles.values():
            out.update(role.metrics(league, results))
        return out

    # ---- resume -----------------------------------------------------------------------------

    def state_dict(self) -> dict[str, Any]:
        state = super().state_dict()
        state["snapshot_counts"] = dict(self.snapshot_counts)
        state["reset_counts"] = dict(self.reset_counts)
        return state

    def load_state_dict(self, state: dict[str, Any]) -> None:
        super().load_state_dict(state)
        self.snapshot_counts = {k: int(v) for k, v in state.get("snapshot_counts", {}).items()}
        self.reset_counts = {k: int(v) for k, v in state.get("reset_counts", {}).items()}
